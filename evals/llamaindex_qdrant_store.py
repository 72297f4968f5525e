"""LlamaIndex's `QdrantVectorStore` against scoperag's path on one qdrant-client collection.

Fills a local-mode store (`SCOPERAG_BACKEND=local`) with POINTS nodes of 384-d random vectors
in LlamaIndex's payload layout (50 documents), then times the same filtered query (one
document, 2% of the points, top 10) three ways, in alternated rounds:

- `QdrantVectorStore.query` with `MetadataFilters` (llama-index-vector-stores-qdrant),
- `CollectionVectorStore.query` (`backend.vector_store(...)`, what notebooks and
  `VectorStoreIndex.from_vector_store` use), which also hides replaced generations,
- `VectorBackend.search` with a `SearchRequest` (what the tools call), fetching only the
  payload keys a tool reads.

It prints p50/p95 of each, the qdrant-client calls each makes (construction and one query),
and what `QdrantVectorStore` does when asked for hybrid search on this install.

    python evals/llamaindex_qdrant_store.py [POINTS] [QUERIES]   # default 5000 60
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores import MetadataFilter, MetadataFilters, VectorStoreQuery
from llama_index.vector_stores.qdrant import QdrantVectorStore
from qdrant_client import models

from scoperag.core.engine.client.backend import QdrantClientBackend
from scoperag.core.engine.search_request import SearchRequest

DIM = 384
DOCUMENTS = 50
CALLS = ("query_points", "query_batch_points", "get_collection", "collection_exists", "scroll")


def _vector(rng: random.Random) -> list[float]:
    return [rng.gauss(0, 1) for _ in range(DIM)]


def _nodes(count: int) -> list[TextNode]:
    rng = random.Random(7)
    return [
        TextNode(
            id_=f"00000000-0000-0000-0000-{n + 1:012d}",
            text=f"passage {n} " + "words " * 40,
            metadata={"document": f"doc-{n % DOCUMENTS}", "page": n // DOCUMENTS},
            relationships={
                NodeRelationship.SOURCE: RelatedNodeInfo(node_id=f"doc-{n % DOCUMENTS}")
            },
            embedding=_vector(rng),
        )
        for n in range(count)
    ]


def _counting(client: Any) -> Counter[str]:
    """Counts the client's calls by name from now on."""
    calls: Counter[str] = Counter()
    for name in CALLS:
        method = getattr(client, name)

        def counted(*args: Any, _name: str = name, _method: Any = method, **kwargs: Any) -> Any:
            calls[_name] += 1
            return _method(*args, **kwargs)

        setattr(client, name, counted)
    return calls


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered) * 1000:7.1f} ms   p95 {p95 * 1000:7.1f} ms"


def main() -> None:
    points = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    queries = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    with tempfile.TemporaryDirectory() as folder:
        backend = QdrantClientBackend.local(Path(folder))
        backend.create_collection("c", DIM, {})
        started = time.perf_counter()
        backend.vector_store("c").add(_nodes(points))
        print(f"{points} points written in {time.perf_counter() - started:.1f} s (local mode)")

        calls = _counting(backend.client)
        theirs = QdrantVectorStore(collection_name="c", client=backend.client)
        print(f"QdrantVectorStore(...) construction: {dict(calls)}")
        ours = backend.vector_store("c")

        rng = random.Random(11)
        asks = [(_vector(rng), f"doc-{rng.randrange(DOCUMENTS)}") for _ in range(queries)]

        def with_filters(vector: list[float], document: str) -> VectorStoreQuery:
            only = MetadataFilters(filters=[MetadataFilter(key="document", value=document)])
            return VectorStoreQuery(query_embedding=vector, similarity_top_k=10, filters=only)

        def request(vector: list[float], document: str) -> SearchRequest:
            key = models.FieldCondition(key="document", match=models.MatchValue(value=document))
            return SearchRequest(
                collection="c",
                dense=vector,
                filter=models.Filter(must=[key]),
                limit=10,
                with_payload=["document", "page", "doc_id"],
            )

        paths: dict[str, Callable[[list[float], str], Any]] = {
            "QdrantVectorStore.query": lambda v, d: theirs.query(with_filters(v, d)),
            "CollectionVectorStore.query": lambda v, d: ours.query(with_filters(v, d)),
            "VectorBackend.search (tools)": lambda v, d: backend.search(request(v, d)),
        }
        for call in paths.values():  # warm up, and the same answers
            call(*asks[0])
        first = [n.node_id for n in paths["QdrantVectorStore.query"](*asks[0]).nodes]
        assert first == [n.node_id for n in paths["CollectionVectorStore.query"](*asks[0]).nodes]

        times: dict[str, list[float]] = {name: [] for name in paths}
        per_query: dict[str, dict[str, int]] = {}
        for vector, document in asks:
            for name, call in paths.items():
                calls.clear()
                started = time.perf_counter()
                call(vector, document)
                times[name].append(time.perf_counter() - started)
                per_query[name] = dict(calls)
        print(f"\nfiltered query (1 of {DOCUMENTS} documents), top 10, {queries} queries each:")
        for name in paths:
            print(f"  {name:30} {_ms(times[name])}   client calls {per_query[name]}")

        print("\nhybrid (dense + keywords) through QdrantVectorStore on this install:")
        try:
            QdrantVectorStore(collection_name="c", client=backend.client, enable_hybrid=True)
            print("  constructed (fastembed is installed)")
        except Exception as exc:  # what a user meets without fastembed
            print(f"  {type(exc).__name__}: {str(exc).splitlines()[0][:150]}")
        backend.close()


if __name__ == "__main__":
    main()
