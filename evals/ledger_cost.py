"""What the write ledger adds to one acknowledged write on Edge.

    python evals/ledger_cost.py [--points 5000] [--writes 200] [--rounds 3]

Fills an Edge collection of 384-d vectors with `--points` memories, then makes `--writes`
single-point upserts (a `store_memory`'s write: one point with its BM25 vector and a memory's
payload) with the ledger and without it, in alternated rounds, and prints p50/p95 of each, the
point count the ledger reads and the durable write of its file alone.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import numpy as np
from qdrant_client import models

from scoperag.core.embedding.bm25 import document_vector
from scoperag.core.engine.edge.backend import EdgeBackend
from scoperag.core.engine.edge.ledger import write_durably
from scoperag.core.engine.vector_names import DENSE_VECTOR, SPARSE_VECTOR

COLLECTION = "memories"


def memory(rng: np.random.Generator, n: int) -> models.PointStruct:
    vector = rng.standard_normal(384).astype(np.float32)
    text = f"Memory {n}: the owner writes the ledger after each acknowledged write."
    payload = {"content": text, "tags": ["bench"], "memory_type": "note"}
    dense = (vector / np.linalg.norm(vector)).tolist()
    vectors = {DENSE_VECTOR: dense, SPARSE_VECTOR: document_vector(text)}
    return models.PointStruct(id=str(uuid.uuid4()), vector=vectors, payload=payload)


def timed(call: Callable[[], object], times: int) -> list[float]:
    spent = []
    for _ in range(times):
        start = time.perf_counter()
        call()
        spent.append((time.perf_counter() - start) * 1000)
    return spent


def figures(label: str, ms: list[float]) -> None:
    p95 = statistics.quantiles(ms, n=20)[-1]
    print(f"{label:<34} p50 {statistics.median(ms):7.3f} ms   p95 {p95:7.3f} ms   n={len(ms)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=5000)
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as folder:
        backend = EdgeBackend.open(Path(folder) / "edge")
        backend.create_collection(COLLECTION, 384, {})
        for start in range(0, args.points, 500):
            backend.upsert_points(COLLECTION, [memory(rng, n) for n in range(start, start + 500)])
        engine = backend.edge_collection(COLLECTION)
        ledger = engine.ledger
        runs: dict[str, list[float]] = {"upsert, with the ledger": [], "upsert, without": []}
        for _ in range(args.rounds):
            for label, kept in (("upsert, with the ledger", ledger), ("upsert, without", None)):
                engine.ledger = kept
                write = lambda: backend.upsert_points(COLLECTION, [memory(rng, 0)])  # noqa: E731
                runs[label] += timed(write, args.writes // args.rounds)
        engine.ledger = ledger
        print(f"{engine.client.info().points_count} points, 384-d, Edge")
        for label, ms in runs.items():
            figures(label, ms)
        figures("point count (info)", timed(lambda: engine.client.info().points_count, 1000))
        path = Path(folder) / "probe.json"
        figures("ledger file, durable write", timed(lambda: write_durably(path, {"p": 1}), 200))
        backend.close()


if __name__ == "__main__":
    main()
