"""scoperag's memory tools side by side with mcp-memory-service on the same 10,000 memories.

Both services hold the same memories (evals/memory_bench.py's `make_memories` over
`bench_corpus.passages`: same texts, tags, types, creation times and MiniLM vectors) and are
driven as MCP tool calls by FastMCP clients in this process:

- the peer, mcp-memory-service with its sqlite-vec backend, as its own stdio MCP server
  (`python -m mcp_memory_service.server`) from a venv of its own (not part of CI; without one the
  script prints how to create it); `--peer-venv` or SCOPERAG_PEER_VENV, default ../peer/.venv;
- scoperag (Qdrant Edge) as `scoperag serve` over stdio: the same transport, so the ratio that
  counts; and in this process through the in-memory client (no pipe, no JSON-RPC framing);
- the MCP floor: a FastMCP stdio server whose one tool does nothing (`mcp_floor_server.py`).
  No FastMCP server (scoperag is one) answers faster through this client, so the peer's time
  over the floor's ("floor bound") is the largest ratio scoperag could reach in a scenario.

Time is the client's wall clock around `call_tool` on every side. Each round calls every
scenario on every side one after another, the side order reversed every round, so background
load hits all sides alike. Every call gets a text never asked before (a held-out passage): both
services keep the embeddings of recent queries, and a repeated query would skip its embedding.

    python evals/peer_memory.py                      # 10k memories, 30 rounds, pages of 10
    python evals/peer_memory.py --page-size 100      # both services' largest page
    python evals/peer_memory.py --peer-threads 1     # the peer's torch on one thread, like ours
    python evals/peer_memory.py --rounds 60 --peer-venv /path/to/venv
"""

from __future__ import annotations

import argparse
import asyncio
import os
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

from bench_corpus import REPO, cached_vectors, passages  # noqa: E402
from bench_timing import Clock  # noqa: E402
from memory_bench import make_memories, percentile  # noqa: E402
from peer_sides import (  # noqa: E402
    FLOOR,
    Side,
    open_sides,
    peer_database,
    peer_python,
    peer_version,
    scoperag_store,
)

from scoperag.core.config.settings import Settings  # noqa: E402
from scoperag.core.embedding.embedders import Embedder  # noqa: E402

SEMANTIC = "semantic, full page"
# name -> (peer tool, peer arguments, scoperag `search` arguments); "{q}" is a fresh text per call.
SCENARIOS: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    SEMANTIC: ("memory_search", {"query": "{q}"}, {"query": "{q}", "mode": "hybrid"}),
    "tag (peer memory_search)": (
        "memory_search", {"tags": ["t002", "t005"]}, {"mode": "tag", "tags": ["t002", "t005"]},
    ),
    "tag (peer memory_list)": (
        "memory_list", {"tags": ["t002", "t005"]}, {"mode": "tag", "tags": ["t002", "t005"]},
    ),
    "time range": (
        "memory_search", {"after": "2025-03-01", "before": "2026-01-01"},  # its `before`: 00:00
        {"mode": "faceted", "start_date": "2025-03-01", "end_date": "2025-12-31"},
    ),
    "tags + time": (
        "memory_search", {"tags": ["t003"], "after": "2025-06-01"},
        {"mode": "tag", "tags": ["t003"], "start_date": "2025-06-01"},
    ),
    "type": (
        "memory_list", {"memory_type": "decision"}, {"mode": "faceted", "memory_type": "decision"},
    ),
    "query + tag": (
        "memory_search", {"query": "{q}", "tags": ["t001"]},
        {"query": "{q}", "mode": "hybrid", "tags": ["t001"]},
    ),
}  # fmt: skip
TARGETS = {"semantic": 2.5, "filtered": 30.0}


def arguments(side: Side, scenario: str, query: str, page_size: int) -> tuple[str, dict]:
    """The tool and arguments `side` gets for `scenario`, at one page size on every side."""
    tool, peer_args, our_args = SCENARIOS[scenario]
    if side.name.startswith("peer"):
        size_key = "page_size" if tool == "memory_list" else "limit"
        chosen = {**peer_args, size_key: page_size}
    else:
        tool, chosen = "search", {**our_args, "page_size": page_size, "min_similarity": -1.0}
    return tool, {key: query if value == "{q}" else value for key, value in chosen.items()}


async def run(sides: list[Side], embedder: Any, queries: list[str], args: Any) -> dict[str, Any]:
    """Interleaved rounds; returns per side and scenario the last page's texts (and embeddings)."""
    rows: dict[tuple[str, str], list[str]] = {}
    embeds: list[float] = []
    names = [*SCENARIOS, "store"]
    embedder.clock = Clock()  # the in-memory side's query embedding, for scale
    for round_ in range(-2, args.rounds):  # two warm-up rounds, not recorded
        order = sides if round_ % 2 == 0 else sides[::-1]
        for side in sides if round_ == 0 else []:
            side.duplicates = 0  # count the measured rounds only
        for scenario in names:
            query = queries.pop()
            for side in order:
                if side.name == FLOOR:
                    tool, call = "nothing", {}
                elif scenario == "store":
                    tool, call = store_call(side, query)
                else:
                    tool, call = arguments(side, scenario, query, args.page_size)
                embedder.clock.reset()
                elapsed, found = await side.call(tool, call)
                if round_ < 0:
                    continue
                side.times.setdefault(scenario, []).append(elapsed)
                rows[side.name, scenario] = found
                if side.name.endswith("(in memory)") and scenario == SEMANTIC:
                    embeds.append(embedder.clock.embedding * 1000)
    return {"rows": rows, "embeds": embeds}


