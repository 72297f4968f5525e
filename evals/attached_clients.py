"""Every client first-class: tool calls of an owner and an attached `scoperag serve`, side by side.

    python evals/attached_clients.py [--calls 30] [--pdf PATH]

Two stdio servers (FastMCP `Client`s starting `scoperag serve`) on one data dir holding the bundled
samples: the first owns the embedded store, the second is attached to it. Each round calls both
with the same distinct arguments (no cache helps): `qdrant-find`, memory `search` with and
without a query, `search_book`, `store_memory`. Printed: p50/p95/p99 per call and side, idle and
while a third process runs `scoperag ingest pdf`; engine operations per call (`scoperag status`);
resident memory of every scoperag process for 1, 3 and 5 clients; and the round trip of one
engine operation on the owner's socket beside one MCP tool call over streamable HTTP on a Unix
socket (what forwarding whole tool calls through FastMCP's proxy would cost per call).
The machine may be shared: figures are pessimistic then.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from fastmcp import Client
from fastmcp.client.transports import StdioTransport

from scoperag.core.config.settings import Settings
from scoperag.server.samples import SAMPLES
from scoperag.server.store_state.status import store_status

PROFILES = "pdf,books,memory"
WORDS = "page label tree manual number ball letter sister estate rain walk music".split()  # noqa: SIM905


def _script() -> str:
    return shutil.which("scoperag", path=str(Path(sys.executable).parent)) or "scoperag"


def _env(data_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "SCOPERAG_DATA_DIR": str(data_dir),
        "SCOPERAG_PROFILES": PROFILES,
        "FASTMCP_CHECK_FOR_UPDATES": "off",
    }


def _server(data_dir: Path) -> Client:
    """A client of a new `scoperag serve` over stdio, which ends with the client's session."""
    command = StdioTransport(_script(), ["serve"], env=_env(data_dir), keep_alive=False)
    return Client(command, timeout=300)


def _ingest_samples(data_dir: Path) -> None:
    pdfs = [str(path) for path in sorted(SAMPLES.glob("*.pdf"))]
    for args in (
        ["pdf", *pdfs],
        ["book", str(SAMPLES / "pride-and-prejudice-ch1-3.txt"), "--book-id", "pride"],
        ["memories", str(SAMPLES / "memories.json")],
    ):
        subprocess.run(
            [_script(), "ingest", *args], env=_env(data_dir), check=True, capture_output=True
        )


def _calls(n: int, side: str) -> list[tuple[str, str, dict[str, Any]]]:
    """The n-th round's calls of one side: (label, tool, arguments), each query new, each
    memory new to the store (the same content twice would only be found a duplicate)."""
    words = f"{WORDS[n % len(WORDS)]} {WORDS[(n * 7 + 3) % len(WORDS)]} {n}"
    return [
        ("qdrant-find", "qdrant-find", {"query": words}),
        ("memory search", "search", {"query": words}),
        ("memory search, no query", "search", {"tags": [WORDS[n % len(WORDS)]], "page_size": 5}),
        ("search_book", "search_book", {"book_id": "pride", "query": words}),
        ("store_memory", "store_memory", {"content": f"note {side} {words} {time.time_ns()}"}),
    ]


async def _timed(client: Client, tool: str, arguments: dict[str, Any]) -> float:
    began = time.perf_counter()
    await client.call_tool(tool, arguments)
    return (time.perf_counter() - began) * 1000


def _percentiles(values: list[float]) -> str:
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return f"{cuts[49]:6.1f} {cuts[94]:6.1f} {cuts[98]:6.1f}"


async def _rounds(owner: Client, attached: Client, rounds: range, until: Any = None) -> dict:
    times: dict[tuple[str, str], list[float]] = {}
    for n in rounds:
        if until is not None and until():
            break
        sides = {"owner": owner, "attached": attached}
        calls = {side: _calls(n, side) for side in sides}
        for index in range(len(calls["owner"])):
            for side, client in sides.items():
                label, tool, arguments = calls[side][index]
                times.setdefault((label, side), []).append(await _timed(client, tool, arguments))
    return times


def _report(title: str, times: dict) -> None:
    print(f"\n{title} (ms: p50 p95 p99, {len(next(iter(times.values())))} calls each)")
    for label in dict.fromkeys(label for label, _ in times):
        owner, attached = times[(label, "owner")], times[(label, "attached")]
        gap = statistics.median(attached) - statistics.median(owner)
        print(
            f"  {label:26} owner {_percentiles(owner)} | attached {_percentiles(attached)}"
            f" | p50 gap {gap:+.2f}"
        )


