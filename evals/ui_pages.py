"""Server time of each web UI page on a large store.

    python evals/ui_pages.py [--memories 10000] [--points 100000] [--rounds 20]

Builds an embedded (Edge) store fast, without embedding the texts: `--memories` memories (the
memory pipeline's own points, random unit vectors) and `--points` PDF chunks (200 documents of
page-chunk payloads as LlamaIndex's store writes them, random unit vectors, 25,000 points a
write on the backend). Then asks each page `--rounds` times through the app in-process (no
browser, no socket: the time is the server's) and prints p50/p95 per page. The first request
of each page is left out (it opens the tool session and loads the model). The duplicates
search compares every memory with its neighbours: its figure is its own.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from fastapi.testclient import TestClient
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores.utils import node_to_metadata_dict
from qdrant_client import models

from scoperag.core.config.settings import Settings
from scoperag.core.contracts.pdf import PDF_INDEXES, PdfPagePayload
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.engine.collections import prepare_for_writing
from scoperag.core.engine.vector_names import DENSE_VECTOR
from scoperag.pipelines.memories import make_memory, store_memories
from scoperag.pipelines.point_ids import stable_id
from scoperag.server.runtime import Runtime
from scoperag.server.ui.app import ui_app

DOCUMENTS = 200
CHUNKS_PER_PAGE = 5
BATCH = 25_000  # points a write (the engine merges its segments after each)
WORDS = "page label tree manual number ball letter sister estate rain walk music".split()  # noqa: SIM905


class RandomVectors(Embedder):
    """The packaged model's name and dimension, but random unit vectors for stored texts (a
    query is still embedded by the model)."""

    rng = np.random.default_rng(7)

    def embed_texts(self, texts: list[str]) -> list[list[float]]:
        vectors = self.rng.standard_normal((len(texts), 384)).astype(np.float32)
        return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).tolist()


def _text(n: int) -> str:
    return " ".join(WORDS[(n * 7 + i * 3) % len(WORDS)] for i in range(12)) + f" {n}"


def fill_memories(runtime: Runtime, count: int) -> None:
    """`count` memories, one every 3 hours back from now (three years at 10k)."""
    from datetime import UTC, datetime, timedelta

    tags = ["alpha", "beta", "gamma", "delta", "work", "home"]
    now = datetime.now(UTC)
    memories = [
        make_memory(
            _text(n),
            [tags[n % 6], tags[(n // 6) % 6]],
            ["note", "decision", "fix"][n % 3],
            created_at=(now - timedelta(hours=3 * n)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        )
        for n in range(count)
    ]
    store_memories(runtime.backend, runtime.embedder, memories, data_dir=runtime.settings.data_dir)


def fill_pdf(runtime: Runtime, points: int) -> None:
    collection = runtime.settings.pdf_collection
    prepare_for_writing(runtime.backend, runtime.embedder, collection, PDF_INDEXES)
    pages = max(1, points // (DOCUMENTS * CHUNKS_PER_PAGE))
    batch: list[TextNode] = []
    for n in range(points):
        document, rest = divmod(n, pages * CHUNKS_PER_PAGE)
        page, chunk = divmod(rest, CHUNKS_PER_PAGE)
        metadata = PdfPagePayload(
            document_id=f"doc-{document:03d}",
            physical_page_index=page,
            page_label=str(page + 1),
            page_count=pages,
            source=f"doc-{document:03d}.pdf",
            title=f"Document {document}",
            chunk_index=chunk,
        ).model_dump()
        source = RelatedNodeInfo(node_id=metadata["document_id"])
        batch.append(
            TextNode(
                id_=stable_id("pdf", metadata["document_id"], page, chunk),
                text=_text(n),
                metadata=metadata,
                excluded_embed_metadata_keys=list(metadata),
                excluded_llm_metadata_keys=list(metadata),
                relationships={NodeRelationship.SOURCE: source},
            )
        )
        if len(batch) == BATCH or n == points - 1:
            vectors = runtime.embedder.embed_texts([node.text for node in batch])
            written = [
                models.PointStruct(
                    id=node.node_id,
                    vector={DENSE_VECTOR: vector},
                    payload=node_to_metadata_dict(node, remove_text=False, flat_metadata=True),
                )
                for node, vector in zip(batch, vectors, strict=True)
            ]
            runtime.backend.upsert_points(collection, written)  # one write (and merge) a batch
            batch = []


PAGES = {
    "overview": "/ui/",
    "browse memory": "/ui/browse/memory",
    "browse memory, page 200": "/ui/browse/memory?page=200",
    "browse memory, by tag": "/ui/browse/memory?tags=alpha",
    "browse memory, one month": "/ui/browse/memory?start_date=2026-01-01&end_date=2026-01-31",
    "browse memory, searched": "/ui/browse/memory?query=rain+walk",
    "edit a memory": "/ui/memory/memory/edit/{hash}",
    "history of a memory": "/ui/memory/memory/history/{hash}",
    "browse pdf": "/ui/browse/pdf",
    "browse pdf, one document": "/ui/browse/pdf?document=doc-007&page=3",
    "search memory": "/ui/search/memory?tool=search&query=rain+walk&run=1",
    "search memory, newest": "/ui/search/memory?tool=search&run=1",
    "search pdf": "/ui/search/pdf?tool=qdrant-find&query=manual+tree&run=1",
    "search pdf, page 3": "/ui/search/pdf?tool=qdrant-find&query=manual+tree&run=1&page=3",
    "ingest form": "/ui/ingest?profile=pdf",
    # asked by the overview once shown, apart from it
    "overview's check (apart)": "/ui/health",
}
# its own figure: it compares every memory with its neighbours
DUPLICATES = {"duplicates search (its own figure)": "/ui/memory/memory/duplicates"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--points", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(data_dir=Path(folder), profiles=["pdf", "memory"])
        runtime = Runtime(settings, RandomVectors(settings))
        began = time.perf_counter()
        fill_memories(runtime, args.memories)
        fill_pdf(runtime, args.points)
        print(
            f"store: {args.memories} memories, {args.points} PDF chunks "
            f"(built in {time.perf_counter() - began:.0f} s)"
        )
        app, ctx = ui_app(runtime, "127.0.0.1")
        client = TestClient(app, base_url="http://127.0.0.1:8765")
        try:
            key = ctx.call("search", {"page_size": 1})["memories"][0]["content_hash"]
            for label, path in {**PAGES, **DUPLICATES}.items():
                path = path.format(hash=key)
                response = client.get(path)
                assert response.status_code == 200, (path, response.text[:500])
                spent = []
                for _ in range(args.rounds):
                    start = time.perf_counter()
                    client.get(path)
                    spent.append((time.perf_counter() - start) * 1000)
                p95 = statistics.quantiles(spent, n=20)[-1]
                print(f"{label:<32} p50 {statistics.median(spent):8.1f} ms   p95 {p95:8.1f} ms")
        finally:
            ctx.close()
            runtime.close()


if __name__ == "__main__":
    main()
