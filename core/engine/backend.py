"""The seam between scoperag and a vector engine.

Profiles talk to a `VectorBackend`: a LlamaIndex vector store per collection for adding and
searching nodes, plus the few native operations LlamaIndex has no words for (scroll with order_by,
count, facet, delete by filter, payload indexes, collection metadata: `EngineOperations`), and
the registry of the generations readers must not see.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property
from typing import TYPE_CHECKING, Any

from scoperag.core.engine.operations import EngineOperations

if TYPE_CHECKING:  # kept out of start-up: the server lists its tools before any engine is opened
    from qdrant_client import models

    from scoperag.core.engine.generations import GenerationRegistry
    from scoperag.core.engine.vector_store import CollectionVectorStore

KEYWORD_HINT = (
    "Collection '{collection}' has no BM25 keyword vectors (built before hybrid search), so it "
    "is ranked by meaning only; run `scoperag reindex --collection {collection}` to add them."
)
ALL_VALUES = 1_000_000  # facet limit for "every value of a key"
NEIGHBOUR_BATCH = 256  # nearest-neighbour queries per engine call of `neighbours`


class VectorBackend(EngineOperations):
    """One vector engine holding every collection of the process."""

    fresh_registry = False  # True where other processes may write (a server): no caching

    @cached_property
    def generations(self) -> GenerationRegistry:
        """Which points readers must not see while a source is being replaced (every read of
        `scroll`, `count`, `facet` and the vector store's `query` applies it)."""
        from scoperag.core.engine.generations import GenerationRegistry

        return GenerationRegistry(self, fresh=self.fresh_registry)

    def vector_store(self, collection: str) -> CollectionVectorStore:
        """LlamaIndex's vector store over an existing collection, on this backend's operations
        (LlamaIndex is imported here, not for the tools' searches)."""
        from scoperag.core.engine.vector_store import CollectionVectorStore

        return CollectionVectorStore(self, collection)


def meaning_breaks_ties(
    fused: list[tuple[float, models.ScoredPoint]],
) -> list[models.ScoredPoint]:
    """A page of fused hits (fusion score, hit scored by cosine) in fusion order, where equal
    fusion scores (e.g. two candidates ranked oppositely by meaning and by keywords; equal to
    six decimals, as engines round differently) are ordered by cosine, then id: the same order
    on every engine and every run. Each hit's `order_value` is the fusion score it is ordered
    by (its `score` stays the cosine)."""
    ordered = sorted(fused, key=lambda pair: (-round(pair[0], 6), -pair[1].score, str(pair[1].id)))
    for fusion, hit in ordered:
        hit.order_value = round(fusion, 6)
    return [hit for _, hit in ordered]


def order_score(point: models.ScoredPoint) -> float:
    """The score a hit's list is ordered by: the fusion score of a hybrid search (its
    `order_value`), else the cosine."""
    return point.score if point.order_value is None else point.order_value


def unique_pairs(
    found: Iterable[tuple[Any, Iterable[tuple[Any, float]]]],
) -> list[tuple[int | str, int | str, float]]:
    """`neighbours`' pairs from (point id, its neighbours as (id, cosine)): each pair of distinct
    points once, the lower id (as text) first, in that order (the same on every engine)."""
    pairs: dict[tuple[str, str], tuple[int | str, int | str, float]] = {}
    for point, near in found:
        for other, score in near:
            key = tuple(sorted((str(point), str(other))))
            if point != other and key not in pairs:
                first, second = (point, other) if key[0] == str(point) else (other, point)
                pairs[key] = (first, second, score)  # type: ignore[index]
    return [pairs[key] for key in sorted(pairs)]
