"""One `SearchRequest` is one engine operation: it answers for a missing collection, refuses a
collection built with another embedder, and says whether keywords ranked the page."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from qdrant_client import models

from scoperag.core.embedding.embedders import EmbedderInfo
from scoperag.core.engine.backend import VectorBackend
from scoperag.core.engine.client.backend import QdrantClientBackend
from scoperag.core.engine.collection_embedder import EMBEDDER_KEY
from scoperag.core.engine.edge.backend import EdgeBackend
from scoperag.core.engine.search_request import SearchRequest
from scoperag.core.engine.vector_names import DENSE_VECTOR
from scoperag.core.errors import EmbedderMismatchError

ENGINES: dict[str, Callable[[Path], VectorBackend]] = {
    "edge": EdgeBackend.open,
    "local": QdrantClientBackend.local,
}
BUILT_WITH = EmbedderInfo(provider="local", model="minilm", dimension=3)


@pytest.fixture(params=list(ENGINES))
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorBackend]:
    opened = ENGINES[request.param](tmp_path / request.param)
    opened.create_collection("c", 3, {EMBEDDER_KEY: BUILT_WITH.model_dump()})
    point = models.PointStruct(id=1, vector={DENSE_VECTOR: [1.0, 0.0, 0.0]}, payload={"k": 1})
    opened.upsert_points("c", [point])
    yield opened
    opened.close()


def _request(**fields: object) -> SearchRequest:
    return SearchRequest(**{"collection": "c", "dense": [1.0, 0.0, 0.0], "limit": 5, **fields})


def test_a_missing_collection_gives_no_hits(backend: VectorBackend) -> None:
    found = backend.search(_request(collection="nowhere", embedder=BUILT_WITH, count_cap=10))
    assert (found.exists, found.hits, found.count) == (False, [], None)


def test_the_collections_embedder_is_checked_inside_the_search(backend: VectorBackend) -> None:
    found = backend.search(_request(embedder=BUILT_WITH, text="anything", count_cap=10))
    assert found.exists and found.keywords and [hit.id for hit in found.hits] == [1]
    assert found.count == 1
    other = BUILT_WITH.model_copy(update={"model": "another"})
    with pytest.raises(EmbedderMismatchError, match="built with local/minilm .3-d.*local/another"):
        backend.search(_request(embedder=other))
