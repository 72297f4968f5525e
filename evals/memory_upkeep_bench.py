"""Memory upkeep latency: `update_memory` and `merge_memories` against `store_memory`.

Real parts: the packaged MiniLM model, Qdrant Edge (or `--backend local`) in a fresh data dir,
the tools called through FastMCP's in-memory client. Stores N memories, updates each once (new
text), then merges them in pairs; prints p50/p95 in ms of each tool and the ratio of the
p50s to store_memory's.

    python evals/memory_upkeep_bench.py [--calls 300] [--backend edge]
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


def percentiles(times: list[float]) -> tuple[float, float]:
    """p50 and p95 in ms."""
    ordered = sorted(times)
    return statistics.median(ordered) * 1000, ordered[int(0.95 * (len(ordered) - 1))] * 1000


async def timed(client: Client, tool: str, arguments: dict[str, Any], into: list[float]) -> Any:
    started = time.perf_counter()
    result = await client.call_tool(tool, arguments)
    into.append(time.perf_counter() - started)
    return result.structured_content


async def run(calls: int, backend: str, data_dir: Path) -> dict[str, list[float]]:
    runtime = Runtime(Settings(data_dir=data_dir, backend=backend, profiles=["memory"]))
    times: dict[str, list[float]] = {"store_memory": [], "update_memory": [], "merge_memories": []}
    try:
        async with Client(build_server(runtime)) as client:
            await client.call_tool("store_memory", {"content": "Warm-up memory."})
            stored = [
                await timed(
                    client,
                    "store_memory",
                    {
                        "content": f"Memory {n}: the build on host {n % 17} takes {n} s.",
                        "tags": "b",
                    },
                    times["store_memory"],
                )
                for n in range(calls)
            ]
            updated = [
                await timed(
                    client,
                    "update_memory",
                    {"content_hash": s["content_hash"], "content": f"Memory {n}, revised."},
                    times["update_memory"],
                )
                for n, s in enumerate(stored)
            ]
            for a, b in zip(updated[::2], updated[1::2], strict=False):
                hashes = [a["content_hash"], b["content_hash"]]
                await timed(
                    client, "merge_memories", {"content_hashes": hashes}, times["merge_memories"]
                )
    finally:
        runtime.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="Memories stored and updated.")
    parser.add_argument("--backend", default="edge", choices=["edge", "local"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="upkeep-bench-") as folder:
        times = asyncio.run(run(args.calls, args.backend, Path(folder)))
    base, _ = percentiles(times["store_memory"])
    print(f"memory upkeep on {args.backend}, in-memory MCP client (ms)")
    print(f"{'tool':<16}{'calls':>7}{'p50':>9}{'p95':>9}{'p50 / store':>13}")
    for tool, found in times.items():
        p50, p95 = percentiles(found)
        print(f"{tool:<16}{len(found):>7}{p50:>9.1f}{p95:>9.1f}{p50 / base:>12.2f}x")


if __name__ == "__main__":
    main()
