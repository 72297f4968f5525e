"""Benchmark harness: every profile's typical tool calls on every engine, at 10k and 100k nodes.

    python evals/bench.py --sizes 10000 100000 --backends local edge     (or `scoperag bench`)

For each size and engine a worker process (so peak memory is its own) fills each profile's
collection with `size` nodes of real text and cached real embeddings (evals/bench_corpus.py), then
measures through the MCP tools over an in-memory client: p50/p95 per call split into embedding,
engine and overhead; the same vector query straight on the engine (the overhead ratio); the
query-less recency browse; recall@10 against exact search per filter shape (Edge); bulk-load and
ingestion throughput against raw embedding throughput; peak memory; on-disk size; reopen time.
Writes evals/results/bench.json, bench.md and bench.png. Add `server` (with SCOPERAG_QDRANT_URL)
to measure a Qdrant server too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench_engine import AnonymousPeak, browse_engine, disk_mb, recall, rss_mb  # noqa: E402
from bench_load import bulk_load, ingestion, settings_for, store_dir  # noqa: E402
from bench_timing import cpu_burner, measure_calls  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
ENGINES = ("local", "edge", "server")
SLOW_ENGINE_SIZE = 20_000  # above it, local mode (a Python scan, a commit per point) gets
SLOW_ENGINE_PROFILES = ["pdf", "memory"]  # fewer queries and two profiles: hours otherwise


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_scenario(
    scenario: Any,
    backend: str,
    size: int,
    data: tuple[list, Any, list[str], list],
    embedder: Any,
    options: dict[str, Any],
) -> dict:
    """Fill one profile's collection on one engine (or reuse a kept one) and measure it."""
    from scoperag.core.contracts.registry import contract_module
    from scoperag.server.runtime import Runtime

    corpus, vectors, queries, held_out = data
    data_dir = store_dir(options, backend, size, scenario.profile)
    filled = (data_dir / "filled").is_file()
    settings = settings_for(data_dir, backend, scenario.profile)
    contract = contract_module(scenario.profile)
    fields = contract.required_indexes(settings)[scenario.collection]
    runtime = Runtime(settings, embedder=embedder)
    out: dict[str, Any] = {}
    try:
        real = getattr(runtime.backend, "engine", runtime.backend)  # the engine, not sharing
        if not filled:
            out["bulk_load_per_s"] = round(bulk_load(runtime, scenario, fields, corpus, vectors))
            _log(f" {scenario.profile}: loaded {size} nodes at {out['bulk_load_per_s']}/s")
            (data_dir / "filled").touch()
        if held_out and not options["quick"]:
            out["ingestion"] = ingestion(runtime, scenario, fields, held_out)
            _log(f"  ingestion {out['ingestion']}")
        with cpu_burner(options["busy"]):
            calls = measure_calls(runtime, real, scenario, queries, options["clock"], _log)
            out["calls"] = asyncio.run(calls)
        runtime.__dict__["backend"] = real
        if scenario.recency_key:
            out["browse_engine"] = browse_engine(real, scenario, len(queries))
        if backend == "edge" and scenario.shapes and not options["quick"]:
            query_vectors = embedder.embed_texts(queries)
            out["recall"] = recall(real, scenario, query_vectors, size)
            _log(f"  recall {out['recall']}")
        runtime.close()
        if not options["quick"]:
            began = time.perf_counter()
            reopened = Runtime(settings, embedder=embedder)
            reopened.backend.count(scenario.collection, None)
            out["reopen_s"] = round(time.perf_counter() - began, 3)
            reopened.close()
            out["disk_mb"] = disk_mb(data_dir)
    finally:
        runtime.close()
        if not options["store"]:
            shutil.rmtree(data_dir, ignore_errors=True)
    return out


