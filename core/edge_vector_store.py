"""`EdgeVectorStore`: LlamaIndex's vector store API over one collection on Qdrant Edge.

Payloads are laid out exactly as LlamaIndex's `QdrantVectorStore` lays them out (flat metadata
beside `_node_content`, `_node_type`, `doc_id`, `document_id`, `ref_doc_id`), so nodes round-trip,
`VectorStoreIndex.from_vector_store` works, and a collection migrates between engines as it is.
`query` honours `qdrant_filters=` (a `qdrant_client.models.Filter` that replaces MetadataFilters)
and `search_params=` like `QdrantVectorStore`, else `EdgeCollection.plan_search` chooses them.
The engine work is `EdgeCollection`'s (`core.edge_collection`), which the tools use directly."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import qdrant_edge as edge
from llama_index.core.schema import BaseNode
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    VectorStoreQuery,
    VectorStoreQueryMode,
    VectorStoreQueryResult,
)
from llama_index.core.vector_stores.utils import metadata_dict_to_node, node_to_metadata_dict
from pydantic import PrivateAttr
from qdrant_client import models

from scoperag.core.edge_collection import EdgeCollection
from scoperag.core.generations import SOURCE_KEY


class EdgeVectorStore(BasePydanticVectorStore):
    """Nodes of one collection in an open Edge shard, in LlamaIndex's Qdrant payload layout."""

    stores_text: bool = True
    flat_metadata: bool = False

    collection_name: str
    _engine: EdgeCollection = PrivateAttr()

    def __init__(self, engine: EdgeCollection, **kwargs: Any) -> None:
        super().__init__(collection_name=engine.name, **kwargs)
        self._engine = engine

    @classmethod
    def class_name(cls) -> str:
        return "EdgeVectorStore"

    @property
    def client(self) -> edge.EdgeShard:
        return self._engine.client

    def add(self, nodes: Sequence[BaseNode], **add_kwargs: Any) -> list[str]:
        """Upsert nodes (with their embeddings) in LlamaIndex's Qdrant payload layout."""
        self._engine.upsert_points(
            models.PointStruct(
                id=node.node_id,
                vector={self._engine.dense_vector_name: node.get_embedding()},
                payload=node_to_metadata_dict(
                    node, remove_text=False, flat_metadata=self.flat_metadata
                ),
            )
            for node in nodes
        )
        return [node.node_id for node in nodes]

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """Delete every node of the source document `ref_doc_id`."""
        self._engine.delete_by_filter(
            models.Filter(
                must=[
                    models.FieldCondition(key=SOURCE_KEY, match=models.MatchValue(value=ref_doc_id))
                ]
            )
        )

    def delete_nodes(
        self, node_ids: list[str] | None = None, filters: Any = None, **delete_kwargs: Any
    ) -> None:
        """Delete nodes by id and/or MetadataFilters (both given: both must hold)."""
        self._engine.delete_by_filter(self._nodes_filter(node_ids, filters))

    def clear(self) -> None:
        self._engine.delete_by_filter(models.Filter())  # every node goes, the collection stays

    def get_nodes(
        self, node_ids: list[str] | None = None, filters: Any = None, limit: int | None = None
    ) -> list[BaseNode]:
        """Nodes by id and/or MetadataFilters, with their embeddings."""
        wanted = len(node_ids) if node_ids is not None else None
        records = self._engine.scroll(
            self._nodes_filter(node_ids, filters), limit or wanted or 9999, with_vectors=True
        )
        return self._to_result(records).nodes or []

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        """Top-k nodes by cosine similarity satisfying the query's filter (or `qdrant_filters`)."""
        if query.mode != VectorStoreQueryMode.DEFAULT:
            raise ValueError(
                f"EdgeVectorStore supports dense queries only (mode 'default'), not "
                f"'{query.mode.value}'."
            )
        if query.query_embedding is None:
            raise ValueError("EdgeVectorStore needs a query embedding.")
        qdrant_filters = kwargs.get("qdrant_filters")
        flt = qdrant_filters if qdrant_filters is not None else self._build_query_filter(query)
        engine = self._engine
        edge_filter = engine.visible(flt)
        params = engine.plan_search(
            edge_filter, query.similarity_top_k, kwargs.get("search_params")
        )
        points = engine.client.query(
            edge.QueryRequest(
                limit=query.similarity_top_k,
                query=edge.Query.Nearest(
                    list(query.query_embedding), using=engine.dense_vector_name
                ),
                filter=edge_filter,
                params=params,
                with_payload=True,
            )
        )
        return self._to_result(points)

    # LlamaIndex's own translation of `VectorStoreQuery` filters (as `QdrantVectorStore` reads
    # them, into qdrant-client's models), imported with qdrant-client only when a filter needs it
    def _build_query_filter(self, query: VectorStoreQuery) -> Any:
        from llama_index.vector_stores.qdrant import QdrantVectorStore

        return QdrantVectorStore._build_query_filter(self, query)

    def _build_subfilter(self, filters: Any) -> Any:
        from llama_index.vector_stores.qdrant import QdrantVectorStore

        return QdrantVectorStore._build_subfilter(self, filters)

    def _nodes_filter(self, node_ids: list[str] | None, filters: Any) -> models.Filter:
        must: list[models.Condition] = []
        if node_ids is not None:
            must.append(models.HasIdCondition(has_id=node_ids))
        if filters is not None:
            must.append(self._build_subfilter(filters))
        return models.Filter(must=must or None)

    def _to_result(self, points: Sequence[Any]) -> VectorStoreQueryResult:
        nodes, scores, ids = [], [], []
        for point in points:
            node = metadata_dict_to_node(point.payload or {})
            vector = point.vector or {}
            if node.embedding is None and isinstance(vector, dict):
                node.embedding = vector.get(self._engine.dense_vector_name)
            nodes.append(node)
            scores.append(getattr(point, "score", 1.0))
            ids.append(str(point.id))
        return VectorStoreQueryResult(nodes=nodes, similarities=scores, ids=ids)
