"""The searches behind the retrievers, straight on the engine, without LlamaIndex.

The tools run these (a freshly started server answers without importing LlamaIndex);
the LlamaIndex retrievers (`FilteredRetriever`, `HybridRetriever`, `BrowseRetriever`) are these
same classes with `BaseRetriever`'s `retrieve` on top, so both paths share one implementation.
A query is anything with `query_str` and `embedding` (LlamaIndex's `QueryBundle`, `TextQuery`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from qdrant_client import models

from scoperag.core.embedding.embedders import Embedder
from scoperag.core.engine.backend import KEYWORD_HINT, VectorBackend
from scoperag.core.engine.search_request import DateBoost, SearchRequest, SearchResult


class SearchQuery(Protocol):
    """A query's text, and its embedding once computed (LlamaIndex's `QueryBundle` is one)."""

    query_str: str
    embedding: list[float] | None


@dataclass
class TextQuery:
    """A `SearchQuery` without LlamaIndex."""

    query_str: str
    embedding: list[float] | None = None


class FilteredSearch:
    """Top-k hits of one collection that satisfy `qdrant_filter` (AND of the tool's filters).

    `offset` skips the best hits (pages); `min_score` keeps only hits whose cosine similarity
    is at least that (the engine's score threshold). Scores are cosine similarities.
    `with_payload` names the payload keys the caller reads (default: the whole payload, which
    holds LlamaIndex's copy of the node, often most of it). `explain`: each search also
    ranks the candidates by each branch alone (`SearchResult.branches`).
    """

    keyword_candidates = True  # hybrid: BM25's own top candidates join the dense ones
    date_boost: DateBoost | None = None  # reorder by closeness to a date the query names

    def __init__(
        self,
        backend: VectorBackend,
        embedder: Embedder,
        collection: str,
        qdrant_filter: models.Filter | None = None,
        top_k: int = 10,
        offset: int = 0,
        min_score: float | None = None,
        with_payload: bool | list[str] = True,
        explain: bool = False,
    ) -> None:
        self.backend = backend
        self.embedder = embedder
        self.collection = collection
        self.qdrant_filter = qdrant_filter
        self.top_k = top_k
        self.offset = offset
        self.min_score = min_score
        self.with_payload = with_payload
        self.explain = explain
        self.last: SearchResult | None = None  # the latest search's result

    def keyword_text(self, query: SearchQuery) -> str | None:
        """The text the engine ranks by keywords beside the vector: none, dense only."""
        return None

    def embed(self, query: SearchQuery) -> list[float]:
        """The query's embedding, computed once and kept on the query."""
        if query.embedding is None:
            query.embedding = self.embedder.embed_query(query.query_str)
        return query.embedding

    def search(self, query: SearchQuery, count_cap: int | None = None) -> SearchResult:
        """One engine operation: the page (none if the collection does not exist; an error if
        it was built with another embedder), and the candidates counted up to `count_cap`."""
        request = SearchRequest(
            collection=self.collection,
            dense=self.embed(query),
            text=self.keyword_text(query),
            filter=self.qdrant_filter,
            limit=self.top_k,
            offset=self.offset,
            score_threshold=self.min_score,
            with_payload=self.with_payload,
            embedder=self.embedder.info,
            count_cap=count_cap,
            explain=self.explain,
            keyword_candidates=self.keyword_candidates,
            date_boost=self.date_boost,
        )
        self.last = self.backend.search(request)
        return self.last

    def points(self, query: SearchQuery) -> list[models.ScoredPoint]:
        """The hits as the engine returns them (no nodes built): best first, cosine scores."""
        return self.search(query).hits


class HybridSearch(FilteredSearch):
    """`FilteredSearch` whose ranking also weighs BM25 keyword matches of the query.

    Each branch finds its own candidates under the same filter and cosine floor (the dense
    nearest neighbours, and BM25's best matches), and the engine fuses the union, ranked by
    both (DBSF, each score normalised by its spread): a memory or passage sharing a rare name
    with the query is found even when meaning alone ranks it far down. Keywords never bring
    in a hit below the floor. Scores
    stay cosine similarities. A collection built before hybrid search has no BM25 vectors: it
    is searched by meaning alone and `keyword_hint` says how to add them.
    """

    def keyword_text(self, query: SearchQuery) -> str | None:
        return query.query_str

    def keyword_hint(self) -> str | None:
        """One line when the latest search found the collection without BM25 vectors."""
        if self.last is not None and self.last.exists and not self.last.keywords:
            return KEYWORD_HINT.format(collection=self.collection)
        return None


class BrowseSearch:
    """The points of `collection` matching `qdrant_filter`, ordered by `order_key` (newest first).

    One page (`offset`, `limit`) at a time. `start_from` (an order key value, e.g. the end of a
    date window) lets the engine start reading the order there instead of at the newest point;
    it must not exclude any point the filter keeps.
    """

    def __init__(
        self,
        backend: VectorBackend,
        collection: str,
        order_key: str,
        qdrant_filter: models.Filter | None = None,
        offset: int = 0,
        limit: int = 10,
        start_from: float | None = None,
    ) -> None:
        self.backend = backend
        self.collection = collection
        self.qdrant_filter = qdrant_filter
        self.order_by = models.OrderBy(
            key=order_key, direction=models.Direction.DESC, start_from=start_from
        )
        self.offset = offset
        self.limit = limit

    def total(self) -> int:
        """How many points match the filter (a count in the engine)."""
        if not self.backend.collection_exists(self.collection):
            return 0
        return self.backend.count(self.collection, self.qdrant_filter)

    def records(self) -> list[models.Record]:
        """The page's points as the engine returns them (payloads, no nodes built)."""
        if not self.backend.collection_exists(self.collection):
            return []
        return self.backend.scroll(
            self.collection, self.qdrant_filter, self.limit, self.offset, order_by=self.order_by
        )
