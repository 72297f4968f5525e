"""Filter precision of the dnd tools: over many generated calls, does every result obey them?

Ingests ../shared/data/dnd (wotc-srd, a5e, tob) with the real pipeline and model (timing it),
then makes `--calls` random calls through `fastmcp.Client` in memory: each tool, a random
non-empty `documents` selection, random filters and names (exact, partial, misspelt) drawn
from the data. It prints

- document precision: results whose `document` is in `documents` / all results (must be 1.0);
- filter precision: results that also satisfy every other filter and the tool's kind (1.0);
- totals: lookups without `name` whose `total` equals the count of matching records in the
  files (exactness of the filters, not only their precision);
- latency p50/p95 per tool, ingestion time and throughput, peak memory.

    python evals/dnd_filter_precision.py                      # ingest into a temp dir
    python evals/dnd_filter_precision.py --store /tmp/dnd     # keep / reuse an ingested store
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from fractions import Fraction
from pathlib import Path
from typing import Any

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

from fastmcp import Client  # noqa: E402

from scoperag.core.config.settings import Settings  # noqa: E402
from scoperag.core.contracts.dnd import COLLECTION  # noqa: E402
from scoperag.server.mcp.app import build_server  # noqa: E402
from scoperag.server.profiles.dnd.service import ingest_paths  # noqa: E402
from scoperag.server.runtime import Runtime  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "dnd"
SUBTYPES = {  # model -> (kind, sub-type key, value)
    "api.weapon": ("equipment", "item_type", "weapon"),
    "api.armor": ("equipment", "item_type", "armor"),
    "api.magicitem": ("equipment", "item_type", "magic-item"),
    "api.charclass": ("character-option", "option_type", "class"),
    "api.archetype": ("character-option", "option_type", "archetype"),
    "api.race": ("character-option", "option_type", "race"),
    "api.subrace": ("character-option", "option_type", "subrace"),
    "api.background": ("character-option", "option_type", "background"),
    "api.feat": ("character-option", "option_type", "feat"),
    "api.section": ("rule", "rule_type", "section"),
    "api.condition": ("rule", "rule_type", "condition"),
    "api.plane": ("rule", "rule_type", "plane"),
}
TOOL_KINDS = {
    "lookup_spell": "spell",
    "lookup_creature": "creature",
    "lookup_equipment": "equipment",
    "lookup_character_option": "character-option",
    "lookup_rule": "rule",
}
SUBTYPE_OF_TOOL = {
    "lookup_equipment": "item_type",
    "lookup_character_option": "option_type",
    "lookup_rule": "rule_type",
}
QUERIES = [
    "a spell that deals fire damage in a cone",
    "undead that drains life",
    "a magic item that grants flying speed",
    "a creature that cannot see",
    "resistance to poison damage",
    "heal an ally",
    "breath weapon",
    "a feat for heavy armor",
]


def records(data: Path) -> list[dict[str, Any]]:
    """The items of the data as the tools describe them, read straight from the files."""
    items = []
    for folder in sorted(p.parent for p in data.glob("*/Document.json")):
        document = json.loads((folder / "Document.json").read_text())[0]
        slug = document["fields"]["slug"]
        for path in sorted(folder.glob("*.json")):
            for record in json.loads(path.read_text()):
                fields, model = record.get("fields", {}), record.get("model")
                item = {"document": slug, "name": fields.get("name")}
                if model == "api.spell":
                    item |= {"kind": "spell", "level": fields["spell_level"]}
                    item["school"] = fields["school"].lower()
                elif model == "api.monster":
                    item |= {"kind": "creature", "type": fields["type"].lower()}
                    item["challenge_rating"] = float(Fraction(fields["challenge_rating"]))
                elif model in SUBTYPES:
                    kind, key, value = SUBTYPES[model]
                    item |= {"kind": kind, key: value}
                else:
                    continue
                items.append(item)
    return items


def misspell(name: str, rng: random.Random) -> str:
    """A name with one letter dropped or doubled, as people type them."""
    at = rng.randrange(len(name))
    return name[:at] + name[at + 1 :] if rng.random() < 0.5 else name[:at] + name[at] + name[at:]


def generate_call(rng: random.Random, items: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """A random tool with a random non-empty `documents` selection and filters from the data."""
    slugs = sorted({item["document"] for item in items})
    arguments: dict[str, Any] = {"documents": rng.sample(slugs, rng.randint(1, len(slugs)))}
    tool = rng.choice(["search_dnd_content", *TOOL_KINDS])
    if tool == "search_dnd_content":
        named = rng.choice(items)["name"]
        query = rng.choice([rng.choice(QUERIES), named, misspell(named, rng)])
        return tool, arguments | {"query": query, "limit": rng.choice([5, 10, 25])}
    pool = [item for item in items if item["kind"] == TOOL_KINDS[tool]]
    example = rng.choice(pool)
    keys = {
        "lookup_spell": ["level", "school"],
        "lookup_creature": ["type", "challenge_rating"],
    }.get(tool, [SUBTYPE_OF_TOOL.get(tool, "")])
    for key in keys:
        if rng.random() < 0.6:
            arguments[key] = example[key]
    roll = rng.random()
    if roll < 0.2:
        arguments["name"] = example["name"]
    elif roll < 0.3:
        arguments["name"] = misspell(example["name"], rng)
    elif roll < 0.4:
        arguments["name"] = example["name"].split()[-1]
    arguments["limit"] = rng.choice([5, 20, 100])
    return tool, arguments


def obeys(tool: str, arguments: dict[str, Any], hit: dict[str, Any]) -> bool:
    """Does a result satisfy every filter given and belong to the tool's kind?"""
    if tool in TOOL_KINDS and hit["kind"] != TOOL_KINDS[tool]:
        return False
    skip = {"documents", "name", "query", "limit"}
    return all(hit.get(key) == value for key, value in arguments.items() if key not in skip)


