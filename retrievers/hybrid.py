"""`HybridRetriever`: meaning and keywords, fused by the engine, restricted by a Qdrant filter."""

from __future__ import annotations

from llama_index.core.schema import QueryBundle

from scoperag.core.backend import KEYWORD_HINT
from scoperag.retrievers.filtered import FilteredRetriever


class HybridRetriever(FilteredRetriever):
    """`FilteredRetriever` whose ranking also weighs BM25 keyword matches of the query.

    The engine runs two prefetches under the same filter and cosine floor (dense nearest
    neighbours, and the BM25 ranking of those same candidates) and fuses their scores (DBSF, each
    normalised by its spread).
    Keywords reorder what the floor lets through; they never bring in a hit below it. Scores
    stay cosine similarities. A collection built before hybrid search has no BM25 vectors: it
    is searched by meaning alone and `keyword_hint` says how to add them.
    """

    def keyword_text(self, query: QueryBundle) -> str | None:
        return query.query_str

    def keyword_hint(self) -> str | None:
        """One line when the collection exists without BM25 vectors, else None."""
        backend, collection = self.backend, self.collection
        if backend.collection_exists(collection) and not backend.has_keywords(collection):
            return KEYWORD_HINT.format(collection=collection)
        return None
