"""`find_duplicates` at 10,000 memories: time through MCP, peak memory, planted duplicates found.

The memories are the benchmark corpus's real passages (`bench_corpus`, facets as in
`memory_bench`), plus planted duplicates of some of them: the same text in other case and
spacing (found as "same text") and light rewordings (a prefix or suffix added, found by their
embeddings). Vectors come from the corpus's on-disk cache (evals/cache/): the texts are embedded
once across runs. Then `find_duplicates` is called through `fastmcp.Client` in memory a few
times at its defaults (and the engine's `neighbours` alone): p50 and slowest call, wall and CPU
time, the process's peak resident memory, how many planted duplicates landed in their
original's group, and how many of the pairs an exact comparison finds the engine found.

    python evals/memory_duplicates_bench.py                 # 10,000 memories on Edge
    python evals/memory_duplicates_bench.py --size 2000 --runs 3 --backend local
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

import numpy  # noqa: E402
from bench_corpus import cached_vectors, passages  # noqa: E402
from memory_bench import CachedEmbedder, make_memories  # noqa: E402

from scoperag.core.config.settings import Settings  # noqa: E402
from scoperag.pipelines.memories import store_memories  # noqa: E402
from scoperag.server.profiles.memory.duplicates import (  # noqa: E402
    NEIGHBOURS_PER_MEMORY as NEAREST,
)
from scoperag.server.profiles.memory.duplicates import normalised  # noqa: E402

THRESHOLD = 0.92  # find_duplicates' default
PREFIXES = ["Note: ", "Reminder: ", "Remember that ", "FYI, "]
SUFFIXES = [" (again)", " - noted twice.", " Still true."]


def planted(texts: list[str], share: float, seed: int = 5) -> dict[str, str]:
    """Duplicate -> its original, for `share` of the texts: half in other case and spacing,
    half reworded slightly."""
    rng = random.Random(seed)
    chosen = rng.sample(texts, round(len(texts) * share))
    copies = {}
    for number, text in enumerate(chosen):
        if number % 2:
            copy = "  ".join(text.upper().split()) if number % 4 == 1 else f" {text.lower()} "
        else:
            copy = rng.choice(PREFIXES) + text if number % 4 == 0 else text + rng.choice(SUFFIXES)
        copies[copy] = text
    return copies


async def measure(server: Any, runs: int) -> tuple[list[float], list[float], dict[str, Any]]:
    """Wall and CPU seconds (the process's, every thread's) of each `find_duplicates` call at
    its defaults, and then every group (limit 1000, not timed) to check the planted ones."""
    from fastmcp import Client

    seconds, cpu = [], []
    async with Client(server) as client:
        for _ in range(runs):
            began, used = time.perf_counter(), time.process_time()
            await client.call_tool("find_duplicates", {})
            seconds.append(time.perf_counter() - began)
            cpu.append(time.process_time() - used)
        every = await client.call_tool("find_duplicates", {"limit": 1000})
    return seconds, cpu, every.structured_content


def found_share(result: dict[str, Any], copies: dict[str, str]) -> dict[str, list[int]]:
    """Per kind of copy (same text, reworded): [copies in their original's group, copies], of
    the copies stored apart from their original (a copy equal to it once stripped is not)."""
    group_of = {}
    for number, group in enumerate(result["groups"]):
        for member in group["members"]:
            group_of[member["content"]] = number
    shares = {"same text": [0, 0], "reworded": [0, 0]}
    for copy, original in copies.items():
        if copy.strip() == original:
            continue
        kind = "same text" if normalised(copy) == normalised(original) else "reworded"
        shares[kind][1] += 1
        group = group_of.get(copy.strip())
        shares[kind][0] += group is not None and group == group_of.get(original)
    return shares


def exact_pairs(
    runtime: Any, embedder: CachedEmbedder, threshold: float
) -> tuple[dict[Any, str], set[tuple[str, str]], set[tuple[str, str]]]:
    """The stored memories' texts by point id; every two of them whose cosine is at least
    `threshold`, compared exactly (numpy); and those of them among one's NEAREST nearest (what
    `find_duplicates` asks the engine for)."""
    records = runtime.backend.scroll("memories", None, limit=len(embedder.rows) + 1)
    text_of = {record.id: record.payload["content"] for record in records}
    texts = sorted(set(text_of.values()))
    rows = {text.strip(): row for text, row in embedder.rows.items()}
    vectors = embedder.cached[[rows[text] for text in texts]]
    unit = vectors / numpy.linalg.norm(vectors, axis=1, keepdims=True)
    every, nearest = set(), set()
    for start in range(0, len(unit), 1000):
        cosines = unit[start : start + 1000] @ unit.T
        for offset, row in enumerate(cosines):
            point = start + offset
            row[point] = -2.0  # not its own neighbour
            above = numpy.nonzero(row >= threshold - 1e-6)[0]
            top = above[numpy.argsort(-row[above], kind="stable")][:NEAREST]
            every |= {tuple(sorted((texts[point], texts[other]))) for other in above.tolist()}
            nearest |= {tuple(sorted((texts[point], texts[other]))) for other in top.tolist()}
    return text_of, every, nearest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000, help="memories from the corpus")
    parser.add_argument("--planted", type=float, default=0.02, help="copies planted, a share")
    parser.add_argument("--backend", choices=["local", "edge"], default="edge")
    parser.add_argument("--runs", type=int, default=5, help="find_duplicates calls timed")
    args = parser.parse_args()

    from scoperag.server.mcp.app import build_server
    from scoperag.server.runtime import Runtime

    corpus = passages(args.size)
    copies = planted([p.text for p in corpus], args.planted)
    texts = [p.text for p in corpus] + list(copies)
    sources = [p.source for p in corpus] + ["planted"] * len(copies)
    settings = Settings(data_dir=Path(tempfile.mkdtemp()), backend=args.backend)
    embedder = CachedEmbedder(settings)
    began = time.perf_counter()
    vectors = [
        cached_vectors(part, embedder, log=True) for part in (texts[: len(corpus)], [*copies])
    ]
    embedder.use_cache(texts, numpy.concatenate(vectors))
    print(f"{len(texts)} vectors ready in {time.perf_counter() - began:.1f} s (disk cache)")
    runtime = Runtime(settings.model_copy(update={"profiles": ["memory"]}), embedder=embedder)
    began = time.perf_counter()
    report = store_memories(
        runtime.backend, embedder, make_memories(texts, sources), batch_size=1000
    )
    print(f"{len(report.stored)} memories written in {time.perf_counter() - began:.1f} s")

    began, used = time.perf_counter(), time.process_time()
    pairs = runtime.backend.neighbours("memories", None, THRESHOLD, NEAREST)
    engine = time.perf_counter() - began
    engine_cpu = time.process_time() - used
    text_of, every, nearest = exact_pairs(runtime, embedder, THRESHOLD)
    found = {tuple(sorted((text_of[first], text_of[second]))) for first, second, _ in pairs}
    print(
        f"engine neighbours alone: {engine:.2f} s (CPU {engine_cpu:.2f} s); pairs at cosine "
        f">= {THRESHOLD} found: "
        f"{len(found & nearest)} of the {len(nearest)} within one's {NEAREST} nearest, "
        f"{len(found & every)} of all {len(every)} (exact comparison, numpy); "
        f"{len(found - every)} others"
    )
    seconds, cpu, result = asyncio.run(measure(build_server(runtime), args.runs))
    shares = found_share(result, copies)
    grouped = ", ".join(f"{kind} {found}/{total}" for kind, (found, total) in shares.items())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    runtime.close()
    print(
        f"find_duplicates at {len(report.stored)} memories on {args.backend}: p50 "
        f"{statistics.median(seconds):.2f} s, max {max(seconds):.2f} s over {args.runs} runs "
        f"(CPU p50 {statistics.median(cpu):.2f} s; load average {os.getloadavg()[0]:.1f}); "
        f"{result['total_groups']} groups; planted copies in their original's group: "
        f"{grouped}; peak resident memory {peak:.0f} MB"
    )


if __name__ == "__main__":
    main()
