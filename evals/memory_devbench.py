"""The devbench queries through the MCP `search` tool: expected tags found in the top results.

Imports shared/data/memories/devbench_dataset.json (30 memories) with the real importer, then
asks its 20 questions (exact, semantic, cross_type, negative) as hybrid searches. For each
similarity floor it prints how many expected tags appear among the top-k results' tags, per
category, and how many results the negative questions (which expect none) still return.

    python evals/memory_devbench.py                       # top 5; floors 0.6 (default), 0.4, 0.0
    python evals/memory_devbench.py --top-k 3 --min-similarity 0.5 --verbose
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO.parent / "shared" / "data" / "memories" / "devbench_dataset.json"


async def run(
    server: Any, queries: list[dict[str, Any]], top_k: int, floor: float, verbose: bool
) -> None:
    from fastmcp import Client

    found: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # category -> [found, expected]
    negative_hits = 0
    async with Client(server) as client:
        for query in queries:
            arguments = {"query": query["question"], "page_size": top_k, "min_similarity": floor}
            result = await client.call_tool("search", arguments)
            rows = result.structured_content.get("memories", [])
            tags = {tag for row in rows for tag in row["tags"]}
            expected = set(query["expected_tags"])
            counts = found[query["category"]]
            counts[0] += len(expected & tags)
            counts[1] += len(expected)
            if not expected:
                negative_hits += len(rows)
            if verbose:
                print(
                    f"  {query['id']:11} {len(expected & tags)}/{len(expected)} found, "
                    f"{len(rows)} results, top score "
                    f"{rows[0]['score'] if rows else '-'}: {query['question']}"
                )
    total = [sum(c[0] for c in found.values()), sum(c[1] for c in found.values())]
    per_category = ", ".join(f"{category} {c[0]}/{c[1]}" for category, c in found.items() if c[1])
    print(
        f"min_similarity {floor:.2f}: expected tags in top {top_k}: {total[0]}/{total[1]} "
        f"({total[0] / total[1]:.0%}); {per_category}; results for the "
        f"{sum(1 for q in queries if not q['expected_tags'])} negative questions: {negative_hits}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--min-similarity", type=float, action="append", dest="floors")
    parser.add_argument("--backend", choices=["local", "edge"], default=None)
    parser.add_argument("--verbose", action="store_true", help="one line per question")
    args = parser.parse_args()

    from scoperag.core.settings import Settings
    from scoperag.pipelines.memories import import_memories
    from scoperag.server.app import build_server
    from scoperag.server.runtime import Runtime

    data = json.loads(DATASET.read_text(encoding="utf-8"))
    settings = Settings(
        data_dir=Path(tempfile.mkdtemp()), backend=args.backend, profiles=["memory"]
    )
    runtime = Runtime(settings)
    report = import_memories(DATASET, runtime.backend, runtime.embedder)
    print(f"imported {len(report.stored)} devbench memories on '{runtime.backend.name}'")
    server = build_server(runtime)
    for floor in args.floors or [0.6, 0.4, 0.0]:
        asyncio.run(run(server, data["queries"], args.top_k, floor, args.verbose))
    runtime.close()


if __name__ == "__main__":
    main()
