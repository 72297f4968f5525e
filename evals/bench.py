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
import random
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench_engine import AnonymousPeak, browse_engine, disk_mb, recall, rss_mb

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

RESULTS = Path(__file__).resolve().parent / "results"
ENGINES = ("local", "edge", "server")
SLOW_ENGINE_SIZE = 20_000  # above it, local mode (a Python scan, a commit per point) gets
SLOW_ENGINE_PROFILES = ["pdf", "memory"]  # fewer queries and two profiles: hours otherwise
PARTS = ("embedding", "engine", "glue", "mcp")  # where a call's time goes (bench_timing)


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _settings(data_dir: Path, backend: str, profile: str) -> Any:
    from scoperag.core.settings import Settings

    if backend == "server":
        return Settings(
            data_dir=data_dir, qdrant_url=os.environ["SCOPERAG_QDRANT_URL"], profiles=[profile]
        )
    return Settings(data_dir=data_dir, backend=backend, profiles=[profile])


def _nodes(scenario: Any, passages: list[Any], vectors: Any, start: int = 0) -> list[Any]:
    from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode

    from scoperag.pipelines.store import stable_id

    nodes = []
    for offset, passage in enumerate(passages):
        n = start + offset
        metadata, source = scenario.payload(n, passage)
        nodes.append(
            TextNode(
                id_=stable_id("bench", scenario.profile, n),
                text=passage.text,
                metadata=metadata,
                # as in the profiles' pipelines, the vector is of the text alone
                excluded_embed_metadata_keys=list(metadata),
                excluded_llm_metadata_keys=list(metadata),
                relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=source)},
                embedding=None if vectors is None else vectors[offset].tolist(),
            )
        )
    return nodes


def _bulk_load(
    runtime: Any, scenario: Any, fields: list[Any], corpus: list[Any], vectors: Any
) -> float:
    """Write the corpus with its cached vectors; returns nodes per second."""
    from scoperag.core.collections import prepare_for_writing

    backend = runtime.backend
    prepare_for_writing(backend, runtime.embedder, scenario.collection, fields)
    store = backend.vector_store(scenario.collection)
    began = time.perf_counter()
    for start in range(0, len(corpus), 1000):
        stop = start + 1000
        store.add(_nodes(scenario, corpus[start:stop], vectors[start:stop], start))
    return len(corpus) / (time.perf_counter() - began)


def _ingestion(runtime: Any, scenario: Any, fields: list[Any], held_out: list[Any]) -> dict:
    """Raw embedding throughput vs the pipeline's last steps (embed + write) on new nodes."""
    from scoperag.pipelines.store import EmbedNodes, write_nodes

    texts = [passage.text for passage in held_out]
    began = time.perf_counter()
    runtime.embedder.embed_texts(texts)
    raw = len(texts) / (time.perf_counter() - began)
    nodes = _nodes(scenario, held_out, None, start=10**9)
    began = time.perf_counter()
    EmbedNodes(embedder=runtime.embedder)(nodes)
    write_nodes(runtime.backend, runtime.embedder, scenario.collection, fields, nodes)
    ingest = len(nodes) / (time.perf_counter() - began)
    return {
        "texts": len(texts),
        "raw_embedding_per_s": round(raw, 1),
        "ingestion_per_s": round(ingest, 1),
        "ratio": round(ingest / raw, 3),
    }


