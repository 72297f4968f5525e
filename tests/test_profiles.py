"""Each profile's one declaration: what it names exists, and the server, the Python API and the
data commands agree with it."""

from __future__ import annotations

import importlib

import pytest
from fastmcp import Client

from scoperag.core.config.settings import Settings
from scoperag.core.contracts import profile_names
from scoperag.server.mcp.app import build_server
from scoperag.server.profiles import declarations, resolve_profile
from scoperag.server.runtime import Runtime
from scoperag.server.samples import SAMPLES


def test_every_profile_found_has_one_declaration_and_one_contract() -> None:
    """The declarations found (server) and the contracts found (core) name the same profiles,
    and the declared order is the one the tools are listed in."""
    found = [profile.name for profile in declarations()]
    assert found == ["pdf", "books", "memory", "dnd", "docs"]
    assert sorted(found) == profile_names() == sorted(Settings().profiles)


@pytest.mark.parametrize("profile", declarations(), ids=lambda profile: profile.name)
async def test_the_python_methods_are_exactly_the_profiles_tools(profile, tmp_path) -> None:
    """Each tool the profile serves is a method of its Python object, and no method names a
    tool it does not serve."""
    runtime = Runtime(Settings(data_dir=tmp_path, profiles=[profile.name]))
    try:
        async with Client(build_server(runtime)) as client:
            served = {tool.name for tool in await client.list_tools()}
    finally:
        runtime.close()
    assert set(profile.methods.values()) == served


@pytest.mark.parametrize("profile", declarations(), ids=lambda profile: profile.name)
def test_the_declared_sample_and_modules_exist(profile) -> None:
    assert (SAMPLES / profile.sample.path).exists()
    assert "{path}" in profile.sample.command
    for module in (profile.tools, profile.commands, profile.http):
        if module:
            importlib.import_module(module)


def test_a_profile_is_named_by_its_name_aliases_and_collection() -> None:
    settings = Settings()
    collections = {profile.name: profile.collection(settings) for profile in declarations()}
    for profile in declarations():
        for given in (profile.name, *profile.aliases, collections[profile.name]):
            assert resolve_profile(given, collections) == profile.name
    assert resolve_profile("nope", collections) is None
