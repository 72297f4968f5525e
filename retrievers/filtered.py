"""`FilteredRetriever`: dense search restricted by a native Qdrant filter."""

from __future__ import annotations

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.vector_stores.types import VectorStoreQuery
from qdrant_client import models

from scoperag.core.backend import VectorBackend
from scoperag.core.collections import ready_for_reading
from scoperag.core.embeddings import Embedder


class FilteredRetriever(BaseRetriever):
    """Top-k nodes of one collection that satisfy `qdrant_filter` (AND of the tool's filters)."""

    def __init__(
        self,
        backend: VectorBackend,
        embedder: Embedder,
        collection: str,
        qdrant_filter: models.Filter | None = None,
        top_k: int = 10,
    ) -> None:
        super().__init__()
        self.backend = backend
        self.embedder = embedder
        self.collection = collection
        self.qdrant_filter = qdrant_filter
        self.top_k = top_k

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if not ready_for_reading(self.backend, self.embedder, self.collection):
            return []
        embedding = query_bundle.embedding or self.embedder.embed_query(query_bundle.query_str)
        query = VectorStoreQuery(query_embedding=embedding, similarity_top_k=self.top_k)
        result = self.backend.vector_store(self.collection).query(
            query, qdrant_filters=self.qdrant_filter
        )
        scores = result.similarities or [0.0] * len(result.nodes or [])
        return [
            NodeWithScore(node=node, score=score)
            for node, score in zip(result.nodes or [], scores, strict=True)
        ]