def store_call(side: Side, content: str) -> tuple[str, dict[str, Any]]:
    if side.name.startswith("peer"):
        return "memory_store", {
            "content": content,
            "metadata": {"tags": "bench,t001", "type": "note"},
        }
    return "store_memory", {"content": content, "tags": ["bench", "t001"], "memory_type": "note"}


def same_page(peer: list[str], ours: list[str]) -> str:
    """How alike two pages are: rows in common, and whether they come in the same order."""
    common = len(set(peer) & set(ours))
    order = "same order" if peer == ours else "other order" if common == len(ours) else ""
    return f"{common}/{len(ours)} of {len(peer)} {order}".rstrip()


def report(sides: list[Side], measured: dict[str, Any], header: str) -> None:
    peer, *ours, floor = sides
    print(header)
    print(f"{'scenario':26} {'peer p50/p95 ms':>17}", end="")
    for side in ours:
        print(f" {side.name + ' p50/p95':>32} {'ratio':>6}", end="")
    print(f" {'floor bound':>11}  same page as the peer (rows in common, order)")
    ratios: dict[str, list[float]] = {side.name: [] for side in ours}
    for scenario in [*SCENARIOS, "store"]:
        base = peer.times[scenario]
        line = f"{scenario:26} {percentile(base, 0.5):8.1f} /{percentile(base, 0.95):7.1f}"
        for side in ours:
            times = side.times[scenario]
            ratio = percentile(base, 0.5) / percentile(times, 0.5)
            ratios[side.name].append(ratio)
            line += f" {percentile(times, 0.5):23.1f} /{percentile(times, 0.95):7.1f} {ratio:5.1f}x"
        line += f" {percentile(base, 0.5) / percentile(floor.times[scenario], 0.5):10.1f}x"
        if scenario != "store":
            line += "  " + same_page(measured["rows"][peer.name, scenario],
                                     measured["rows"][ours[0].name, scenario])  # fmt: skip
        print(line)
    print(
        f"peer stores refused as semantic duplicates (timed all the same): {peer.duplicates} "
        f"of {len(peer.times['store'])}"
    )
    calls = [time for times in floor.times.values() for time in times]
    print(
        f"{FLOOR}, a tool that does nothing: p50 {percentile(calls, 0.5):.1f} ms, p95 "
        f"{percentile(calls, 0.95):.1f} ms. No FastMCP server answers faster over stdio, so "
        "scoperag's ratio cannot exceed the floor bound: the peer's p50 over the floor's."
    )
    embeds = measured["embeds"]
    embedded = percentile(embeds, 0.5) + percentile(calls, 0.5)  # the least a semantic call takes
    print(
        f"query embedding inside scoperag (in memory, same run): p50 {percentile(embeds, 0.5):.1f}"
        f" ms, p95 {percentile(embeds, 0.95):.1f} ms; with the floor, the largest semantic ratio "
        f"a server embedding as fast could reach over stdio: "
        f"{percentile(peer.times[SEMANTIC], 0.5) / embedded:.1f}x"
    )
    queryless = [i for i, name in enumerate(SCENARIOS) if "{q}" not in str(SCENARIOS[name][1])]
    for name, values in ratios.items():
        semantic = values[0]
        worst = min(values[i] for i in queryless)
        print(
            f"{name}: semantic full page {semantic:.1f}x (target >= {TARGETS['semantic']}x: "
            f"{'met' if semantic >= TARGETS['semantic'] else 'MISSED'}); query-less filtered "
            f"searches >= {worst:.1f}x (target >= {TARGETS['filtered']:.0f}x: "
            f"{'met' if worst >= TARGETS['filtered'] else 'MISSED'}); store {values[-1]:.1f}x"
        )


async def main_async(args: argparse.Namespace) -> None:
    python = peer_python(args.peer_venv)
    corpus = passages(args.size + 4 * (len(SCENARIOS) + 1) * (args.rounds + 2))
    texts = [p.text for p in corpus[: args.size]]
    vectors = cached_vectors(texts, Embedder(Settings()), log=True)
    memories = make_memories(texts, [p.source for p in corpus[: args.size]])
    peer_db = peer_database(python, memories, vectors)
    data_dir = scoperag_store(memories, vectors)
    queries = [p.text for p in corpus[args.size :] if p.text.isprintable()]  # no NUL bytes
    async with AsyncExitStack() as stack:
        sides, embedder = await open_sides(stack, python, peer_db, data_dir, args.peer_threads)
        measured = await run(sides, embedder, queries, args)
    report(
        sides,
        measured,
        f"{args.size} memories; peer mcp-memory-service {peer_version(python)} (sqlite-vec), "
        f"scoperag on Qdrant Edge; page size {args.page_size}, min_similarity -1 (no floor), "
        f"{args.rounds} interleaved rounds; MCP tool call wall time seen by the client; "
        f"peer torch threads: {args.peer_threads or 'its default'}",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000, help="memories in each service")
    parser.add_argument("--rounds", type=int, default=30, help="measured calls per scenario")
    parser.add_argument(
        "--page-size", type=int, default=10, help="rows per call, 1-100 (10: both defaults)"
    )
    parser.add_argument(
        "--peer-threads",
        type=int,
        default=None,
        help="OMP_NUM_THREADS for the peer's torch (default: its own, every core; scoperag "
        "embeds a query on one thread)",
    )
    parser.add_argument(
        "--peer-venv",
        type=Path,
        default=Path(os.environ.get("SCOPERAG_PEER_VENV", REPO.parent / "peer" / ".venv")),
    )
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