async def _tool_calls(
    runtime: Any, real: Any, scenario: Any, queries: list[str], clock: Any
) -> dict:
    from bench_timing import TimedBackend, percentiles, raw_query
    from fastmcp import Client

    from scoperag.server.app import build_server

    runtime.embedder.clock = clock
    runtime.__dict__["backend"] = TimedBackend(real, clock)
    rng = random.Random(3)
    results: dict[str, Any] = {}
    async with Client(build_server(runtime)) as client:
        for tool, arguments in scenario.setup:
            await client.call_tool(tool, arguments)
        for call in scenario.calls:
            rows: dict[str, list[float]] = {k: [] for k in (*PARTS, "total", "raw")}
            hits = 0
            for number, query in enumerate([*queries[:3], *queries]):
                arguments = call.arguments(query, rng)
                clock.reset()
                began = time.perf_counter()
                result = await client.call_tool(call.tool, arguments, raise_on_error=False)
                total = time.perf_counter() - began
                if result.is_error:
                    raise RuntimeError(f"{call.tool} {arguments}: {result.content[0].text}")
                if number < 3:  # warm-up
                    continue
                rows["total"].append(total)
                rows["embedding"].append(clock.embedding)
                rows["engine"].append(clock.engine)
                rows["glue"].append(clock.handler - clock.embedding - clock.engine)
                rows["mcp"].append(total - clock.handler)
                hits += bool(result.structured_content or result.content)
                last = clock.last_query
                if last and not call.browse:
                    began = time.perf_counter()
                    raw_query(
                        real, scenario.collection, last["vector"], last["filter"], last["top_k"]
                    )
                    rows["raw"].append(time.perf_counter() - began)
            without = [t - e for t, e in zip(rows["total"], rows["embedding"], strict=True)]
            summary = {
                "n": len(rows["total"]),
                "answered": hits,
                "browse": call.browse,
                "total": percentiles(rows["total"]),
                "without_embedding": percentiles(without),
                **{part: percentiles(rows[part]) for part in PARTS},
            }
            if rows["raw"]:
                summary["raw_engine"] = percentiles(rows["raw"])
                summary["overhead_ratio"] = round(
                    summary["without_embedding"]["p50"] / max(summary["raw_engine"]["p50"], 1e-3),
                    1,
                )
            results[call.label] = summary
            _log(f"  {call.label}: {summary['without_embedding']} ms without embedding")
    return results


@contextmanager
def cpu_burner(busy: bool) -> Iterator[None]:
    """With `busy`, another process keeps one core busy meanwhile (the issue's p95 condition)."""
    if not busy:
        yield
        return
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        burner.kill()
        burner.wait()


def _store_dir(options: dict[str, Any], backend: str, size: int, profile: str) -> Path:
    """A fresh data dir, or with --store a kept one per checkout, engine, size and profile."""
    if not options["store"]:
        return Path(tempfile.mkdtemp(prefix=f"bench-{backend}-"))
    return Path(options["store"]) / f"{options['code']}-{backend}-{size}-{profile}"


def run_scenario(
    scenario: Any,
    backend: str,
    size: int,
    data: tuple[list, Any, list[str], list],
    embedder: Any,
    options: dict[str, Any],
) -> dict:
    """Fill one profile's collection on one engine (or reuse a kept one) and measure it."""
    import importlib

    from scoperag.core.contracts.registry import CONTRACT_MODULES
    from scoperag.server.runtime import Runtime

    corpus, vectors, queries, held_out = data
    data_dir = _store_dir(options, backend, size, scenario.profile)
    filled = (data_dir / "filled").is_file()
    settings = _settings(data_dir, backend, scenario.profile)
    contract = importlib.import_module(CONTRACT_MODULES[scenario.profile])
    fields = contract.required_indexes(settings)[scenario.collection]
    runtime = Runtime(settings, embedder=embedder)
    out: dict[str, Any] = {}
    try:
        real = getattr(runtime.backend, "engine", runtime.backend)  # the engine, not sharing
        if not filled:
            out["bulk_load_per_s"] = round(_bulk_load(runtime, scenario, fields, corpus, vectors))
            _log(f" {scenario.profile}: loaded {size} nodes at {out['bulk_load_per_s']}/s")
            (data_dir / "filled").touch()
        if held_out and not options["quick"]:
            out["ingestion"] = _ingestion(runtime, scenario, fields, held_out)
            _log(f"  ingestion {out['ingestion']}")
        with cpu_burner(options["busy"]):
            calls = _tool_calls(runtime, real, scenario, queries, options["clock"])
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
    from bench_timing import Clock, HandlerClock, TimedEmbedder

    from scoperag.core.settings import Settings

    warnings.simplefilter("ignore")
    queries, profiles = options["queries"], options["profiles"]
    if backend == "local" and size > SLOW_ENGINE_SIZE:
        queries = max(10, queries // 3)
        profiles = [profile for profile in profiles if profile in SLOW_ENGINE_PROFILES]
    embedder = TimedEmbedder(Settings())
    options["clock"] = Clock()
    HandlerClock(options["clock"])
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
