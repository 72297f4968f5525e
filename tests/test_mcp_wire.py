"""What the MCP server says about itself: scoperag's name and version, all four tool hints on
every tool, output schemas that reuse their definitions, and a `tools/list` of at most 64 KB
with every profile enabled."""

from __future__ import annotations

import json
from importlib.metadata import version
from typing import Any

import pytest
from fastmcp import Client

from scoperag.core.config.settings import Settings
from scoperag.server.mcp.app import build_server
from scoperag.server.profiles import declarations
from scoperag.server.runtime import Runtime

HINTS = {"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
MOST_BYTES = 64 * 1024


@pytest.fixture(scope="module")
async def listed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, list[dict[str, Any]]]:
    """The initialize answer's server info and the `tools/list` answer, every profile on."""
    profiles = [profile.name for profile in declarations()]
    runtime = Runtime(Settings(data_dir=tmp_path_factory.mktemp("wire"), profiles=profiles))
    async with Client(build_server(runtime)) as client:
        info = client.server_info
        tools = (await client.session.list_tools()).model_dump(
            mode="json", by_alias=True, exclude_none=True
        )["tools"]
    runtime.close()
    return info, tools


async def test_server_info_is_scoperags_name_and_version(listed) -> None:
    info, _ = listed
    assert (info.name, info.version) == ("scoperag", version("scoperag"))


async def test_every_tool_states_all_four_hints(listed) -> None:
    _, tools = listed
    assert len(tools) > 20
    for tool in tools:
        assert set(tool["annotations"]) >= HINTS, tool["name"]
        if tool["annotations"]["readOnlyHint"]:
            assert not tool["annotations"]["destructiveHint"], tool["name"]
            assert tool["annotations"]["idempotentHint"], tool["name"]


async def test_tools_list_is_at_most_64_kb_and_reuses_definitions(listed) -> None:
    _, tools = listed
    sent = json.dumps({"tools": tools}, ensure_ascii=False, separators=(",", ":")).encode()
    assert len(sent) <= MOST_BYTES, len(sent)
    find = next(tool for tool in tools if tool["name"] == "qdrant-find")
    schema = find["outputSchema"]
    assert schema["properties"]["hits"]["items"] == {"$ref": "#/$defs/PageHit"}
    assert "PageHit" in schema["$defs"]