def _rss_mb(root: int) -> float:
    """Resident memory of `root`'s descendants whose command is scoperag's, in MB."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    total, stack = 0, list(children.get(root, []))
    while stack:
        pid = stack.pop()
        stack += children.get(pid, [])
        try:
            if b"scoperag" in Path(f"/proc/{pid}/cmdline").read_bytes():
                status = Path(f"/proc/{pid}/status").read_text()
                total += int(status.split("VmRSS:")[1].split()[0])
        except (OSError, IndexError):
            continue
    return total / 1024


def _operations(settings: Settings) -> dict[str, int]:
    return dict(store_status(settings)["owner"]["operations"])


async def _operations_per_call(settings: Settings, owner: Client, attached: Client) -> None:
    print("\nengine operations per call (owner | attached)")
    sides = {"owner": owner, "attached": attached}
    calls = {side: _calls(10_000, side) for side in sides}
    for index, (_, tool, arguments) in enumerate(_calls(9_999, "warm-up")):
        await owner.call_tool(tool, arguments)  # records read once per collection version
        made = []
        for side, client in sides.items():
            label, tool, arguments = calls[side][index]
            before = _operations(settings)
            await client.call_tool(tool, arguments)
            after = _operations(settings)
            made.append(
                {
                    op: after[op] - before.get(op, 0)
                    for op in after
                    if after[op] != before.get(op, 0)
                }
            )
        print(f"  {label:26} {sum(made[0].values())} {made[0]} | {sum(made[1].values())} {made[1]}")


async def _memory(data_dir: Path) -> None:
    print("\nresident memory, every scoperag process together")
    for count in (1, 3, 5):
        clients = [_server(data_dir) for _ in range(count)]
        for client in clients:
            await client.__aenter__()
            await client.call_tool("qdrant-find", {"query": "warm up"})
            await client.call_tool("search", {"query": "warm up"})
        print(f"  {count} client(s): {_rss_mb(os.getpid()):7.1f} MB")
        for client in clients:
            await client.__aexit__(None, None, None)


async def _round_trips(data_dir: Path) -> None:
    """p50 of one engine operation on the owner's socket, and of one MCP tool call over
    streamable HTTP on a Unix socket (FastMCP server in uvicorn, FastMCP client)."""
    from scoperag.server.runtime import Runtime

    runtime = Runtime(Settings(data_dir=data_dir, profiles=PROFILES.split(",")))
    backend = runtime.backend
    print(f"\nround trips ({backend.role} here)")
    engine = []
    for _ in range(300):
        began = time.perf_counter()
        backend.list_collections()
        engine.append((time.perf_counter() - began) * 1000)
    print(f"  engine operation on the owner's socket: p50 {statistics.median(engine):.3f} ms")
    runtime.close()
    mcp = await _mcp_round_trip()
    print(f"  MCP tool call, streamable HTTP on a Unix socket: p50 {mcp:.3f} ms")


async def _mcp_round_trip() -> float:
    import httpx
    import uvicorn
    from fastmcp import FastMCP
    from fastmcp.client.transports import StreamableHttpTransport

    mcp = FastMCP("floor")

    @mcp.tool
    def noop() -> str:
        return "ok"

    path = Path(tempfile.mkdtemp()) / "mcp.sock"
    app = mcp.http_app(path="/mcp", stateless_http=True, json_response=True)
    server = uvicorn.Server(uvicorn.Config(app, uds=str(path), log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)

    def http_client(**kwargs: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(uds=str(path)), **kwargs)

    transport = StreamableHttpTransport("http://x/mcp", httpx_client_factory=http_client)
    async with Client(transport) as client:
        times = [await _timed(client, "noop", {}) for _ in range(300)]
    server.should_exit = True
    return statistics.median(times)


async def main(calls: int, pdf: Path) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="attached-clients-"))
    settings = Settings(data_dir=data_dir, profiles=PROFILES.split(","))
    _ingest_samples(data_dir)
    owner = _server(data_dir)
    attached = _server(data_dir)
    async with owner:
        await owner.call_tool("set_reading_position", {"book_id": "pride", "chapter": 3})
        async with attached:
            await _rounds(owner, attached, range(2))  # both warm: model, handlers, records
            _report("idle", await _rounds(owner, attached, range(calls)))
            command = [_script(), "ingest", "pdf", str(pdf)]
            ingest = subprocess.Popen(command, env=_env(data_dir), stdout=subprocess.DEVNULL)
            busy = await _rounds(owner, attached, range(calls, 3 * calls), ingest.poll)
            print(f"\n(ingest of {pdf.name} by a third process: exit {ingest.wait()})")
            _report("during the ingest", busy)
            await _operations_per_call(settings, owner, attached)
            await _round_trips(data_dir)  # this process attached to the owner server
    await _memory(data_dir)
    shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument(
        "--pdf", type=Path, default=Path("/work/shared/data/pdf/GeoTopo-komprimiert.pdf")
    )
    arguments = parser.parse_args()
    asyncio.run(main(arguments.calls, arguments.pdf))
