"""Export and import throughput (points/s, no re-embedding) and each side's peak memory.

Fills a memory collection with N memories (default 20,000) carrying realistic payloads (the
memory pipeline's point layout: text, tags, type, times, LlamaIndex's node JSON) and random
unit 384-d vectors with their BM25 vectors, then times `scoperag export` of it and `scoperag
import` of the file into an empty data dir, each in a process of its own (so its peak RSS is its
own), through the same functions as the CLI (the engine's normal write path, the owner process,
the disk floor). The clock starts once the engine is open and the modules (and, for the
import, the embedder it checks the file's against) are loaded, as in a running process.

    python evals/transfer_bench.py                 # 20,000 points, plain JSON Lines
    python evals/transfer_bench.py --points 5000 --gzip
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

WORDS = [
    "deploy",
    "staging",
    "database",
    "release",
    "rollback",
    "token",
    "cache",
    "index",
    "query",
    "vector",
    "payload",
    "engine",
    "migration",
    "backup",
    "schedule",
    "review",
    "incident",
    "alert",
    "latency",
    "memory",
    "tag",
    "decision",
    "learning",
]
TYPES = ["note", "decision", "learning", "bug-fix", "configuration"]
PAGE = 1000


def peak_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def fill(data_dir: Path, count: int) -> dict[str, float]:
    """N memories written a page at a time (vectors random: nothing is embedded)."""
    import numpy as np

    from scoperag.core.config.settings import Settings
    from scoperag.core.contracts.memory import COLLECTION, memory_indexes
    from scoperag.core.engine.collection_embedder import EMBEDDER_KEY
    from scoperag.core.engine.collections import ensure_indexes
    from scoperag.pipelines.memories import make_memory, memory_point
    from scoperag.server.runtime import Runtime

    runtime = Runtime(Settings(data_dir=data_dir, profiles=["memory"], backend="edge"))
    began = time.perf_counter()
    backend, rng = runtime.backend, random.Random(7)
    embedder = {"provider": "local", "model": "sentence-transformers/all-MiniLM-L6-v2"}
    backend.create_collection(COLLECTION, 384, {EMBEDDER_KEY: {**embedder, "dimension": 384}})
    ensure_indexes(backend, COLLECTION, memory_indexes())
    vectors = np.random.default_rng(7)
    for start in range(0, count, PAGE):
        points = []
        for n in range(start, min(start + PAGE, count)):
            text = " ".join(rng.choices(WORDS, k=rng.randint(8, 30))) + f" (#{n})"
            tags = rng.sample(WORDS, rng.randint(1, 4))
            created = 1_700_000_000 + rng.randint(0, 60_000_000)
            memory = make_memory(text, tags, rng.choice(TYPES), created, {"n": n})
            vector = vectors.standard_normal(384)
            points.append(memory_point(memory, (vector / np.linalg.norm(vector)).tolist(), True))
        backend.upsert_points(COLLECTION, points)
    seconds = time.perf_counter() - began
    runtime.close()
    return {"seconds": round(seconds, 2), "peak_rss_mb": peak_mb()}


def cpu_seconds() -> float:
    """CPU time of this process so far, every thread's (less moved by a busy machine)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed(backend: object, operation: str) -> list[float]:
    """Seconds spent in `backend.<operation>` from now on (the engine's share), in a list."""
    spent = [0.0]
    method = getattr(backend, operation)

    def wrapper(*args: object, **kwargs: object) -> object:
        began = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - began

    setattr(backend, operation, wrapper)
    return spent


def export(data_dir: Path, path: Path) -> dict[str, float]:
    from scoperag.core.config.settings import Settings
    from scoperag.server.runtime import Runtime
    from scoperag.server.transfer.exporting import export_formats, export_profile

    runtime = Runtime(Settings(data_dir=data_dir, profiles=["memory"], backend="edge"))
    export_formats("memory")  # imported before the clock starts, as in a running process
    runtime.backend.list_collections()
    engine = timed(runtime.backend, "points_page")
    began, cpu = time.perf_counter(), cpu_seconds()
    report = export_profile(runtime, "memory", path)
    seconds, cpu = time.perf_counter() - began, cpu_seconds() - cpu
    runtime.close()
    points = sum(report.collections.values())
    return {
        "points": points,
        "seconds": round(seconds, 2),
        "engine_seconds": round(engine[0], 2),
        "cpu_seconds": round(cpu, 2),
        "peak_rss_mb": peak_mb(),
    }


def import_(data_dir: Path, path: Path) -> dict[str, float]:
    from scoperag.core.config.settings import Settings
    from scoperag.server.runtime import Runtime
    from scoperag.server.transfer.importing import import_file

    runtime = Runtime(Settings(data_dir=data_dir, profiles=["memory"], backend="edge"))
    runtime.embedder.info  # noqa: B018 (the model loaded before the clock starts)
    runtime.backend.list_collections()
    engine = timed(runtime.backend, "upsert_points")
    began, cpu = time.perf_counter(), cpu_seconds()
    report = import_file(runtime, path)
    seconds, cpu = time.perf_counter() - began, cpu_seconds() - cpu
    runtime.close()
    return {
        "points": report.imported,
        "seconds": round(seconds, 2),
        "engine_seconds": round(engine[0], 2),
        "cpu_seconds": round(cpu, 2),
        "peak_rss_mb": peak_mb(),
    }


