"""`EdgeVectorStore`: a LlamaIndex vector store over one Qdrant Edge shard (one collection).

Payloads are laid out exactly as LlamaIndex's `QdrantVectorStore` lays them out (flat metadata
beside `_node_content`, `_node_type`, `doc_id`, `document_id`, `ref_doc_id`), so nodes round-trip,
`VectorStoreIndex.from_vector_store` works, and a collection migrates between engines as it is.
`query` honours `qdrant_filters=` (a `qdrant_client.models.Filter` that replaces MetadataFilters)
and `search_params=` like `QdrantVectorStore`, else `plan_search` chooses them; `core.edge_search`
runs `VectorBackend.search`. Query-less: `scroll` (order_by), `count`, `facet`, `key_values`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
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
from llama_index.vector_stores.qdrant import QdrantVectorStore
from pydantic import PrivateAttr
from qdrant_client import models

from scoperag.core.backend import ALL_VALUES, DENSE_VECTOR, SPARSE_VECTOR
from scoperag.core.bm25 import document_vector, node_text
from scoperag.core.edge_errors import MissingIndexError as MissingIndexError
from scoperag.core.edge_errors import missing_index
from scoperag.core.edge_filters import to_edge_filter, to_edge_order_by, to_edge_vectors, to_record
from scoperag.core.generations import SOURCE_KEY, with_hidden
from scoperag.core.key_values import KeyValues

_PAGE = 1024
# HNSW beam: EF_PER_SHARE / a filter's share, in [EF_MIN, EF_MAX]: recall@10 >= 0.99 (engine.md)
EF_PER_SHARE, EF_MIN, EF_MAX = 128, 256, 1024
EXACT_BELOW = 20_000  # a filter matching fewer points is searched exactly (cost grows with them)


class EdgeVectorStore(BasePydanticVectorStore):
    """Nodes of one collection in an open Edge shard, in LlamaIndex's Qdrant payload layout."""

    stores_text: bool = True
    flat_metadata: bool = False

    collection_name: str
    dense_vector_name: str = DENSE_VECTOR
    batch_size: int = 256
    keywords: bool = False  # the shard keeps BM25 sparse vectors (`SPARSE_VECTOR`)

    _shard: edge.EdgeShard = PrivateAttr()
    # Conditions of the points no read may return (`core.generations`), set by the backend.
    _hidden: Callable[[], list[models.Filter]] = PrivateAttr(default=list)
    _values: KeyValues = PrivateAttr(default_factory=KeyValues)  # reads kept between writes
    # LlamaIndex's own translation of `VectorStoreQuery` filters (as QdrantVectorStore reads)
    _build_subfilter = QdrantVectorStore._build_subfilter
    _build_query_filter = QdrantVectorStore._build_query_filter

    def __init__(
        self, shard: edge.EdgeShard, collection_name: str, keywords: bool = False, **kwargs: Any
    ) -> None:
        super().__init__(collection_name=collection_name, keywords=keywords, **kwargs)
        self._shard = shard

    @classmethod
    def class_name(cls) -> str:
        return "EdgeVectorStore"

    @property
    def client(self) -> edge.EdgeShard:
        return self._shard

    # writing

    def add(self, nodes: Sequence[BaseNode], **add_kwargs: Any) -> list[str]:
        """Upsert nodes (with their embeddings) in LlamaIndex's Qdrant payload layout."""
        self.upsert_points(
            models.PointStruct(
                id=node.node_id,
                vector={self.dense_vector_name: node.get_embedding()},
                payload=node_to_metadata_dict(
                    node, remove_text=False, flat_metadata=self.flat_metadata
                ),
            )
            for node in nodes
        )
        return [node.node_id for node in nodes]

    def upsert_points(self, points: Iterable[models.PointStruct]) -> None:
        """Write qdrant-client points (vectors included; BM25 ones computed where missing)."""
        self._upsert([self._edge_point(point) for point in points])

    def _edge_point(self, point: models.PointStruct) -> edge.Point:
        vector, payload = point.vector, point.payload or {}
        if self.keywords and isinstance(vector, dict) and SPARSE_VECTOR not in vector:
            vector = {**vector, SPARSE_VECTOR: document_vector(node_text(payload))}
        return edge.Point(point.id, to_edge_vectors(vector), payload)

    def _upsert(self, points: list[edge.Point]) -> None:
        for start in range(0, len(points), self.batch_size):
            batch = points[start : start + self.batch_size]
            self.update(edge.UpdateOperation.upsert_points(batch))
        if points:
            self._shard.optimize()

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """Delete every node of the source document `ref_doc_id`."""
        self.delete_by_filter(
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
        self.delete_by_filter(self._nodes_filter(node_ids, filters))

    def delete_by_filter(self, flt: models.Filter) -> None:
        self.update(edge.UpdateOperation.delete_points_by_filter(to_edge_filter(flt)))

    def update(self, operation: edge.UpdateOperation) -> None:
        with self._values.writing():  # every write drops what `key_values`/`kept_count` kept
            self._shard.update(operation)

    def clear(self) -> None:
        self.delete_by_filter(models.Filter())  # every node goes, the collection stays

    # reading

    def get_nodes(
        self, node_ids: list[str] | None = None, filters: Any = None, limit: int | None = None
    ) -> list[BaseNode]:
        """Nodes by id and/or MetadataFilters, with their embeddings."""
        wanted = len(node_ids) if node_ids is not None else None
        records = self.scroll(
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
        edge_filter = self._visible(flt)
        params = self.plan_search(edge_filter, query.similarity_top_k, kwargs.get("search_params"))
        points = self._shard.query(
            edge.QueryRequest(
                limit=query.similarity_top_k,
                query=edge.Query.Nearest(list(query.query_embedding), using=self.dense_vector_name),
                filter=edge_filter,
                params=params,
                with_payload=True,
            )
        )
        return self._to_result(points)

    def scroll(
        self,
        flt: models.Filter | None,
        limit: int,
        offset: int = 0,
        order_by: models.OrderBy | None = None,
        with_vectors: bool = False,
    ) -> list[models.Record]:
        """Visible points matching `flt`, skipping `offset`, ordered by `order_by` (else by id)."""
        edge_filter = self._visible(flt)
        if order_by is not None:
            request = edge.ScrollRequest(
                limit=offset + limit,
                filter=edge_filter,
                order_by=to_edge_order_by(order_by),
                with_payload=True,
                with_vector=with_vectors,
            )
            with missing_index(self.collection_name, order_by.key, "order_by"):
                records, _ = self._shard.scroll(request)
            return [to_record(record) for record in records[offset:]]
        found: list[Any] = []
        cursor = None
        while len(found) < offset + limit:
            batch, cursor = self._shard.scroll(
                edge.ScrollRequest(
                    offset=cursor,
                    limit=min(offset + limit - len(found), _PAGE),
                    filter=edge_filter,
                    with_payload=True,
                    with_vector=with_vectors,
                )
            )
            found += batch
            if cursor is None:
                break
        return [to_record(record) for record in found[offset:]]

    def points(self, batch_size: int = 512) -> Iterator[list[models.Record]]:
        """Every point with its vectors and payload, a page at a time (for migrations)."""
        cursor = None
        while True:
            batch, cursor = self._shard.scroll(
                edge.ScrollRequest(
                    offset=cursor, limit=batch_size, with_payload=True, with_vector=True
                )
            )
            if batch:
                yield [to_record(record) for record in batch]
            if cursor is None:
                return

    def count(self, flt: models.Filter | None = None) -> int:
        """Exact count of the visible points matching `flt`, kept until the next write."""
        return self.kept_count(self._visible(flt))

    def kept_count(self, edge_filter: edge.Filter | None) -> int:
        """`count_edge`, kept until the collection's next write (keyed by the filter's Debug
        text: every condition and value, the hidden generations' included)."""
        key = ("count", repr(edge_filter))
        return self._values.get(key, partial(self.count_edge, edge_filter))

    def count_edge(self, edge_filter: edge.Filter | None) -> int:
        """Exact count; without a filter (so nothing hidden either) the shard's point count."""
        if edge_filter is None:
            return self._shard.info().points_count
        return self._shard.count(edge.CountRequest(exact=True, filter=edge_filter))

    def facet(self, key: str, flt: models.Filter | None = None, limit: int = 10) -> dict[Any, int]:
        """Value -> number of points, most frequent first (needs a keyword/integer/bool index)."""
        request = edge.FacetRequest(key, limit=limit, exact=True, filter=self._visible(flt))
        return self._facet(request)

    def key_values(self, key: str) -> list[Any]:
        """Every value indexed under `key` (hidden points' too), kept until the next write."""
        request = edge.FacetRequest(key, limit=ALL_VALUES, exact=False)
        return self._values.get(key, lambda: list(self._facet(request)))

    def _facet(self, request: edge.FacetRequest) -> dict[Any, int]:
        with missing_index(self.collection_name, request.key, "facet"):
            response = self._shard.facet(request)
        return {hit.value: hit.count for hit in response.hits}

    # helpers

    def _visible(self, flt: models.Filter | None) -> edge.Filter | None:
        """`flt` in Edge's types, narrowed to the points readers may see."""
        return to_edge_filter(with_hidden(flt, self._hidden()))

    def plan_search(
        self, edge_filter: edge.Filter | None, top_k: int, given: Any = None
    ) -> edge.SearchParams:
        """The caller's search params, else params chosen so top-k matches exact search.

        HNSW with the default beam loses recall when a filter keeps a large share of the points
        but not all of them; few points (filtered or not) are cheaper to search exactly. The
        engine's estimate of the matches (microseconds) settles the common narrow case; an
        estimate above EXACT_BELOW is checked with an exact count (kept until the next write),
        as estimates of conditions on keys without an index can be far too high."""
        if given is not None:
            given = models.SearchParams.model_validate(given)
            return edge.SearchParams(hnsw_ef=given.hnsw_ef, exact=bool(given.exact))
        share = 1.0
        if edge_filter is not None:
            estimate = self._shard.count(edge.CountRequest(exact=False, filter=edge_filter))
            matches = estimate if estimate <= EXACT_BELOW else self.kept_count(edge_filter)
            if matches <= EXACT_BELOW:
                return edge.SearchParams(exact=True)
            share = min(1.0, matches / max(self._shard.info().points_count, 1))
        elif self._shard.info().points_count <= EXACT_BELOW:  # no cheaper than a beam of EF_MIN
            return edge.SearchParams(exact=True)
        return edge.SearchParams(
            hnsw_ef=min(EF_MAX, max(EF_MIN, top_k, round(EF_PER_SHARE / share)))
        )

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
                node.embedding = vector.get(self.dense_vector_name)
            nodes.append(node)
            scores.append(getattr(point, "score", 1.0))
            ids.append(str(point.id))
        return VectorStoreQueryResult(nodes=nodes, similarities=scores, ids=ids)
