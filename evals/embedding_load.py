"""Query-embedding latency on 1 and 2 threads, on its own and while another process keeps
one core busy (p95 <= 2x p50 under load).

Loads scoperag's query encoder (onnxruntime, `core/embedding/onnx_encoder.py`) once per thread count
and, in alternating rounds (so machine noise hits every setting alike), embeds single queries with
each, first as the machine is ("no burner"), then with a CPU-burning subprocess running
("+ burner"). Prints p50/p95 (ms) and p95/p50 per setting. `--reference` adds
sentence-transformers' `encode` (torch, on the same thread count).

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

from scoperag.core.config.settings import Settings
from scoperag.core.embedding.bert_folder import BertFolder
from scoperag.core.embedding.embedders import model_folder
from scoperag.core.embedding.onnx_encoder import OnnxEncoder

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


def _paths(threads: int, reference: bool) -> dict[str, Callable[[str], object]]:
    folder = model_folder(Settings())
    encoder = OnnxEncoder(BertFolder.open(folder), threads, padding=False)
    paths: dict[str, Callable[[str], object]] = {
        "onnxruntime (scoperag)": lambda q: encoder.embed([q])
    }
    if reference:
        from sentence_transformers import SentenceTransformer

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


def _torch_threads(count: int) -> None:
    import torch  # sentence-transformers' own

    torch.set_num_threads(count)


def _run(
    args: argparse.Namespace, paths: dict[int, dict[str, Callable]], load: str
) -> dict[tuple, list[float]]:
    results: dict[tuple, list[float]] = {}
    for _ in range(args.rounds):
        for threads in args.threads:
            if args.reference:
                _torch_threads(threads)
            for name, embed in paths[threads].items():
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
    paths = {threads: _paths(threads, args.reference) for threads in args.threads}
    results = _run(args, paths, "no burner")
    burner = subprocess.Popen([sys.executable, "-c", BURNER])
    try:
        time.sleep(1)
        results |= _run(args, paths, "+ burner")
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
