"""Reliability figures: concurrent HTTP clients, acknowledged writes after a kill, kills during
ingestion. Prints figures (this machine's latencies are pessimistic when it is shared).

    python evals/reliability.py [--clients 8] [--calls 25] [--kills 4] [--skip-load|--skip-kills]

1. `scoperag serve --transport http` on loopback (edge engine, pdf + memory profiles);
   `--clients` MCP clients over HTTP make `--calls` mixed calls each (searches, listings,
   writes, and calls with a bad argument, whose error must name it). Then the server is killed
   (SIGKILL) and every acknowledged write is looked up in the store.
2. `scoperag ingest book` killed at several moments while replacing one version of a book with
   another (`evals/reliability_kills.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from fastmcp import Client
from fastmcp.exceptions import ToolError
from qdrant_client import models

from scoperag.core.config.settings import Settings
from scoperag.core.contracts.memory import COLLECTION as MEMORIES
from scoperag.core.embedding.embedders import Embedder
from scoperag.server.runtime import Runtime

sys.path.insert(0, str(Path(__file__).parent))
from http_serving import free_port, serve_http  # noqa: E402
from reliability_kills import SCOPERAG, run_kills  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
# shared/data beside the repository (or beside the worktrees folder of a git worktree)
BOOKS = next((p for up in ("..", "../..") if (p := REPO / up / "shared/data/books").is_dir()), None)
WORDS = [
    "index",
    "page",
    "proof",
    "table",
    "memory",
    "deploy",
    "error",
    "cache",
    "queue",
    "lock",
    "config",
    "test",
]
# Calls with one bad argument: (tool, arguments, the parameter its error must name).
BAD_CALLS = [
    ("store_memory", {"content": "   "}, "content"),
    ("search", {"query": "x", "page": 0}, "page"),
    ("qdrant-find", {"query": "x", "limit": 1000}, "limit"),
    ("qdrant-store", {"information": "x", "metadata": {"document_id": 7}}, "document_id"),
    ("delete_memory", {"content_hash": "not-a-hash"}, "content_hash"),
]


@dataclass
class LoadFigures:
    tried: int = 0
    crashes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # a good call that failed
    unclear: list[str] = field(default_factory=list)  # a bad call whose error names nothing
    latencies: list[float] = field(default_factory=list)
    memories: list[str] = field(default_factory=list)  # acknowledged content hashes
    notes: list[str] = field(default_factory=list)  # acknowledged point ids


def _call(rng: random.Random, client_no: int, n: int) -> tuple[str, dict, str | None]:
    words = " ".join(rng.sample(WORDS, 3))
    roll = rng.random()
    if roll < 0.25:
        return "store_memory", {"content": f"c{client_no} n{n}: {words}", "tags": ["load"]}, None
    if roll < 0.35:
        return "qdrant-store", {"information": f"c{client_no} n{n}: {words}"}, None
    if roll < 0.6:
        return "search", {"query": words, "page_size": 5}, None
    if roll < 0.8:
        return "qdrant-find", {"query": words, "limit": 5}, None
    if roll < 0.9:
        return "qdrant-list-documents", {}, None
    return rng.choice(BAD_CALLS)


async def _client(url: str, number: int, calls: int, figures: LoadFigures) -> None:
    rng = random.Random(number)
    async with Client(url, timeout=120) as client:
        for n in range(calls):
            tool, arguments, bad = _call(rng, number, n)
            figures.tried += 1
            started = time.perf_counter()
            try:
                result = await client.call_tool(tool, arguments)
            except ToolError as exc:
                if bad is None:
                    figures.errors.append(f"{tool}: {exc}")
                elif bad not in str(exc):
                    figures.unclear.append(f"{tool}: {exc}")
                continue
            except Exception as exc:  # noqa: BLE001 - a crash is what is being counted
                figures.crashes.append(f"{tool}: {exc!r}")
                continue
            figures.latencies.append(time.perf_counter() - started)
            if bad is not None:
                figures.unclear.append(f"{tool} accepted a bad argument {arguments}")
            elif tool == "store_memory":
                figures.memories.append(result.structured_content["content_hash"])
            elif tool == "qdrant-store":
                figures.notes.append(result.structured_content["id"])


def _serve(data_dir: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "SCOPERAG_DATA_DIR": str(data_dir), "SCOPERAG_BACKEND": "edge"}
    env["FASTMCP_CHECK_FOR_UPDATES"] = "off"
    command = [SCOPERAG, "serve", "--transport", "http", "--port", str(port)]
    return serve_http(
        [*command, "--profiles", "pdf,memory"], port, env=env, stderr=subprocess.DEVNULL
    )


def _found(data_dir: Path, embedder: Embedder, figures: LoadFigures) -> tuple[int, int]:
    runtime = Runtime(Settings(data_dir=data_dir, backend="edge"), embedder)
    backend = runtime.backend
    hashes = models.FieldCondition(key="content_hash", match=models.MatchAny(any=figures.memories))
    memories = backend.count(MEMORIES, models.Filter(must=[hashes])) if figures.memories else 0
    ids = models.HasIdCondition(has_id=figures.notes)
    pages = Settings(data_dir=data_dir).pdf_collection
    notes = backend.count(pages, models.Filter(must=[ids])) if figures.notes else 0
    runtime.close()
    return memories, notes


async def load(clients: int, calls: int, embedder: Embedder) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="scoperag-load-"))
    port = free_port()
    server = _serve(data_dir, port)
    url = f"http://127.0.0.1:{port}/mcp"
    async with Client(url, timeout=120) as warm:  # loads the model before the clock starts
        await warm.call_tool("qdrant-store", {"information": "warm-up"})
        await warm.call_tool("store_memory", {"content": "warm-up"})
    figures = LoadFigures()
    started = time.perf_counter()
    await asyncio.gather(*(_client(url, n, calls, figures) for n in range(clients)))
    elapsed = time.perf_counter() - started
    server.send_signal(signal.SIGKILL)
    server.wait()
    memories, notes = _found(data_dir, embedder, figures)
    cuts = (
        statistics.quantiles(figures.latencies, n=100) if len(figures.latencies) > 1 else [0] * 99
    )
    print(f"## {clients} HTTP clients x {calls} mixed calls (edge engine, loopback)")
    print(
        f"calls tried {figures.tried}, crashes {len(figures.crashes)}, errors on good calls "
        f"{len(figures.errors)}, unclear errors {len(figures.unclear)}"
    )
    print(
        f"latency p50 {cuts[49] * 1000:.0f} ms, p95 {cuts[94] * 1000:.0f} ms, "
        f"p99 {cuts[98] * 1000:.0f} ms; {figures.tried / elapsed:.1f} calls/s"
    )
    print(
        f"after SIGKILL of the server: memories found {memories} of {len(figures.memories)} "
        f"acknowledged, notes found {notes} of {len(figures.notes)}"
    )
    for problem in (figures.crashes + figures.errors + figures.unclear)[:5]:
        print(f"  e.g. {problem[:300]}")


def kills(count: int, embedder: Embedder, chapters: tuple[int, int]) -> None:
    if BOOKS is None:
        raise SystemExit(f"shared/data/books is not beside {REPO}: the kill test needs the book")
    book = next(BOOKS.resolve().glob("*.txt"))
    figures = run_kills(book, embedder, count, chapters)
    print(
        f"## {figures.kills} kills (SIGKILL) during `scoperag ingest book`, chapters "
        f"1-{chapters[0]} <-> 1-{chapters[1]} (clean run {figures.clean_seconds:.1f} s)"
    )
    for state in figures.states:
        print(f"  {state}")
    print(
        f"searches/counts/listings checked {figures.searches}, mixed versions seen {figures.mixed}"
    )
    print(
        f"final re-run: {figures.final_points} points stored, clean run {figures.clean_points}; "
        f"registry entries left {len(figures.final_registry)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--calls", type=int, default=25, help="per client (the issue asks 500)")
    parser.add_argument("--kills", type=int, default=4)
    parser.add_argument("--chapters", type=int, nargs=2, default=(3, 12))
    parser.add_argument("--skip-load", action="store_true")
    parser.add_argument("--skip-kills", action="store_true")
    args = parser.parse_args()
    embedder = Embedder(Settings())
    if not args.skip_load:
        asyncio.run(load(args.clients, args.calls, embedder))
    if not args.skip_kills:
        kills(args.kills, embedder, tuple(args.chapters))


if __name__ == "__main__":
    main()
