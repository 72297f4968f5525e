"""evals/peer_memory.py: its scoperag calls stay valid, and it fails clearly without the peer.

The peer (mcp-memory-service) is not installed in CI; what can be checked here is the script's
own side: every scenario's `search` arguments are accepted by the real tool and find memories,
and a missing peer venv is an exit with the commands that create it, not a traceback.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from fastmcp import Client
from fastmcp.client.transports import StdioTransport

from scoperag.pipelines.memories import make_memory, store_memories
from scoperag.server.mcp.app import build_server
from scoperag.server.runtime import Runtime

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "evals"))

from peer_memory import SCENARIOS, arguments  # noqa: E402
from peer_sides import FLOOR, Side  # noqa: E402


def test_missing_peer_venv_exits_with_the_commands_that_create_it(tmp_path: Path) -> None:
    missing = tmp_path / "no-venv"
    run = subprocess.run(
        [sys.executable, "evals/peer_memory.py", "--peer-venv", str(missing)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 1
    assert f"No usable mcp-memory-service venv at {missing}" in run.stderr
    assert f"{missing}/bin/pip install 'mcp-memory-service[sqlite]'" in run.stderr
    assert "Traceback" not in run.stderr


async def test_every_scenario_is_a_valid_search_that_finds_memories(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(profiles=["memory"])
    memories = [
        make_memory(
            f"Memory {index}: the dragon's breath weapon and a spell of fire, number {index}.",
            ["book", "t001", "t002", "t003", "t005"],
            "decision",
            datetime(2025, 3 + index % 9, 1 + index, tzinfo=UTC),
        )
        for index in range(12)
    ]
    store_memories(runtime.backend, runtime.embedder, memories)
    async with Client(build_server(runtime)) as client:
        ours = Side("scoperag (in memory)", client)
        for scenario in SCENARIOS:
            tool, call = arguments(ours, scenario, "a dragon breathing fire", 10)
            _, rows = await ours.call(tool, call)
            assert rows and all("dragon" in row for row in rows), (scenario, call)
            peer_tool, peer_call = arguments(
                Side("peer (stdio)", client), scenario, "a dragon breathing fire", 10
            )
            assert peer_tool == SCENARIOS[scenario][0]
            assert peer_call.get("limit", peer_call.get("page_size")) == call["page_size"] == 10
            assert peer_call.get("query") == call.get("query")


async def test_the_mcp_floor_server_answers_over_stdio() -> None:
    """The floor the eval times beside the services: a stdio server whose one tool does nothing."""
    floor = StdioTransport(sys.executable, [str(REPO / "evals" / "mcp_floor_server.py")])
    async with Client(floor) as client:
        assert [tool.name for tool in await client.list_tools()] == ["nothing"]
        elapsed, rows = await Side(FLOOR, client).call("nothing", {})
        assert rows == [] and elapsed > 0
