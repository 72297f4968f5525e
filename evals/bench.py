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
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

RESULTS = Path(__file__).resolve().parent / "results"
ENGINES = ("local", "edge", "server")
SLOW_ENGINE_SIZE = 20_000  # above it, local mode (a Python scan, a commit per point) gets
SLOW_ENGINE_PROFILES = ["pdf", "memory"]  # fewer queries and two profiles: hours otherwise


def _rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


class AnonymousPeak(threading.Thread):
    """Samples RssAnon: resident memory that is not a mapped file (mapped storage files count
    in RSS while cached, but the kernel can drop those pages)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak_mb = 0.0

    def run(self) -> None:
        while True:
            for line in Path("/proc/self/status").read_text().splitlines():
                if line.startswith("RssAnon:"):
                    self.peak_mb = max(self.peak_mb, int(line.split()[1]) / 1024)
            time.sleep(0.2)


def _disk_mb(path: Path) -> float:
    """Allocated size, like `du` (Edge preallocates sparse files: their length says little)."""
    return round(sum(f.stat().st_blocks * 512 for f in path.rglob("*") if f.is_file()) / 2**20, 1)


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


async def _tool_calls(runtime: Any, real: Any, scenario: Any, queries: list[str]) -> dict:
    from bench_timing import Clock, TimedBackend, TimedEmbedder, percentiles, raw_query
    from fastmcp import Client

    from scoperag.server.app import build_server

    clock = Clock()
    runtime.__dict__["embedder"] = TimedEmbedder(runtime.embedder, clock)
    runtime.__dict__["backend"] = TimedBackend(real, clock)
    rng = random.Random(3)
    results: dict[str, Any] = {}
    async with Client(build_server(runtime)) as client:
        for tool, arguments in scenario.setup:
            await client.call_tool(tool, arguments)
        for call in scenario.calls:
            rows: dict[str, list[float]] = {k: [] for k in ("total", "emb", "eng", "raw")}
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
                rows["emb"].append(clock.embedding)
                rows["eng"].append(clock.engine)
                hits += bool(result.structured_content or result.content)
                last = clock.last_query
                if last and not call.browse:
                    began = time.perf_counter()
                    raw_query(
                        real, scenario.collection, last["vector"], last["filter"], last["top_k"]
                    )
                    rows["raw"].append(time.perf_counter() - began)
            without = [t - e for t, e in zip(rows["total"], rows["emb"], strict=True)]
            overhead = [w - g for w, g in zip(without, rows["eng"], strict=True)]
            summary = {
                "n": len(rows["total"]),
                "answered": hits,
                "browse": call.browse,
                "total": percentiles(rows["total"]),
                "without_embedding": percentiles(without),
                "embedding": percentiles(rows["emb"]),
                "engine": percentiles(rows["eng"]),
                "overhead": percentiles(overhead),
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


def _recall(real: Any, scenario: Any, vectors: list[list[float]], size: int) -> dict:
    """recall@10 of the engine's default params and of the planned ones, against exact."""
    import qdrant_edge as edge
    from bench_timing import edge_top_ids, percentiles, raw_query

    shapes = {}
    for label, flt in scenario.shapes.items():
        timings: dict[str, list[float]] = {"exact": [], "default": [], "planned": []}
        found = {"default": 0, "planned": 0}
        for vector in vectors:
            began = time.perf_counter()
            exact = set(
                edge_top_ids(real, scenario.collection, vector, flt, edge.SearchParams(exact=True))
            )
            timings["exact"].append(time.perf_counter() - began)
            began = time.perf_counter()
            default = edge_top_ids(real, scenario.collection, vector, flt, None)
            timings["default"].append(time.perf_counter() - began)
            began = time.perf_counter()
            planned = raw_query(real, scenario.collection, vector, flt, 10)
            timings["planned"].append(time.perf_counter() - began)
            found["default"] += len(exact & set(default))
            found["planned"] += len(exact & set(planned))
        wanted = 10 * len(vectors)
        shapes[label] = {
            "share": round(real.count(scenario.collection, flt) / size, 4),
            "recall_default": round(found["default"] / wanted, 4),
            "recall_planned": round(found["planned"] / wanted, 4),
            **{f"{name}_ms": percentiles(values)["p50"] for name, values in timings.items()},
        }
        _log(f"  recall {label}: {shapes[label]}")
    return shapes


def _browse_engine(real: Any, scenario: Any, rounds: int) -> dict:
    from bench_timing import percentiles
    from qdrant_client import models

    order = models.OrderBy(key=scenario.recency_key, direction=models.Direction.DESC)
    times = []
    for _ in range(rounds + 3):
        began = time.perf_counter()
        real.scroll(scenario.collection, None, 10, order_by=order)
        times.append(time.perf_counter() - began)
    return percentiles(times[3:])


