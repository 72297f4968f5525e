"""Throughput and latency of concurrent MCP clients on one embedded store.

Starts `scoperag serve --transport http` on a fresh data dir holding the sample qpdf manual
(the first server owns the engine), and with `--via attached` a second HTTP server on the same
data dir (attached: every engine operation goes through the owner). Then, for each client count,
that many FastMCP clients call a tool as fast as they can for `--seconds`, through the owner or
the attached server. Prints calls/s, p50 and p95 per count. `--tool find`: `qdrant-find`, each
client with its own query (embedding + engine search); `--tool list`: `qdrant-list-documents`
(engine only: a scroll over every page's payload, no model).

    python evals/concurrency.py --clients 1,2,4,8 --seconds 10 --via owner,attached --tool find

`--serve` runs another build of the server (e.g. an older commit's, with `--via owner`) to
compare two builds on the same machine.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fastmcp import Client

SAMPLE = Path(__file__).resolve().parents[1] / "server" / "samples" / "qpdf-manual-5.1.3.pdf"
QUERIES = [
    "How do I encrypt a PDF file?",
    "linearize a file for the web",
    "split pages into separate files",
    "check the structure of a damaged PDF",
    "page labels and their numbering",
    "remove a password from a document",
    "overlay one page on another",
    "object streams and compression",
]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _scoperag() -> str:
    """The `scoperag` script installed beside this Python."""
    return shutil.which("scoperag", path=str(Path(sys.executable).parent)) or "scoperag"


def _ingest(data_dir: Path) -> None:
    env = {**os.environ, "SCOPERAG_DATA_DIR": str(data_dir)}
    subprocess.run([_scoperag(), "ingest", "pdf", str(SAMPLE)], env=env, check=True)


def _serve(command: list[str], data_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    env = {**os.environ, "SCOPERAG_DATA_DIR": str(data_dir), "SCOPERAG_PROFILES": "pdf"}
    args = [*command, "serve", "--transport", "http", "--port", str(port)]
    process = subprocess.Popen(args, env=env)
    return process, f"http://127.0.0.1:{port}/mcp"


async def _ready(url: str) -> None:
    """Wait until the server answers a search (which also opens the engine and the model)."""
    deadline = time.monotonic() + 180
    while True:
        try:
            async with Client(url, timeout=120) as client:
                await client.call_tool("qdrant-find", {"query": "warm up"})
                return
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.5)


_ASKED = itertools.count()  # numbers every query asked, across clients


def _call(tool: str, index: int) -> tuple[str, dict[str, object]]:
    """The call client `index` repeats."""
    if tool == "list":
        return "qdrant-list-documents", {}
    return "qdrant-find", {"query": QUERIES[index % len(QUERIES)], "limit": 5}


async def _client(url: str, call: tuple[str, dict], until: float, latencies: list[float]) -> None:
    """Repeat `call` until `until`; a query is numbered each time, so it is embedded each time
    (the server keeps the vectors of recent queries, which a repeated text would reuse)."""
    tool, arguments = call
    async with Client(url, timeout=120) as client:
        while time.monotonic() < until:
            if "query" in arguments:
                arguments = {**arguments, "query": f"{call[1]['query']} ({next(_ASKED)})"}
            start = time.perf_counter()
            await client.call_tool(tool, arguments)
            latencies.append(time.perf_counter() - start)


async def _round(url: str, tool: str, clients: int, seconds: float) -> tuple[float, float, float]:
    latencies: list[float] = []
    start = time.monotonic()
    until = start + seconds
    await asyncio.gather(*(_client(url, _call(tool, i), until, latencies) for i in range(clients)))
    elapsed = time.monotonic() - start
    cuts = statistics.quantiles(latencies, n=20) if len(latencies) > 1 else latencies * 19
    return len(latencies) / elapsed, statistics.median(latencies) * 1000, cuts[18] * 1000


async def _measure(url: str, tool: str, counts: list[int], seconds: float, label: str) -> None:
    await _ready(url)
    await _round(url, tool, max(counts), min(seconds, 3.0))  # warm-up, not reported
    for count in counts:
        rate, p50, p95 = await _round(url, tool, count, seconds)
        print(
            f"{label:9} {tool:5} clients={count:<2} {rate:7.1f} calls/s  p50 {p50:6.1f} ms  "
            f"p95 {p95:6.1f} ms",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="1,2,4,8", help="Client counts, comma-separated.")
    parser.add_argument("--seconds", type=float, default=10.0, help="Seconds per client count.")
    parser.add_argument("--via", default="owner,attached", help="owner and/or attached.")
    parser.add_argument("--tool", choices=["find", "list"], default="find", help="Tool called.")
    parser.add_argument("--serve", default=None, help="Server command (default: scoperag).")
    args = parser.parse_args()
    command = shlex.split(args.serve) if args.serve else [_scoperag()]
    counts = [int(part) for part in args.clients.split(",")]
    with tempfile.TemporaryDirectory(prefix="scoperag-concurrency-") as folder:
        data_dir = Path(folder) / "data"
        _ingest(data_dir)
        owner, owner_url = _serve(command, data_dir)
        servers = [owner]
        try:
            asyncio.run(_ready(owner_url))  # the first server to search owns the engine
            for via in args.via.split(","):
                url = owner_url
                if via == "attached":
                    attached, url = _serve(command, data_dir)
                    servers.append(attached)
                asyncio.run(_measure(url, args.tool, counts, args.seconds, via))
        finally:
            for server in servers:
                server.terminate()
                server.wait(30)


if __name__ == "__main__":
    main()
