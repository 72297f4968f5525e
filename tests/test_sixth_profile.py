"""A profile is one folder, one pipeline and one contract: a sixth profile shipped in a package
of its own (`tests/sixth_profile/notes_profile`, made installed here by a `dist-info` with its
two entry points) is served over MCP, listed, searched from the CLI and present in the Python
API, with no file of scoperag edited."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = Path(__file__).with_name("sixth_profile") / "notes_profile"
ENTRY_POINTS = """[scoperag.profiles]
notes = notes_profile

[scoperag.contracts]
notes = notes_profile.contract
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An environment in which the notes package is installed, and a data dir of notes."""
    site = tmp_path_factory.mktemp("site")
    shutil.copytree(PLUGIN, site / "notes_profile")
    info = site / "notes_profile-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: notes-profile\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return {
        **os.environ,
        "PYTHONPATH": str(site),
        "SCOPERAG_DATA_DIR": str(tmp_path_factory.mktemp("data")),
        "SCOPERAG_ALLOWED_DIRS": str(site),
    }


def _scoperag(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "scoperag", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def ingested(env: dict[str, str]) -> dict[str, str]:
    done = _scoperag(env, "ingest", "notes", str(PLUGIN / "sample.txt"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "5 notes ingested"
    return env


def test_nothing_in_scoperag_names_the_sixth_profile() -> None:
    folders = ["core", "pipelines", "retrievers", "postprocessors", "server", "scoperag"]
    sources = [path for folder in folders for path in (ROOT / folder).rglob("*.py")]
    assert len(sources) > 150
    named = [p for p in sources if {"notes_profile", "search_notes"} & set(p.read_text().split())]
    assert named == []


def test_the_settings_accept_it_only_where_it_is_installed(env: dict[str, str]) -> None:
    with_it = _scoperag({**env, "SCOPERAG_PROFILES": "notes"}, "config")
    assert with_it.returncode == 0, with_it.stderr
    assert json.loads(with_it.stdout)["profiles"] == ["notes"]
    without = {**env, "PYTHONPATH": "", "SCOPERAG_PROFILES": "notes"}
    refused = _scoperag(without, "config")
    assert refused.returncode != 0
    assert "SCOPERAG_PROFILES='notes': unknown profile(s) notes" in refused.stderr


def test_listed_by_scoperag_list(ingested: dict[str, str]) -> None:
    listed = _scoperag(ingested, "list", "notes", "--json")
    assert listed.returncode == 0, listed.stderr
    (notes,) = json.loads(listed.stdout)["profiles"]
    assert (notes["profile"], notes["collection"], notes["points"]) == ("notes", "notes", 5)
    assert notes["groups"] == {"topics": {"garden": 2, "kitchen": 2, "travel": 1}}
    everything = _scoperag(ingested, "list", "--json")
    assert [p["profile"] for p in json.loads(everything.stdout)["profiles"]][-1] == "notes"


def test_searchable_from_scoperag_search(ingested: dict[str, str]) -> None:
    found = _scoperag(ingested, "search", "notes", "tomatoes", "--topic", "kitchen", "--json")
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["hits"]
    assert [hit["topic"] for hit in hits] == ["kitchen", "kitchen"]
    assert hits[0]["text"] == "Sharpen the chef's knife before slicing tomatoes."


def test_its_hits_listed_readably_without_a_declared_source(ingested: dict[str, str]) -> None:
    """A profile that declares no `source` shows each hit's short fields as its source."""
    found = _scoperag(ingested, "search", "notes", "tomatoes", "--topic", "kitchen")
    assert found.returncode == 0, found.stderr
    head, text = found.stdout.splitlines()[:2]
    assert head.startswith("1. score ") and "topic kitchen · line " in head
    assert text == "   Sharpen the chef's knife before slicing tomatoes."


async def test_served_over_mcp(ingested: dict[str, str]) -> None:
    script = shutil.which("scoperag", path=str(Path(sys.executable).parent))
    assert script, "the scoperag console script is not installed"
    transport = StdioTransport(command=script, args=["serve"], env=ingested, keep_alive=False)
    async with Client(transport) as client:
        names = [tool.name for tool in await client.list_tools()]
        assert names[0] == "qdrant-find" and names[-2:] == ["search_notes", "ingest_notes"]
        result = await client.call_tool("search_notes", {"query": "night train", "limit": 1})
        (hit,) = result.structured_content["hits"]
        assert (hit["topic"], hit["line"]) == ("travel", 5)
        refused = await client.call_tool(
            "search_notes", {"query": "x", "topic": 3}, raise_on_error=False
        )
        assert refused.is_error and "topic" in refused.content[0].text


def test_present_in_the_python_api(ingested: dict[str, str]) -> None:
    script = (
        "import json, scoperag\n"
        "with scoperag.Store(progress=False) as store:\n"
        "    assert 'notes' in dir(store)\n"
        "    result = store.notes.search('roses', topic='garden', limit=1)\n"
        "    nodes = store.notes.retriever(topic='garden').retrieve('tomatoes')\n"
        "    sample = str(scoperag.sample('notes'))\n"
        "    print(json.dumps([result.hits[0].text, nodes[0].text, sample]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=ingested, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    searched, retrieved, sample = json.loads(done.stdout)
    assert searched == "Prune the roses after the first frost."
    assert retrieved == "The tomatoes need water every morning in July."
    assert Path(sample).name == "sample.txt"
