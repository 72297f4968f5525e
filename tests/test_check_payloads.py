"""One record never breaks a search: a stored memory whose payload fails its model is left out
of results with a note and reported by `scoperag check` with its id; `check` also finds a
collection whose recorded embedder does not match its vectors. Real Qdrant Edge stores, the CLI
and MCP (in-process FastMCP client)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastmcp import Client

from scoperag.core.config.settings import Settings
from scoperag.core.contracts.memory import COLLECTION
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.engine.collection_embedder import EMBEDDER_KEY
from scoperag.pipelines.memories import memory_id
from scoperag.server.cli.main import cli
from scoperag.server.mcp.app import build_server
from scoperag.server.runtime import Runtime

TEXTS = ["Standups are at nine.", "Standups moved to ten on Fridays.", "Retros are monthly."]


async def call(runtime: Runtime, tool: str, **arguments: Any) -> dict[str, Any]:
    async with Client(build_server(runtime)) as client:
        result = await client.call_tool(tool, arguments)
    return result.structured_content


@pytest.fixture
def damaged_store(embedder: Embedder, tmp_path: Path) -> tuple[Path, str]:
    """Three memories, one of them with a `version` that is not a number; its point id."""
    data_dir = tmp_path / "data"
    runtime = Runtime(Settings(data_dir=data_dir, profiles=["memory"]), embedder=embedder)
    try:
        stored = [asyncio.run(call(runtime, "store_memory", content=t)) for t in TEXTS]
        bad = memory_id(stored[1]["content_hash"])
        runtime.backend.set_payload(COLLECTION, bad, {"version": "two"})
        history = asyncio.run(
            call(runtime, "memory_history", content_hash=stored[1]["content_hash"])
        )
    finally:
        runtime.close()
    assert history["versions"] == [] and "1 versions could not be read" in history["note"]
    return data_dir, str(bad)


def test_a_bad_payload_is_left_out_of_searches_and_reported_by_check(
    damaged_store: tuple[Path, str],
    embedder: Embedder,
    cli_with_shared_model: CliRunner,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data_dir, bad = damaged_store
    runtime = Runtime(Settings(data_dir=data_dir, profiles=["memory"]), embedder=embedder)
    try:
        ranked = asyncio.run(call(runtime, "search", query="when are standups"))
        newest = asyncio.run(call(runtime, "search"))
        explained = asyncio.run(call(runtime, "search", query="standups", explain=True))
    finally:
        runtime.close()
    for found in (ranked, newest, explained):
        contents = [row["content"] for row in found["memories"]]
        assert "Standups are at nine." in contents and TEXTS[1] not in contents, found
        assert f"could not be read and were left out (points {bad})" in found["note"]
    monkeypatch.setenv("SCOPERAG_DATA_DIR", str(data_dir))
    monkeypatch.setenv("SCOPERAG_PROFILES", "memory")
    checked = cli_with_shared_model.invoke(cli, ["check", "--json"])
    report = json.loads(checked.output)
    assert checked.exit_code == 1 and report["ok"] is False
    [memories] = report["collections"]
    [problem] = memories["problems"]
    assert problem.startswith(f"point {bad}: payload 'version'") and "searches skip it" in problem


def test_check_finds_a_recorded_embedder_that_does_not_match_the_vectors(
    damaged_store: tuple[Path, str],
    cli_with_shared_model: CliRunner,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from scoperag.core.engine.edge.backend import EdgeBackend

    data_dir, _ = damaged_store
    backend = EdgeBackend.open(data_dir / "edge")
    try:
        recorded = backend.collection_metadata(COLLECTION)[EMBEDDER_KEY]
        wrong = {**recorded, "dimension": 512}
        backend.update_collection_metadata(COLLECTION, {EMBEDDER_KEY: wrong})
    finally:
        backend.close()
    monkeypatch.setenv("SCOPERAG_DATA_DIR", str(data_dir))
    monkeypatch.setenv("SCOPERAG_PROFILES", "memory")
    checked = cli_with_shared_model.invoke(cli, ["check", "--json"])
    problems = json.loads(checked.output)["collections"][0]["problems"]
    assert checked.exit_code == 1
    assert any("(512-d), but its vectors have 384 dimensions" in p for p in problems), problems
