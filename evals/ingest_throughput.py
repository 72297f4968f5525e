"""Ingestion against the encoder alone on the same chunks, for every pipeline that embeds.

For each source kind (a PDF, a book, a docs JSONL, short memories) the script ingests once to
warm up and to learn the chunks (read back from the store, as the pipeline embedded them:
`MetadataMode.EMBED`), then alternates, `--runs` times: the encoder embedding those texts in
one call (`Embedder.backend.embed_texts`, which sorts them by length itself), and the whole
ingestion into an empty data dir (read, split, embed, write). Prints chunks/s of each, their
ratio (the target is >= 0.9x), and the load average.

    flock /tmp/bench.lock python evals/ingest_throughput.py             # all four, 3 runs
    flock /tmp/bench.lock python evals/ingest_throughput.py --only pdf --runs 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from llama_index.core.schema import MetadataMode
from llama_index.core.vector_stores.utils import metadata_dict_to_node

from scoperag.core.config.settings import Settings
from scoperag.pipelines.book import ingest_book
from scoperag.pipelines.docs import ingest_docs_jsonl
from scoperag.pipelines.memories import store_memories
from scoperag.pipelines.pdf import ingest_pdfs
from scoperag.server.runtime import Runtime
from scoperag.server.samples import SAMPLES

EVALS = Path(__file__).resolve().parent
sys.path.insert(0, str(EVALS))
SHARED = EVALS.parent.parent / "shared" / "data"


def pdf(runtime: Runtime, work: Path) -> tuple[str, int]:
    [report] = ingest_pdfs(
        [SAMPLES / "qpdf-manual-5.1.3.pdf"], runtime.backend, runtime.embedder, "pdf_pages"
    )
    return "pdf_pages", report.chunks


def book(runtime: Runtime, work: Path) -> tuple[str, int]:
    path = SHARED / "books" / "pg1342-pride-and-prejudice.txt"
    report = ingest_book(path, runtime.backend, runtime.embedder, "pride", last_chapter=12)
    return "books", report.chunks


def docs(runtime: Runtime, work: Path) -> tuple[str, int]:
    path = work / "docs.jsonl"
    if not path.exists():
        import make_docs_fixture

        with path.open("w", encoding="utf-8") as out:
            make_docs_fixture.write_jsonl(out, count=300, seed=7)
    return "docs", ingest_docs_jsonl(path, runtime.backend, runtime.embedder).chunks


def memories(count: int) -> Callable[[Runtime, Path], tuple[str, int]]:
    """`count` short memories (one sentence of real text each, realistic facets)."""
    import bench_corpus
    import memory_bench

    passages = bench_corpus.passages(count)
    texts, sources = [p.text for p in passages], [p.source for p in passages]

    def ingest(runtime: Runtime, work: Path) -> tuple[str, int]:
        made = memory_bench.make_memories(texts, sources)
        data_dir = runtime.settings.data_dir
        report = store_memories(runtime.backend, runtime.embedder, made, data_dir=data_dir)
        return "memories", len(report.stored)

    return ingest


KINDS = ("pdf", "book", "docs", "memories")


def stored_texts(runtime: Runtime, collection: str) -> list[str]:
    """The texts of every point of `collection`, as the pipeline gave them to the encoder."""
    records = runtime.backend.scroll(collection, None, limit=1_000_000)
    return [
        metadata_dict_to_node(record.payload or {}).get_content(metadata_mode=MetadataMode.EMBED)
        for record in records
    ]


def measure(
    kind: str, ingest: Callable[[Runtime, Path], tuple[str, int]], runs: int, work: Path
) -> None:
    warm = Runtime(Settings(data_dir=work / f"{kind}-warm"))
    collection, chunks = ingest(warm, work)
    texts = stored_texts(warm, collection)
    assert chunks and len(texts) == chunks, (kind, chunks, len(texts))
    encoder, pipeline = [], []
    for run in range(runs):
        started = time.perf_counter()
        warm.embedder.backend.embed_texts(texts)
        encoder.append(len(texts) / (time.perf_counter() - started))
        fresh = Runtime(Settings(data_dir=work / f"{kind}-{run}"), embedder=warm.embedder)
        fresh.backend.collection_exists(collection)  # the engine opens outside the timing
        started = time.perf_counter()
        _, written = ingest(fresh, work)
        pipeline.append(written / (time.perf_counter() - started))
        fresh.close()
    warm.close()
    alone, through = statistics.median(encoder), statistics.median(pipeline)
    print(
        f"{kind:9} {len(texts):5} chunks: ingestion {through:6.1f} chunks/s, encoder alone "
        f"{alone:6.1f}: {through / alone:.2f}x (>= 0.9x; runs "
        f"{', '.join(f'{p / e:.2f}' for p, e in zip(pipeline, encoder, strict=True))})",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", choices=KINDS, action="append")
    parser.add_argument("--memories", type=int, default=2000, help="how many to store")
    args = parser.parse_args()
    kinds = args.only or KINDS
    ingests = {"pdf": pdf, "book": book, "docs": docs}
    if "memories" in kinds:  # the corpus is read only when asked for
        ingests["memories"] = memories(args.memories)
    os.environ["SCOPERAG_IN_PROCESS"] = "1"
    print(f"load average at start {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)", flush=True)
    with tempfile.TemporaryDirectory(prefix="ingest-throughput-") as folder:
        for kind in kinds:
            measure(kind, ingests[kind], args.runs, Path(folder))
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
