"""A store a killed process left (half-made segment folders) is served whole, through the CLI
and MCP, and `scoperag check` says what the engine recovered from instead of calling it damage."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastmcp import Client

from scoperag.core.config.settings import Settings
from scoperag.core.embedding.embedders import Embedder
from scoperag.server.cli.main import cli
from scoperag.server.mcp.app import build_server
from scoperag.server.runtime import Runtime

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evals"))
from damage_cases import RECOVERED  # noqa: E402

TEXTS = [f"Deploy note {n}: the release train leaves on day {n}." for n in range(12)]


def memory_runtime(data_dir: Path, embedder: Embedder) -> Runtime:
    settings = Settings(data_dir=data_dir, backend="edge", profiles=["memory"])
    return Runtime(settings, embedder=embedder)


async def call(runtime: Runtime, tool: str, **arguments: Any) -> dict[str, Any]:
    async with Client(build_server(runtime)) as client:
        result = await client.call_tool(tool, arguments)
    return result.structured_content


async def stored_store(data_dir: Path, embedder: Embedder) -> None:
    runtime = memory_runtime(data_dir, embedder)
    try:
        for text in TEXTS:
            await call(runtime, "store_memory", content=text, tags="ops")
    finally:
        runtime.close()


@pytest.mark.parametrize("state", list(RECOVERED))
def test_check_reports_what_was_recovered_and_every_memory_is_served(
    state: str,
    embedder: Embedder,
    cli_with_shared_model: CliRunner,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data_dir = tmp_path / "data"
    asyncio.run(stored_store(data_dir, embedder))
    RECOVERED[state](data_dir / "edge" / "memories" / "shard")
    monkeypatch.setenv("SCOPERAG_DATA_DIR", str(data_dir))
    monkeypatch.setenv("SCOPERAG_PROFILES", "memory")
    checked = cli_with_shared_model.invoke(cli, ["check", "--json"])
    report = json.loads(checked.output)
    [memories] = report["collections"]
    assert memories["recovered"], report  # the subject ran: a half-made folder was seen
    assert "half-made segment" in memories["recovered"][0]
    assert checked.exit_code == 0 and report["ok"] is True, report
    assert memories["points"] == len(TEXTS)
    assert "backup" not in checked.output and "scoperag delete" not in checked.output
    runtime = memory_runtime(data_dir, embedder)
    try:
        found = asyncio.run(call(runtime, "search", query="release train", page_size=50))
    finally:
        runtime.close()
    assert len(found["memories"]) == len(TEXTS)
    listed = cli_with_shared_model.invoke(cli, ["search", "memory", "release train"])
    assert listed.exit_code == 0 and "Deploy note" in listed.output