def expected_total(tool: str, arguments: dict[str, Any], items: list[dict[str, Any]]) -> int:
    """How many items of the files match a lookup without `name`."""
    return sum(
        1
        for item in items
        if item["kind"] == TOOL_KINDS[tool]
        and item["document"] in arguments["documents"]
        and obeys(tool, arguments, item)
    )


def percentile(values: list[float], share: float) -> float:
    return statistics.quantiles(values, n=100)[int(share * 100) - 1] if len(values) > 1 else 0.0


async def run_calls(runtime: Runtime, calls: list[tuple[str, dict]], items: list) -> dict:
    figures: dict[str, Any] = defaultdict(int)
    latency: dict[str, list[float]] = defaultdict(list)
    async with Client(build_server(runtime)) as client:
        for tool, arguments in calls:
            started = time.perf_counter()
            result = (await client.call_tool(tool, arguments)).structured_content
            latency[tool].append((time.perf_counter() - started) * 1000)
            hits = result["results"]
            figures["results"] += len(hits)
            figures["empty calls"] += not hits
            figures["in documents"] += sum(
                hit["document"] in arguments["documents"] for hit in hits
            )
            figures["obeying filters"] += sum(
                hit["document"] in arguments["documents"] and obeys(tool, arguments, hit)
                for hit in hits
            )
            if tool in TOOL_KINDS and "name" not in arguments:
                figures["totals checked"] += 1
                figures["totals agreeing"] += result["total"] == expected_total(
                    tool, arguments, items
                )
    figures["latency"] = latency
    return figures


def ingest(runtime: Runtime, data: Path) -> None:
    started, cpu = time.perf_counter(), time.process_time()
    result = ingest_paths(runtime, [data], None)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    print(f"ingested {result.items} items from {result.ingested} files "
          f"({result.skipped} skipped) in {wall:.1f} s wall, {cpu:.1f} s CPU: "
          f"{result.items / wall:.1f} items/s")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="Folder of Open5e folders.")
    parser.add_argument("--store", type=Path, default=None, help="Data dir to keep or reuse.")
    parser.add_argument("--calls", type=int, default=600, help="How many generated calls.")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--backend", choices=["local", "edge"], default=None)
    args = parser.parse_args()

    store = args.store or Path(tempfile.mkdtemp(prefix="dnd-eval-"))
    runtime = Runtime(Settings(data_dir=store, profiles=["dnd"], backend=args.backend))
    if runtime.backend.collection_exists(COLLECTION):
        print(f"reusing the store in {store}")
    else:
        ingest(runtime, args.data)
    items = records(args.data)
    rng = random.Random(args.seed)
    calls = [generate_call(rng, items) for _ in range(args.calls)]
    figures = asyncio.run(run_calls(runtime, calls, items))
    embedding = []  # search time = call time - this (the query's embedding)
    for query in QUERIES * 3:
        started = time.perf_counter()
        runtime.embedder.backend.embed_query(query)  # the model, not the recent queries
        embedding.append((time.perf_counter() - started) * 1000)
    runtime.close()

    results = figures["results"]
    document_precision = figures["in documents"] / results if results else 1.0
    filter_precision = figures["obeying filters"] / results if results else 1.0
    print(f"engine: {runtime.settings.effective_backend}; {args.calls} calls, {results} results, "
          f"{figures['empty calls']} calls with none")  # fmt: skip
    print(f"document precision: {document_precision:.4f}")
    print(f"filter precision:   {filter_precision:.4f}")
    print(f"totals equal to the files' counts: {figures['totals agreeing']}"
          f"/{figures['totals checked']}")  # fmt: skip
    for tool, values in sorted(figures["latency"].items()):
        print(f"  {tool:<24} {len(values):>4} calls  p50 {statistics.median(values):6.1f} ms"
              f"  p95 {percentile(values, 0.95):6.1f} ms")  # fmt: skip
    print(f"  query embedding alone    p50 {statistics.median(embedding):6.1f} ms"
          f"  p95 {percentile(embedding, 0.95):6.1f} ms")  # fmt: skip
    print(f"peak memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    exact = figures["totals agreeing"] == figures["totals checked"]
    return 0 if document_precision == filter_precision == 1.0 and exact else 1


if __name__ == "__main__":
    sys.exit(main())
