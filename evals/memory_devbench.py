"""The devbench queries through the MCP `search` tool: expected tags found in the top results.

Imports shared/data/memories/devbench_dataset.json (30 memories) with the real importer, then
asks its 20 questions (exact, semantic, cross_type, negative) as `search` calls. The first run
leaves min_similarity out (the tool's default); then each floor given. It prints, over the 15
answerable questions, how many found at least one expected memory in the top k ("answered"),
Recall@k (the share of each question's expected memories found, averaged) and MRR (1 / rank
of the first expected memory, averaged), per category, and for the 5 negative questions (which
expect nothing) the false-positive rate: the share of them that return any result.

    python evals/memory_devbench.py                       # top 5; default floor, then 0
    python evals/memory_devbench.py --top-k 3 --min-similarity 0.7 --verbose

The same questions as a `scoperag eval` file (overall figures, no categories):
evals/questions/memory_devbench.jsonl (and _floor_0), written by evals/make_questions.py.
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
    server: Any, queries: list[dict[str, Any]], top_k: int, floor: float | None, verbose: bool
) -> None:
    from fastmcp import Client

    per_category: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0, 0])
    negatives = false_positives = 0
    async with Client(server) as client:
        for query in queries:
            arguments: dict[str, Any] = {"query": query["question"], "page_size": top_k}
            if floor is not None:
                arguments["min_similarity"] = floor
            result = await client.call_tool("search", arguments)
            rows = result.structured_content.get("memories", [])
            expected = set(query["expected_tags"])
            ranks = [rank for rank, row in enumerate(rows, 1) if expected & set(row["tags"])]
            found = expected & {tag for row in rows for tag in row["tags"]}
            if not expected:
                negatives += 1
                false_positives += bool(rows)
            else:
                figures = per_category[query["category"]]
                figures[0] += bool(found)
                figures[1] += len(found) / len(expected)
                figures[2] += 1 / ranks[0] if ranks else 0.0
                figures[3] += 1
            if verbose:
                print(
                    f"  {query['id']:11} {len(found)}/{len(expected)} found, first at "
                    f"{ranks[0] if ranks else '-'}, {len(rows)} results, top score "
                    f"{rows[0]['score'] if rows else '-'}: {query['question']}"
                )
    answered, recall, mrr, count = (sum(f[i] for f in per_category.values()) for i in range(4))
    categories = ", ".join(
        f"{name} R@{top_k} {f[1] / f[3]:.2f}" for name, f in per_category.items()
    )
    label = "default" if floor is None else f"{floor:.2f}"
    print(
        f"min_similarity {label}: answered {answered:.0f}/{count:.0f}, Recall@{top_k} "
        f"{recall / count:.3f}, MRR {mrr / count:.3f} ({categories}); negative questions with "
        f"results: {false_positives}/{negatives} (false-positive rate "
        f"{false_positives / max(negatives, 1):.2f})",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument(
        "--min-similarity", type=float, action="append", dest="floors", help="repeatable"
    )
    parser.add_argument("--backend", choices=["local", "edge"], default=None)
    parser.add_argument("--verbose", action="store_true", help="one line per question")
    args = parser.parse_args()

    from scoperag.core.config.settings import Settings
    from scoperag.pipelines.memories import import_memories
    from scoperag.server.mcp.app import build_server
    from scoperag.server.runtime import Runtime

    data = json.loads(DATASET.read_text(encoding="utf-8"))
    settings = Settings(
        data_dir=Path(tempfile.mkdtemp()), backend=args.backend, profiles=["memory"]
    )
    runtime = Runtime(settings)
    report = import_memories(DATASET, runtime.backend, runtime.embedder)
    print(f"imported {len(report.stored)} devbench memories on '{runtime.backend.name}'")
    server = build_server(runtime)
    for floor in args.floors or [None, 0.0]:
        asyncio.run(run(server, data["queries"], args.top_k, floor, args.verbose))
    runtime.close()


if __name__ == "__main__":
    main()
