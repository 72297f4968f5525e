"""`FilteredRetriever`: dense search restricted by a native Qdrant filter."""

from __future__ import annotations

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.vector_stores.utils import metadata_dict_to_node
from qdrant_client import models

from scoperag.core.backend import VectorBackend
from scoperag.core.collections import ready_for_reading
from scoperag.core.embeddings import Embedder


class FilteredRetriever(BaseRetriever):
    """Top-k nodes of one collection that satisfy `qdrant_filter` (AND of the tool's filters).

    `offset` skips the best hits (pages); `min_score` keeps only hits whose cosine similarity
    is at least that (the engine's score threshold). Scores are cosine similarities.
    """

    def __init__(
        self,
        backend: VectorBackend,
        embedder: Embedder,
        collection: str,
        qdrant_filter: models.Filter | None = None,
        top_k: int = 10,
        offset: int = 0,
        min_score: float | None = None,
    ) -> None:
        super().__init__()
        self.backend = backend
        self.embedder = embedder
        self.collection = collection
        self.qdrant_filter = qdrant_filter
        self.top_k = top_k
        self.offset = offset
        self.min_score = min_score

    def keyword_text(self, query: QueryBundle) -> str | None:
        """The text the engine ranks by keywords beside the vector: none, dense only."""
        return None

    def embed(self, query: QueryBundle) -> list[float]:
        """The query's embedding, computed once and kept on the bundle."""
        if query.embedding is None:
            query.embedding = self.embedder.embed_query(query.query_str)
        return query.embedding

    def points(
        self, query: QueryBundle, with_payload: bool = True, checked: bool = False
    ) -> list[models.ScoredPoint]:
        """The hits as the engine returns them (no nodes built): best first, cosine scores.

        `checked`: the caller has just run `ready_for_reading` (it is not run twice)."""
        if not checked and not ready_for_reading(self.backend, self.embedder, self.collection):
            return []
        return self.backend.search(
            self.collection,
            self.embed(query),
            self.keyword_text(query),
            self.qdrant_filter,
            self.top_k,
            self.offset,
            self.min_score,
            with_payload,
        )

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [
            NodeWithScore(node=metadata_dict_to_node(point.payload or {}), score=point.score)
            for point in self.points(query_bundle)
        ]
