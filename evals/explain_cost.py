"""What `explain` costs: each search and lookup tool timed with and without it, p50 / p95.

The bundled samples (two PDFs, *Pride and Prejudice* chapters 1-3, the memories, the SRD D&D
folder, the docs file) are ingested into a fresh store (or `--store DIR`, kept between runs);
then every tool is called through the in-process MCP client, `--calls` times each way,
alternating with and without `explain`, the query embedding included (the model is warm).

    python evals/explain_cost.py --calls 40
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

from fastmcp import Client  # noqa: E402

from scoperag.core.config.settings import Settings  # noqa: E402
from scoperag.server.mcp.app import build_server  # noqa: E402
from scoperag.server.runtime import Runtime  # noqa: E402
from scoperag.server.samples import SAMPLES  # noqa: E402

QUERIES = ["page labels", "what failed", "fire damage", "a letter from London", "database"]
CALLS: dict[str, dict[str, Any]] = {  # tool -> arguments besides the query
    "qdrant-find": {"limit": 10},
    "search_book": {"book_id": "pride", "top_k": 20},
    "search": {"page_size": 10},
    "search_dnd_content": {"limit": 10},
    "lookup_spell": {"limit": 20},
    "lookup_creature": {"limit": 20},
    "elf_docs_search_l0": {"top_k": 10},
}
NAMES = ["fire", "drgon", "cure wounds", "goblin", "light"]


def ingest(runtime: Runtime) -> None:
    """The bundled samples, once per store."""
    from scoperag.pipelines.book import ingest_book
    from scoperag.pipelines.docs import ingest_docs_jsonl
    from scoperag.pipelines.memories import import_memories
    from scoperag.server.profiles.dnd.service import ingest_paths as ingest_dnd
    from scoperag.server.profiles.pdf.service import ingest_paths as ingest_pdf

    backend, embedder = runtime.backend, runtime.embedder
    ingest_pdf(runtime, sorted(SAMPLES.glob("*.pdf")), None, None)
    ingest_book(SAMPLES / "pride-and-prejudice-ch1-3.txt", backend, embedder, "pride")
    import_memories(SAMPLES / "memories.json", backend, embedder)
    ingest_dnd(runtime, [SAMPLES / "dnd"], None)
    ingest_docs_jsonl(SAMPLES / "docs.jsonl", backend, embedder)


def arguments(tool: str, n: int) -> dict[str, Any]:
    if tool.startswith("lookup_"):
        return {**CALLS[tool], "name": NAMES[n % len(NAMES)]}
    return {**CALLS[tool], "query": QUERIES[n % len(QUERIES)]}


async def measure(runtime: Runtime, calls: int) -> dict[str, tuple[list[float], list[float]]]:
    times: dict[str, tuple[list[float], list[float]]] = {}
    async with Client(build_server(runtime)) as client:
        position = {"book_id": "pride", "sentence": 150}
        await client.call_tool("set_reading_position", position)
        for tool in CALLS:
            plain: list[float] = []
            explained: list[float] = []
            await client.call_tool(tool, {**arguments(tool, 0), "explain": True})  # warm
            for n in range(2 * calls):
                explain = n % 2 == 1
                started = time.perf_counter()
                await client.call_tool(tool, {**arguments(tool, n // 2), "explain": explain})
                (explained if explain else plain).append(1000 * (time.perf_counter() - started))
            times[tool] = (plain, explained)
    return times


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1] if len(values) > 1 else values[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=40, help="calls per tool, each way")
    parser.add_argument("--store", type=Path, help="data dir to use (kept; ingested once)")
    options = parser.parse_args()
    data_dir = options.store or Path(tempfile.mkdtemp(prefix="explain-cost-"))
    fresh = not (data_dir / "explain-cost-ingested").exists()
    runtime = Runtime(Settings(data_dir=data_dir))
    try:
        if fresh:
            ingest(runtime)
            (data_dir / "explain-cost-ingested").touch()
        times = asyncio.run(measure(runtime, options.calls))
    finally:
        runtime.close()
    print(f"{'tool':<20} {'off p50/p95 ms':>16} {'on p50/p95 ms':>16} {'p50 ratio':>10}")
    for tool, (plain, explained) in times.items():
        off, on = statistics.median(plain), statistics.median(explained)
        print(
            f"{tool:<20} {off:>7.2f} / {p95(plain):<6.2f} {on:>7.2f} / {p95(explained):<6.2f} "
            f"{on / off:>9.2f}x"
        )


if __name__ == "__main__":
    main()
