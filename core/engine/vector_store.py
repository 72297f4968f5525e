"""`CollectionVectorStore`: LlamaIndex's vector store API over one collection of any engine.

Every call is one public `EngineOperations` operation (upsert, search, scroll, count, delete by
filter), so the store works the same on Qdrant Edge, local mode, a Qdrant server and in a process
that reaches the engine through another one, and every read skips the points a replacement hides
(`core.engine.generations`). Payloads are LlamaIndex's own (`node_to_metadata_dict`, the
layout of its `QdrantVectorStore`), so nodes round-trip, `VectorStoreIndex.from_vector_store`
works and a collection migrates between engines as it is. `query` honours `qdrant_filters=` (a
`qdrant_client.models.Filter` that replaces the query's filters) like `QdrantVectorStore`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from llama_index.core.schema import BaseNode
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
    VectorStoreQueryResult,
)
from llama_index.core.vector_stores.utils import metadata_dict_to_node, node_to_metadata_dict
from pydantic import PrivateAttr
from qdrant_client import models

from scoperag.core.engine.generations import SOURCE_KEY
from scoperag.core.engine.search_request import SearchRequest
from scoperag.core.engine.vector_names import DENSE_VECTOR
from scoperag.core.filters.metadata_filters import to_qdrant_filter

if TYPE_CHECKING:
    from scoperag.core.engine.operations import EngineOperations

BATCH_SIZE = 256  # nodes per upsert
_MODES = (VectorStoreQueryMode.DEFAULT, VectorStoreQueryMode.HYBRID)


class CollectionVectorStore(BasePydanticVectorStore):
    """Nodes of one collection, in LlamaIndex's Qdrant payload layout."""

    stores_text: bool = True
    flat_metadata: bool = False

    collection_name: str
    _backend: EngineOperations = PrivateAttr()

    def __init__(self, backend: EngineOperations, collection: str, **kwargs: Any) -> None:
        super().__init__(collection_name=collection, **kwargs)
        self._backend = backend

    @classmethod
    def class_name(cls) -> str:
        return "CollectionVectorStore"

    @property
    def client(self) -> EngineOperations:
        return self._backend

    def add(self, nodes: Sequence[BaseNode], **add_kwargs: Any) -> list[str]:
        """Upsert embedded nodes (BM25 vectors too where the collection keeps them)."""
        for start in range(0, len(nodes), BATCH_SIZE):
            points = [
                models.PointStruct(
                    id=node.node_id,
                    vector={DENSE_VECTOR: node.get_embedding()},
                    payload=node_to_metadata_dict(
                        node, remove_text=False, flat_metadata=self.flat_metadata
                    ),
                )
                for node in nodes[start : start + BATCH_SIZE]
            ]
            self._backend.upsert_points(self.collection_name, points)
        return [node.node_id for node in nodes]

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """Delete every node of the source document `ref_doc_id`."""
        source = models.FieldCondition(key=SOURCE_KEY, match=models.MatchValue(value=ref_doc_id))
        self._backend.delete(self.collection_name, models.Filter(must=[source]))

    def delete_nodes(
        self,
        node_ids: list[str] | None = None,
        filters: MetadataFilters | None = None,
        **delete_kwargs: Any,
    ) -> None:
        """Delete nodes by id and/or MetadataFilters (both given: both must hold)."""
        self._backend.delete(self.collection_name, _nodes_filter(node_ids, filters))

    def clear(self) -> None:
        """Delete every node; the collection stays."""
        self._backend.delete(self.collection_name, models.Filter())

    def get_nodes(
        self,
        node_ids: list[str] | None = None,
        filters: MetadataFilters | None = None,
        limit: int | None = None,
    ) -> list[BaseNode]:
        """Nodes by id and/or MetadataFilters, with their embeddings (every match without
        `limit`)."""
        flt = _nodes_filter(node_ids, filters)
        if limit is None:
            limit = self._backend.count(self.collection_name, flt)
        if not limit:
            return []
        records = self._backend.scroll(self.collection_name, flt, limit, with_vectors=True)
        return _result(records).nodes or []

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        """Top-k nodes by cosine similarity (`hybrid`: fused with the BM25 ranking of the
        query's text) among those matching the query's filters, or `qdrant_filters`."""
        if query.mode not in _MODES:
            raise ValueError(
                f"CollectionVectorStore supports the modes {', '.join(m.value for m in _MODES)}, "
                f"not '{query.mode.value}'."
            )
        if query.query_embedding is None:
            raise ValueError("CollectionVectorStore needs a query embedding.")
        flt = kwargs.get("qdrant_filters")
        if flt is None:
            flt = _query_filter(query)
        hybrid = query.mode == VectorStoreQueryMode.HYBRID
        request = SearchRequest(
            collection=self.collection_name,
            dense=list(query.query_embedding),
            text=query.query_str if hybrid else None,
            filter=flt,
            limit=query.similarity_top_k,
        )
        return _result(self._backend.search(request).hits)


def _query_filter(query: VectorStoreQuery) -> models.Filter | None:
    """The query's documents, nodes and MetadataFilters, all of them (None: no condition)."""
    must: list[models.Condition] = []
    if query.doc_ids:
        must.append(models.FieldCondition(key=SOURCE_KEY, match=models.MatchAny(any=query.doc_ids)))
    if query.node_ids:
        must.append(models.HasIdCondition(has_id=query.node_ids))
    if query.filters and query.filters.filters:
        must.append(to_qdrant_filter(query.filters))
    return models.Filter(must=must) if must else None


def _nodes_filter(node_ids: list[str] | None, filters: MetadataFilters | None) -> models.Filter:
    must: list[models.Condition] = []
    if node_ids is not None:
        must.append(models.HasIdCondition(has_id=node_ids))
    if filters is not None:
        must.append(to_qdrant_filter(filters))
    return models.Filter(must=must or None)


def _result(points: Sequence[models.ScoredPoint | models.Record]) -> VectorStoreQueryResult:
    nodes, scores, ids = [], [], []
    for point in points:
        node = metadata_dict_to_node(point.payload or {})
        if node.embedding is None and isinstance(point.vector, dict):
            node.embedding = point.vector.get(DENSE_VECTOR)
        nodes.append(node)
        scores.append(point.score if isinstance(point, models.ScoredPoint) else 1.0)
        ids.append(str(point.id))
    return VectorStoreQueryResult(nodes=nodes, similarities=scores, ids=ids)
