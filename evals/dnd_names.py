"""D&D name lookups as people type them: typos, spacing and case, top-1 accuracy per tool.

The queries are in evals/data/dnd_name_queries.json (committed; `--make-dataset` rebuilds it
deterministically from ../shared/data/dnd): for each lookup tool, names drawn from the files
and typed with a case change, a space removed or added, one letter dropped, doubled or two
swapped, or the words of "Crossbow, light" turned around. A variant that equals another name
is left out (it would be that name). Each query is asked through the MCP lookup tool; top-1 is
right when the first result carries the intended name (from any document).

    python evals/dnd_names.py --store /tmp/dnd        # ingest once, reuse after
    python evals/dnd_names.py --make-dataset          # rewrite the committed query set

The same queries as a `scoperag eval` file (run with `--k 1`; no per-slip figures):
evals/questions/dnd_names.jsonl, written by evals/make_questions.py.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

from dnd_filter_precision import DATA, TOOL_KINDS, ingest, records  # noqa: E402

DATASET = Path(__file__).resolve().parent / "data" / "dnd_name_queries.json"
PER_TOOL = 24


def _plain(name: str) -> str:
    return "".join(ch for ch in name.casefold() if ch.isalnum())


def variant(name: str, how: str, rng: random.Random) -> str:
    """`name` typed with one kind of slip."""
    if how == "case":
        return rng.choice([name.lower(), name.upper(), name.swapcase()])
    if how == "spacing":
        words = name.split()
        if len(words) > 1:
            at = rng.randrange(len(words) - 1)
            return " ".join([*words[:at], words[at] + words[at + 1], *words[at + 2 :]])
        at = rng.randrange(2, len(name) - 1)
        return f"{name[:at]} {name[at:]}"
    if how == "order":
        head, _, tail = name.partition(", ")
        return f"{tail} {head}".lower()
    at = rng.randrange(1, len(name) - 1)  # typo: keep the first letter
    slips = [
        name[:at] + name[at + 1 :],
        name[:at] + name[at] + name[at:],
        name[:at] + name[at + 1] + name[at] + name[at + 2 :],
    ]
    return rng.choice(slips)


def make_dataset(seed: int = 14) -> list[dict[str, str]]:
    items = records(DATA)
    rng = random.Random(seed)
    queries = []
    for tool, kind in TOOL_KINDS.items():
        names = sorted({item["name"] for item in items if item["kind"] == kind})
        known = {_plain(name) for name in names}
        picked = 0
        for name in rng.sample(names, len(names)):
            if picked == PER_TOOL:
                break
            if len(name) < 4:
                continue
            hows = ["case", "spacing", "typo", "typo"] + (["order"] if ", " in name else [])
            how = rng.choice(hows)
            query = variant(name, how, rng)
            if how != "case" and _plain(query) in known - {_plain(name)}:
                continue  # the slip spells another name
            queries.append({"tool": tool, "query": query, "name": name, "slip": how})
            picked += 1
    return queries


async def run(runtime: Any, queries: list[dict[str, str]]) -> None:
    from fastmcp import Client

    from scoperag.server.mcp.app import build_server

    right: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    by_slip: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    misses = []
    async with Client(build_server(runtime)) as client:
        for case in queries:
            result = await client.call_tool(case["tool"], {"name": case["query"], "limit": 3})
            hits = result.structured_content.get("results", [])
            top = hits[0]["name"] if hits else None
            ok = top is not None and _plain(top) == _plain(case["name"])
            for table, key in ((right, case["tool"]), (by_slip, case["slip"])):
                table[key][0] += ok
                table[key][1] += 1
            if not ok:
                misses.append(
                    f"  {case['tool']}({case['query']!r}) -> {top!r}, not {case['name']!r}"
                )
    for tool, (good, asked) in sorted(right.items()):
        print(f"{tool:<24} top-1 {good}/{asked} = {good / asked:.3f}")
    print("by slip: " + ", ".join(f"{k} {g}/{n}" for k, (g, n) in sorted(by_slip.items())))
    total = sum(g for g, _ in right.values()), sum(n for _, n in right.values())
    print(f"all tools: top-1 {total[0]}/{total[1]} = {total[0] / total[1]:.3f}")
    print("\n".join(misses) or "no misses")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, default=None, help="Data dir to keep or reuse.")
    parser.add_argument("--backend", choices=["local", "edge"], default=None)
    parser.add_argument("--make-dataset", action="store_true", help="Rewrite the query set.")
    args = parser.parse_args()
    if args.make_dataset:
        queries = make_dataset()
        DATASET.write_text(json.dumps(queries, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {len(queries)} queries to {DATASET}")
        return

    from scoperag.core.config.settings import Settings
    from scoperag.core.contracts.dnd import COLLECTION
    from scoperag.server.runtime import Runtime

    store = args.store or Path(tempfile.mkdtemp(prefix="dnd-names-"))
    runtime = Runtime(Settings(data_dir=store, profiles=["dnd"], backend=args.backend))
    if runtime.backend.collection_exists(COLLECTION):
        print(f"reusing the store in {store}")
    else:
        ingest(runtime, DATA)
    asyncio.run(run(runtime, json.loads(DATASET.read_text(encoding="utf-8"))))
    runtime.close()


if __name__ == "__main__":
    main()