def worker(size: int, backend: str, options: dict[str, Any]) -> dict:
    """One engine at one size, every scenario; returns the figures as a dict."""
    from bench_corpus import cached_vectors, passages
    from bench_scenarios import scenarios
    from bench_timing import ClientChecksClock, Clock, HandlerClock, TimedEmbedder

    from scoperag.core.config.settings import Settings

    warnings.simplefilter("ignore")
    queries, profiles = options["queries"], options["profiles"]
    if backend == "local" and size > SLOW_ENGINE_SIZE:
        queries = max(10, queries // 3)
        profiles = [profile for profile in profiles if profile in SLOW_ENGINE_PROFILES]
    embedder = TimedEmbedder(Settings())
    options["clock"] = Clock()
    HandlerClock(options["clock"])
    ClientChecksClock(options["clock"])
    corpus = passages(size + queries + 256)
    texts = [passage.text for passage in corpus[:size]]
    vectors = cached_vectors(texts, embedder, log=True)
    query_texts = [passage.text for passage in corpus[size : size + queries]]
    held_out = corpus[size + queries :]
    embedder.embed_query("warm up")
    baseline = rss_mb()
    anonymous = AnonymousPeak()
    anonymous.start()
    result: dict[str, Any] = {"backend": backend, "size": size, "queries": queries}
    result |= {"code": options["code"], "busy": options["busy"], "scenarios": {}}
    for number, scenario in enumerate(s for s in scenarios(size) if s.profile in profiles):
        _log(f"[{options['code']} {backend} {size}] {scenario.profile}")
        data = (corpus[:size], vectors, query_texts, held_out if number == 0 else [])
        result["scenarios"][scenario.profile] = run_scenario(
            scenario, backend, size, data, embedder, options
        )
    result["baseline_rss_mb"] = baseline
    result["peak_rss_mb"] = rss_mb()
    result["peak_anonymous_mb"] = round(anonymous.peak_mb, 1)
    return result


def _run_worker(python: str, size: int, backend: str, options: dict[str, Any]) -> dict:
    """`worker` in a process of its own, under `python` (a checkout's venv: its scoperag)."""
    command = [
        python,
        __file__,
        "--worker",
        json.dumps({**options, "size": size, "backend": backend}),
    ]
    _log(f"== {options['code']}: {backend} at {size} nodes")
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--backends", nargs="+", default=["local", "edge"], choices=ENGINES)
    parser.add_argument("--queries", type=int, default=30, help="Measured calls per tool call.")
    parser.add_argument("--profiles", nargs="+", default=["pdf", "books", "memory", "dnd", "docs"])
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--before",
        type=Path,
        help="Also measure this checkout (e.g. /work/wt/before, with its own .venv) the same\n"
        "way, one run each in turn, and report before and after side by side.",
    )
    parser.add_argument(
        "--busy",
        action="store_true",
        help="Keep one core busy with another process while the tool calls are measured.",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="Tool calls only: no ingestion, recall, reopen or disk figures.",
    )
    parser.add_argument(
        "--store",
        type=Path,
        help="Keep the filled stores in this folder and reuse them on the next run.",
    )
    parser.add_argument(
        "--merge",
        action="store_true",
        help="Keep the other runs of an earlier bench.json in --out (re-run one engine or size).",
    )
    parser.add_argument(
        "--report", action="store_true", help="Only rewrite bench.md and bench.png from bench.json."
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        options = json.loads(args.worker)
        print(json.dumps(worker(options.pop("size"), options.pop("backend"), options)))
        return
    from bench_report import write_report

    earlier = args.out / "bench.json"
    if args.report:
        write_report(json.loads(earlier.read_text()), args.out)
        return
    options = {
        "queries": args.queries,
        "profiles": args.profiles,
        "busy": args.busy,
        "quick": args.quick,
        "store": str(args.store.resolve()) if args.store else None,
    }
    checkouts = {"after": sys.executable}
    if args.before:
        checkouts = {"before": str(args.before.resolve() / ".venv" / "bin" / "python"), **checkouts}
    runs = []
    if args.merge and earlier.is_file():
        wanted = {(s, b, c) for s in args.sizes for b in args.backends for c in checkouts}
        runs = [r for r in json.loads(earlier.read_text()) if _key(r) not in wanted]
    for size in args.sizes:
        for backend in args.backends:
            for code, python in checkouts.items():
                runs.append(_run_worker(python, size, backend, {**options, "code": code}))
    runs.sort(key=lambda run: (run["size"], ENGINES.index(run["backend"]), run.get("code", "")))
    write_report(runs, args.out)


def _key(run: dict[str, Any]) -> tuple[int, str, str]:
    return run["size"], run["backend"], run.get("code", "after")


if __name__ == "__main__":
    main()
