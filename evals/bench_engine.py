"""What the benchmark measures beside tool calls: recall against exact search, the ordered
scroll straight on the engine, memory and disk use."""

from __future__ import annotations

import resource
import threading
import time
from pathlib import Path
from typing import Any


def rss_mb() -> float:
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


def disk_mb(path: Path) -> float:
    """Allocated size, like `du` (Edge preallocates sparse files: their length says little)."""
    return round(sum(f.stat().st_blocks * 512 for f in path.rglob("*") if f.is_file()) / 2**20, 1)


def recall(real: Any, scenario: Any, vectors: list[list[float]], size: int) -> dict:
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
    return shapes


def browse_engine(real: Any, scenario: Any, rounds: int) -> dict:
    from bench_timing import percentiles
    from qdrant_client import models

    order = models.OrderBy(key=scenario.recency_key, direction=models.Direction.DESC)
    times = []
    for _ in range(rounds + 3):
        began = time.perf_counter()
        real.scroll(scenario.collection, None, 10, order_by=order)
        times.append(time.perf_counter() - began)
    return percentiles(times[3:])
