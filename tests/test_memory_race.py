"""Two `scoperag serve` stdio servers on one data dir update and merge the same memory at once:
each time one wins, the other gets a conflict naming the memory's current version, and the
history stays a single line (every version supersedes exactly the one before it)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from qdrant_client import models

from scoperag.core.config.settings import Settings
from scoperag.core.contracts.memory import COLLECTION
from scoperag.core.errors import ConflictError
from scoperag.server.runtime import Runtime

ROUNDS = 6


def _server(data_dir: Path) -> Client:
    script = shutil.which("scoperag", path=str(Path(sys.executable).parent))
    assert script, "the scoperag console script is not installed"
    env = {**os.environ, "SCOPERAG_DATA_DIR": str(data_dir), "SCOPERAG_PROFILES": "memory"}
    return Client(StdioTransport(script, ["serve"], env=env, keep_alive=False), timeout=120)


async def _race(clients: list[Client], tool: str, arguments: list[dict[str, Any]]) -> list[Any]:
    """Each client calls `tool` with its arguments at the same moment; their results."""
    results: list[Any] = [None] * len(clients)
    start = anyio.Event()

    async def one(index: int) -> None:
        await start.wait()
        results[index] = await clients[index].call_tool(
            tool, arguments[index], raise_on_error=False
        )

    async with anyio.create_task_group() as group:
        for index in range(len(clients)):
            group.start_soon(one, index)
        await anyio.sleep(0.2)
        start.set()
    return results


def _winner(results: list[Any], version: int) -> dict[str, Any]:
    """The one successful result; the other is a conflict naming the current version."""
    won = [r.structured_content for r in results if not r.is_error]
    lost = [r.content[0].text for r in results if r.is_error]
    assert len(won) == 1 and len(lost) == 1, (won, lost)
    assert won[0]["version"] == version
    assert f"current version is {version} ({won[0]['content_hash']})" in lost[0], lost[0]
    return won[0]


def _conflict_crosses_the_socket(data_dir: Path, superseded: str) -> None:
    """A lost `write_if` of a process attached to the owner is a `ConflictError` here too."""
    runtime = Runtime(Settings(data_dir=data_dir, profiles=["memory"]))
    try:
        assert runtime.backend.role == "attached"
        current = models.Filter(
            must=[
                models.FieldCondition(
                    key="content_hash", match=models.MatchValue(value=superseded)
                ),
                models.IsEmptyCondition(is_empty=models.PayloadField(key="superseded_by")),
            ]
        )
        with pytest.raises(ConflictError, match="0 points of 'memories'"):
            runtime.backend.write_if(COLLECTION, current, 1, [], {})
    finally:
        runtime.close()


async def test_two_servers_racing_never_fork_a_history(tmp_path: Path) -> None:
    data_dir = tmp_path / "shared"
    clients = [_server(data_dir), _server(data_dir)]
    async with clients[0], clients[1]:
        first = await clients[0].call_tool("store_memory", {"content": "Round 0."})
        current = first.structured_content["content_hash"]
        line = [current]
        for n in range(1, ROUNDS + 1):
            arguments = [
                {"content_hash": current, "content": f"Round {n} by server {i}."} for i in (0, 1)
            ]
            won = _winner(await _race(clients, "update_memory", arguments), n + 1)
            assert won["supersedes"] == [current]
            current = won["content_hash"]
            line.append(current)
        others = []
        for i in (0, 1):
            other = await clients[i].call_tool("store_memory", {"content": f"Other {i}."})
            others.append(other.structured_content["content_hash"])
        arguments = [{"content_hashes": [current, others[i]]} for i in (0, 1)]
        merged = _winner(await _race(clients, "merge_memories", arguments), ROUNDS + 2)
        line.append(merged["content_hash"])
        history = await clients[1].call_tool("memory_history", {"content_hash": line[0]})
        _conflict_crosses_the_socket(data_dir, line[0])
    versions = history.structured_content["versions"]
    assert [row["content_hash"] for row in versions] == line
    assert [row["version"] for row in versions] == list(range(1, ROUNDS + 3))
    for before, after in zip(versions, versions[1:], strict=False):
        assert before["superseded_by"] == after["content_hash"]
        assert before["content_hash"] in after["supersedes"]
    assert versions[-1]["superseded_by"] is None
