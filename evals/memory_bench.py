"""Memory search latency through the MCP `search` tool, per mode, split into embedding and search.

Builds 10,000 memories (`--large`: 100,000) from the benchmark corpus's real passages with
realistic facets: a Zipf-distributed tag vocabulary (1-4 tags each, plus the passage's source),
skewed memory types and creation times spread over two years. Vectors come from the corpus's
on-disk cache (evals/cache/), so the texts are embedded once across runs. Memories are written by
the real memories pipeline; every search goes through `fastmcp.Client` in memory, and the query's
embedding time is measured inside the server, so search time = call time - embedding time.

    python evals/memory_bench.py                  # 10k on the default engine
    python evals/memory_bench.py --backend edge   # the embedded Qdrant Edge engine
    python evals/memory_bench.py --large          # 100k
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
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

import numpy as np  # noqa: E402
from bench_corpus import cached_vectors, passages  # noqa: E402

from scoperag.core.contracts.memory import MemoryPayload  # noqa: E402
from scoperag.core.embeddings import Embedder  # noqa: E402
from scoperag.core.settings import Settings  # noqa: E402
from scoperag.pipelines.memories import make_memory, store_memories  # noqa: E402

TYPES = {"note": 40, "learning": 20, "decision": 15, "bug-fix": 12, "configuration": 8}
TAG_VOCABULARY = 300
START = datetime(2024, 12, 1, tzinfo=UTC)
SPAN_SECONDS = 2 * 365 * 24 * 3600
QUERIES = [
    "How does Elizabeth feel about Mr. Darcy?",
    "a spell that deals fire damage in a cone",
    "How do I encrypt a PDF file with a password?",
    "What does the dragon's breath weapon do?",
    "Why did Lydia run away with Wickham?",
    "resistance to poison and necrotic damage",
    "page labels and the number tree",
    "a magic item that grants flying speed",
    "Mr. Collins proposes marriage",
    "How is the linearized file checked?",
    "the monster's legendary actions",
    "letters from Jane in London",
]
# What each scenario passes to `search`, beside the query where it has one.
SCENARIOS: dict[str, dict[str, Any]] = {
    "hybrid": {"mode": "hybrid"},
    "hybrid + tag": {"mode": "hybrid", "tags": ["t001"]},
    "hybrid, min_similarity 0.3": {"mode": "hybrid", "min_similarity": 0.3},
    "tag, newest first": {"mode": "tag", "tags": ["t002", "t005"], "start_date": "2025-06-01"},
    "faceted + query": {
        "mode": "faceted",
        "tags": ["book", "t003"],
        "memory_type": "note",
        "start_date": "2025-01-01",
        "end_date": "2026-06-30",
    },
    "faceted, no query": {
        "mode": "faceted",
        "memory_type": "decision",
        "start_date": "2025-03-01",
        "end_date": "2025-12-31",
    },
    "faceted, no query, page 5": {"mode": "faceted", "tags": ["dnd"], "page": 5},
}
QUERYLESS = {"tag, newest first", "faceted, no query", "faceted, no query, page 5"}


class CachedEmbedder(Embedder):
    """The real model; texts with a row in `cached` (from the disk cache) are not embedded."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.rows: dict[str, int] = {}
        self.cached = np.zeros((0, 0), dtype=np.float32)
        self.query_seconds = 0.0

    def use_cache(self, texts: list[str], vectors: np.ndarray) -> None:
        self.rows = {text: row for row, text in enumerate(texts)}
        self.cached = vectors

    def embed_texts(self, texts: list[str]) -> list[list[float]]:
        if not all(text in self.rows for text in texts):
            return super().embed_texts(texts)
        return self.cached[[self.rows[text] for text in texts]].tolist()

    def embed_query(self, text: str) -> list[float]:
        began = time.perf_counter()
        vector = super().embed_query(text)
        self.query_seconds += time.perf_counter() - began
        return vector


def make_memories(texts: list[str], sources: list[str], seed: int = 11) -> list[MemoryPayload]:
    """Deterministic facets: Zipf tags, skewed types, times spread over two years."""
    rng = random.Random(seed)
    tags = [f"t{rank:03d}" for rank in range(1, TAG_VOCABULARY + 1)]
    tag_weights = [1 / rank for rank in range(1, TAG_VOCABULARY + 1)]
    memories = []
    for text, source in zip(texts, sources, strict=True):
        chosen = rng.choices(tags, tag_weights, k=rng.randint(1, 4))
        created = START + timedelta(seconds=rng.uniform(0, SPAN_SECONDS))
        kind = rng.choices(list(TYPES), list(TYPES.values()))[0]
        memories.append(make_memory(text, [source, *chosen], kind, created))
    return memories


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def measure(server: Any, embedder: CachedEmbedder, rounds: int) -> None:
    from fastmcp import Client

    async with Client(server) as client:
        await client.call_tool("search", {"query": "warm-up"})
        print(
            f"{'scenario':28} {'total p50/p95 ms':>18} {'embed p50/p95':>15} "
            f"{'search p50/p95':>16} {'hits':>6}"
        )
        for name, arguments in SCENARIOS.items():
            totals, embeds, hits = [], [], []
            for index in range(rounds):
                query = "" if name in QUERYLESS else QUERIES[index % len(QUERIES)]
                embedder.query_seconds = 0.0
                began = time.perf_counter()
                result = await client.call_tool("search", {"query": query, **arguments})
                totals.append((time.perf_counter() - began) * 1000)
                embeds.append(embedder.query_seconds * 1000)
                hits.append(result.structured_content["total"])
            searches = [total - embed for total, embed in zip(totals, embeds, strict=True)]
            print(
                f"{name:28} {percentile(totals, 0.5):8.1f} /{percentile(totals, 0.95):7.1f} "
                f"{percentile(embeds, 0.5):6.1f} /{percentile(embeds, 0.95):6.1f} "
                f"{percentile(searches, 0.5):7.1f} /{percentile(searches, 0.95):7.1f} "
                f"{statistics.mean(hits):6.0f}",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--large", action="store_true", help="100,000 memories instead of 10,000")
    parser.add_argument("--size", type=int, default=None, help="any other number of memories")
    parser.add_argument("--backend", choices=["local", "edge"], default=None)
    parser.add_argument("--rounds", type=int, default=40, help="calls per scenario")
    args = parser.parse_args()
    size = args.size or (100_000 if args.large else 10_000)

    from scoperag.server.app import build_server
    from scoperag.server.runtime import Runtime

    corpus = passages(size)
    texts = [p.text for p in corpus]
    settings = Settings(
        data_dir=Path(tempfile.mkdtemp()), backend=args.backend, profiles=["memory"]
    )
    embedder = CachedEmbedder(settings)
    embedder.use_cache(texts, cached_vectors(texts, embedder, log=True))
    memories = make_memories(texts, [p.source for p in corpus])
    runtime = Runtime(settings, embedder=embedder)
    began = time.perf_counter()
    report = store_memories(runtime.backend, embedder, memories, batch_size=1000)
    seconds = time.perf_counter() - began
    print(
        f"{len(report.stored)} memories written on '{runtime.backend.name}' in {seconds:.1f} s "
        f"({len(report.stored) / seconds:.0f}/s, vectors from cache)"
    )
    asyncio.run(measure(build_server(runtime), embedder, args.rounds))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MB; spec bar: 200 ms per search at 10k")
    runtime.close()


if __name__ == "__main__":
    main()