def run_scenario(
    scenario: Any,
    backend: str,
    size: int,
    corpus: list,
    vectors: Any,
    queries: list[str],
    held_out: list,
    embedder: Any,
) -> dict:
    """Fill one profile's collection on one engine and measure it."""
    import importlib

    from scoperag.core.contracts.registry import CONTRACT_MODULES
    from scoperag.server.runtime import Runtime

    data_dir = Path(tempfile.mkdtemp(prefix=f"bench-{backend}-"))
    settings = _settings(data_dir, backend, scenario.profile)
    contract = importlib.import_module(CONTRACT_MODULES[scenario.profile])
    fields = contract.required_indexes(settings)[scenario.collection]
    runtime = Runtime(settings, embedder=embedder)
    out: dict[str, Any] = {}
    try:
        real = getattr(runtime.backend, "engine", runtime.backend)  # the engine, not sharing
        out["bulk_load_per_s"] = round(_bulk_load(runtime, scenario, fields, corpus, vectors), 1)
        _log(f" {scenario.profile}: loaded {size} nodes at {out['bulk_load_per_s']}/s")
        if held_out:
            out["ingestion"] = _ingestion(runtime, scenario, fields, held_out)
            _log(f"  ingestion {out['ingestion']}")
        out["calls"] = asyncio.run(_tool_calls(runtime, real, scenario, queries))
        runtime.__dict__["backend"] = real
        if scenario.recency_key:
            out["browse_engine"] = _browse_engine(real, scenario, len(queries))
        if backend == "edge" and scenario.shapes:
            query_vectors = embedder.embed_texts(queries)
            out["recall"] = _recall(real, scenario, query_vectors, size)
        runtime.close()
        began = time.perf_counter()
        reopened = Runtime(settings, embedder=embedder)
        reopened.backend.count(scenario.collection, None)
        out["reopen_s"] = round(time.perf_counter() - began, 3)
        reopened.close()
        out["disk_mb"] = _disk_mb(data_dir)
    finally:
        runtime.close()
        shutil.rmtree(data_dir, ignore_errors=True)
    return out


def worker(size: int, backend: str, queries: int, profiles: list[str]) -> dict:
    """One engine at one size, every scenario; returns the figures as a dict."""
    from bench_corpus import cached_vectors, passages
    from bench_scenarios import scenarios

    from scoperag.core.embeddings import Embedder
    from scoperag.core.settings import Settings

    warnings.simplefilter("ignore")
    if backend == "local" and size > SLOW_ENGINE_SIZE:
        queries = max(10, queries // 3)
        profiles = [profile for profile in profiles if profile in SLOW_ENGINE_PROFILES]
    embedder = Embedder(Settings())
    corpus = passages(size + queries + 256)
    texts = [passage.text for passage in corpus[:size]]
    vectors = cached_vectors(texts, embedder, log=True)
    query_texts = [passage.text for passage in corpus[size : size + queries]]
    held_out = corpus[size + queries :]
    embedder.embed_query("warm up")
    baseline = _rss_mb()
    anonymous = AnonymousPeak()
    anonymous.start()
    result: dict[str, Any] = {"backend": backend, "size": size, "queries": queries}
    result["scenarios"] = {}
    for number, scenario in enumerate(s for s in scenarios(size) if s.profile in profiles):
        _log(f"[{backend} {size}] {scenario.profile}")
        result["scenarios"][scenario.profile] = run_scenario(
            scenario,
            backend,
            size,
            corpus[:size],
            vectors,
            query_texts,
            held_out if number == 0 else [],
            embedder,
        )
    result["baseline_rss_mb"] = baseline
    result["peak_rss_mb"] = _rss_mb()
    result["peak_anonymous_mb"] = round(anonymous.peak_mb, 1)
    return result


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
        "--merge",
        action="store_true",
        help="Keep the other runs of an earlier bench.json in --out (re-run one engine or size).",
    )
    parser.add_argument(
        "--report", action="store_true", help="Only rewrite bench.md and bench.png from bench.json."
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.sizes[0], args.backends[0], args.queries, args.profiles)))
        return
    from bench_report import write_report

    earlier = args.out / "bench.json"
    if args.report:
        write_report(json.loads(earlier.read_text()), args.out)
        return
    runs = []
    if args.merge and earlier.is_file():
        wanted = {(size, backend) for size in args.sizes for backend in args.backends}
        runs = [
            r for r in json.loads(earlier.read_text()) if (r["size"], r["backend"]) not in wanted
        ]
    for size in args.sizes:
        for backend in args.backends:
            command = [
                sys.executable,
                __file__,
                "--worker",
                "--sizes",
                str(size),
                "--backends",
                backend,
                "--queries",
                str(args.queries),
                "--profiles",
                *args.profiles,
            ]
            _log(f"== {backend} at {size} nodes")
            done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True)
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    runs.sort(key=lambda run: (run["size"], ENGINES.index(run["backend"])))
    write_report(runs, args.out)


if __name__ == "__main__":
    main()