def raw(data_dir: Path, path: Path) -> dict[str, float]:
    """The file's points upserted straight into a Qdrant Edge shard of the same settings and
    payload indexes: decoded from the file before the clock starts, each `Point` built on it,
    in batches as the engine writes them, one optimize and flush at the end."""
    import qdrant_edge as edge

    from scoperag.core.contracts.memory import memory_indexes
    from scoperag.core.engine.collections import index_plan
    from scoperag.core.engine.edge.collection import BATCH_SIZE
    from scoperag.core.engine.edge.shard_config import SCHEMAS, shard_config
    from scoperag.core.engine.vector_names import DENSE_VECTOR, SPARSE_VECTOR
    from scoperag.server.transfer.formats import decode_dense, is_header

    points, indexes = [], {}
    with path.open() as file:
        for text in file:
            line = json.loads(text)
            if is_header(line):
                indexes.update(line["indexes"])
                continue
            vectors = {DENSE_VECTOR: decode_dense(line["dense"])}
            if line.get("sparse"):
                vectors[SPARSE_VECTOR] = edge.SparseVector(**line["sparse"])
            points.append((line["id"], vectors, line["payload"]))
    data_dir.mkdir(parents=True)
    shard = edge.EdgeShard.create(str(data_dir / "shard"), shard_config(384))
    for key, kind in {**indexes, **index_plan(memory_indexes())}.items():
        shard.update(edge.UpdateOperation.create_field_index(key, SCHEMAS[str(kind)]))
    began, cpu = time.perf_counter(), cpu_seconds()
    for start in range(0, len(points), BATCH_SIZE):
        batch = [edge.Point(*point) for point in points[start : start + BATCH_SIZE]]
        shard.update(edge.UpdateOperation.upsert_points(batch))
    shard.optimize()
    shard.flush()
    seconds, cpu = time.perf_counter() - began, cpu_seconds() - cpu
    held = shard.info().points_count
    shard.close()
    return {
        "points": held,
        "seconds": round(seconds, 2),
        "engine_seconds": round(seconds, 2),
        "cpu_seconds": round(cpu, 2),
        "peak_rss_mb": peak_mb(),
    }


PHASES = {"fill": fill, "export": export, "import": import_, "raw": raw}


def run_phase(phase: str, *arguments: object) -> dict[str, float]:
    """One phase in a process of its own; its result as JSON on the last line of stdout."""
    command = [sys.executable, __file__, "--phase", phase, *map(str, arguments)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{phase} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=20_000)
    parser.add_argument("--gzip", action="store_true", help="Export to a .jsonl.gz file.")
    parser.add_argument("--phase", choices=PHASES, help=argparse.SUPPRESS)
    parser.add_argument("arguments", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        *paths, last = args.arguments
        last = int(last) if args.phase == "fill" else Path(last)
        print(json.dumps(PHASES[args.phase](*map(Path, paths), last)))
        return
    with tempfile.TemporaryDirectory(prefix="transfer-bench-") as folder:
        root = Path(folder)
        path = root / ("memory.jsonl.gz" if args.gzip else "memory.jsonl")
        filled = run_phase("fill", root / "source", args.points)
        out = run_phase("export", root / "source", path)
        back = run_phase("import", root / "copy", path)
        bare = run_phase("raw", root / "raw", path) if not args.gzip else None
        size = path.stat().st_size / 2**20
    print(f"{args.points} memories, 384-d dense + BM25 vectors, file {size:.1f} MiB")
    print(
        f"fill (building the store to export from these points, pages of {PAGE}, nothing "
        f"embedded): {filled['seconds']} s, peak RSS {filled['peak_rss_mb']} MiB"
    )
    for name, result in (("export", out), ("import", back)):
        rate = result["points"] / result["seconds"]
        print(
            f"{name}: {result['points']} points in {result['seconds']} s = {rate:,.0f} points/s "
            f"(of which the engine {result['engine_seconds']} s; CPU {result['cpu_seconds']} s = "
            f"{result['points'] / result['cpu_seconds']:,.0f} points per CPU-second), "
            f"peak RSS {result['peak_rss_mb']} MiB"
        )
    print("(the import's engine time is its writes: the upserts and the HNSW index they build)")
    if bare is not None:
        rate = bare["points"] / bare["seconds"]
        ratio = back["points"] / back["seconds"] / rate
        print(
            f"raw Qdrant Edge upserts of the same points (same shard settings and payload "
            f"indexes): {bare['points']} points in {bare['seconds']} s = {rate:,.0f} points/s; "
            f"import / raw = {ratio:.2f}x"
        )
        outside = (back["seconds"] - back["engine_seconds"]) / back["points"] * 1e6
        print(
            f"the import's time outside the engine (reading, JSON, each line's checks): "
            f"{outside:.0f} us a point"
        )


if __name__ == "__main__":
    main()
