"""What checking the packaged model's files against upstream's digests costs at load.

Cold: an empty cache dir, so every file is hashed (sha256 of the 87 MB weights and the
configs; the files are in the OS page cache, as after install or any earlier start). Warm: the
digests remembered in the cache dir, so each file costs a `stat`. Also the check of one query
vector (finite, 384-d, unit norm). Prints p50 (and the slowest run) over `--runs` runs.

    python evals/model_digests.py --runs 7
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from scoperag.core.embedding.packaged_model import checked_packaged_folder
from scoperag.core.embedding.vector_check import check_vectors


def _timed(call: Callable[..., object], *args: object) -> float:
    start = time.perf_counter()
    call(*args)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    cold, warm = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as folder:
            cache = Path(folder)
            cold.append(_timed(checked_packaged_folder, cache))
            warm.append(_timed(checked_packaged_folder, cache))
    vector = [1 / 384**0.5] * 384
    checks = [_timed(check_vectors, [vector], 384, True) for _ in range(200)]
    for name, figures in (("cold (hash)", cold), ("warm (stat)", warm), ("one vector", checks)):
        print(
            f"{name:12} p50 {statistics.median(figures):8.3f} ms   max {max(figures):8.3f} ms"
            f"   ({len(figures)} runs)"
        )


if __name__ == "__main__":
    main()
