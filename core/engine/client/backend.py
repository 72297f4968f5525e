"""`VectorBackend` on qdrant-client: embedded local mode (`path=`) or a Qdrant server (`url=`)."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from qdrant_client import QdrantClient, models
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from scoperag.core.embedding.bm25 import document_vector, node_text
from scoperag.core.embedding.vector_check import check_points
from scoperag.core.engine.backend import ALL_VALUES, VectorBackend
from scoperag.core.engine.client import search as client_search
from scoperag.core.engine.collection_embedder import searchable
from scoperag.core.engine.error_kinds import is_store_locked
from scoperag.core.engine.search_request import SearchRequest, SearchResult
from scoperag.core.engine.vector_names import DENSE_VECTOR, SPARSE_VECTOR
from scoperag.core.errors import QdrantUnreachableError, StoreLockedError

SPARE = "__reindex"  # suffix of the spare copy `add_keywords` makes


class QdrantClientBackend(VectorBackend):
    """Every call goes through one `QdrantClient`."""

    def __init__(self, client: QdrantClient, name: str) -> None:
        self.client = client
        self.name = name
        self.fresh_registry = name == "server"  # other processes may write a server
        self._params: dict[str, models.CollectionParams] = {}  # per collection, read once

    @classmethod
    def local(cls, path: Path) -> QdrantClientBackend:
        """Embedded store under `path`; a clear error if another process holds it."""
        path.mkdir(parents=True, exist_ok=True)
        try:
            client = QdrantClient(path=str(path))
        except RuntimeError as exc:
            if is_store_locked(exc):
                raise StoreLockedError(str(path)) from None
            raise
        return cls(client, "local")

    @classmethod
    def server(cls, url: str, api_key: str | None) -> QdrantClientBackend:
        """A Qdrant server, checked at once: one clear error if it does not answer."""
        client = QdrantClient(url=url, api_key=api_key, timeout=30, check_compatibility=False)
        try:
            client.get_collections()
        except ResponseHandlingException as exc:  # no HTTP answer: refused, DNS, TLS, timeout
            client.close()
            raise QdrantUnreachableError(url, str(exc.source or exc)) from None
        except UnexpectedResponse as exc:
            client.close()
            if exc.status_code in (401, 403):
                raise QdrantUnreachableError(
                    url, f"HTTP {exc.status_code}: wrong API key"
                ) from None
            raise
        return cls(client, "server")

    def _collection_params(self, collection: str) -> models.CollectionParams:
        """The collection's vectors, read once (it is rebuilt only through this backend)."""
        if collection not in self._params:
            self._params[collection] = self.client.get_collection(collection).config.params
        return self._params[collection]

    def has_keywords(self, collection: str) -> bool:
        return SPARSE_VECTOR in (self._collection_params(collection).sparse_vectors or {})

    def add_keywords(self, collection: str) -> int:
        """Copy into `<collection>__reindex`, recreate the collection with BM25, copy back.

        Resumable: the spare copy outlives a crash while the collection is being rebuilt, and
        the next run finishes from it (the engine has no atomic rename to do it in one step).
        """
        spare, client = f"{collection}{SPARE}", self.client
        exists = client.collection_exists(collection)
        if exists and self.has_keywords(collection) and not client.collection_exists(spare):
            return 0
        if exists and not self.has_keywords(collection):
            self.delete_collection(spare)  # a spare from a crash before the original was touched
            self._copy_shape(collection, spare)
            self._copy_points(collection, spare)
            self.delete_collection(collection)
        if not client.collection_exists(collection):
            self._copy_shape(spare, collection)
        copied = self._copy_points(spare, collection)
        self.delete_collection(spare)
        return copied

    def _copy_shape(self, source: str, target: str) -> None:
        """An empty BM25-keeping collection with the dimension, metadata, indexes of `source`."""
        config = self.client.get_collection(source).config
        dimension = config.params.vectors[DENSE_VECTOR].size
        self.create_collection(target, dimension, config.metadata or {})
        for key, kind in self.payload_indexes(source).items():
            self.create_index(target, key, kind)

    def _copy_points(self, source: str, target: str) -> int:
        copied = 0
        for page in self.points(source):
            points = [models.PointStruct(id=r.id, vector=r.vector, payload=r.payload) for r in page]
            self.upsert_points(target, points)
            copied += len(page)
        return copied

    def search(self, request: SearchRequest) -> SearchResult:
        if not searchable(self, request):
            return SearchResult(hits=[], exists=False, keywords=False)
        keywords = self.has_keywords(request.collection)
        flt = self._visible(request.collection, request.filter)
        hybrid = keywords and bool(request.text and request.text.strip())
        hits = client_search.search(self.client, request, flt, hybrid)
        count = None
        if request.count_cap is not None:
            count = client_search.count_above(self.client, request, flt, request.count_cap)
        branches = (
            client_search.branches(self.client, request, flt, hybrid) if request.explain else None
        )
        return SearchResult(
            hits=hits, exists=True, keywords=keywords, count=count, branches=branches
        )

    def neighbours(
        self, collection: str, flt: models.Filter | None, threshold: float, limit: int
    ) -> list[tuple[int | str, int | str, float]]:
        if not self.collection_exists(collection):
            return []
        flt = self._visible(collection, flt)
        return client_search.neighbours(self.client, collection, flt, threshold, limit)

    def _visible(self, collection: str, flt: models.Filter | None) -> models.Filter | None:
        """`flt` narrowed to what readers may see (`core.engine.generations`)."""
        return self.generations.visible(collection, flt)

    def list_collections(self) -> list[str]:
        return sorted(c.name for c in self.client.get_collections().collections)

    def collection_exists(self, collection: str) -> bool:
        return self.client.collection_exists(collection)

    def create_collection(self, collection: str, dimension: int, metadata: dict[str, Any]) -> None:
        self.generations.forget(collection)
        self._params.pop(collection, None)
        self.client.create_collection(
            collection_name=collection,
            vectors_config={
                DENSE_VECTOR: models.VectorParams(size=dimension, distance=models.Distance.COSINE)
            },
            sparse_vectors_config={
                SPARSE_VECTOR: models.SparseVectorParams(modifier=models.Modifier.IDF)
            },
            metadata=metadata,
        )

    def collection_metadata(self, collection: str) -> dict[str, Any]:
        return self.client.get_collection(collection).config.metadata or {}

    def update_collection_metadata(self, collection: str, changes: dict[str, Any]) -> None:
        self.client.update_collection(collection, metadata=changes)
        self.generations.forget(collection)  # a registry written through another process

    def payload_indexes(self, collection: str) -> dict[str, str]:
        schema = self.client.get_collection(collection).payload_schema or {}
        return {key: str(info.data_type.value) for key, info in schema.items()}

    def create_index(self, collection: str, key: str, schema: str) -> None:
        with warnings.catch_warnings():
            # Local mode ignores payload indexes (it scans every point, as the README says),
            # so its warning for each one is noise here.
            warnings.simplefilter("ignore")
            logging.getLogger("qdrant_client").disabled = True
            try:
                kind = models.PayloadSchemaType(schema)
                self.client.create_payload_index(collection, key, field_schema=kind, wait=True)
            finally:
                logging.getLogger("qdrant_client").disabled = False

    def delete(self, collection: str, flt: models.Filter) -> None:
        selector = models.FilterSelector(filter=flt)
        self.client.delete(collection, points_selector=selector, wait=True)

    def delete_collection(self, collection: str) -> None:
        self._params.pop(collection, None)
        self.client.delete_collection(collection)
        self.generations.forget(collection)

    def scroll(
        self,
        collection: str,
        flt: models.Filter | None,
        limit: int,
        offset: int = 0,
        order_by: models.OrderBy | None = None,
        with_vectors: bool = False,
    ) -> list[models.Record]:
        flt = self._visible(collection, flt)
        if order_by is not None:
            # as on Edge: the points skipped are read by id alone, the page's then fetched whole
            records, _ = self.client.scroll(
                collection,
                scroll_filter=flt,
                limit=offset + limit,
                order_by=order_by,
                with_payload=offset == 0,
                with_vectors=with_vectors and offset == 0,
            )
            if not offset:
                return records
            ids = [record.id for record in records[offset:]]
            found = self.client.retrieve(collection, ids, with_vectors=with_vectors)
            found = {record.id: record for record in found}
            return [found[point_id] for point_id in ids if point_id in found]
        records: list[models.Record] = []
        next_offset = None
        while len(records) < offset + limit:
            batch, next_offset = self.client.scroll(
                collection,
                scroll_filter=flt,
                limit=min(offset + limit - len(records), 1024),
                offset=next_offset,
                with_vectors=with_vectors,
            )
            records += batch
            if next_offset is None:
                break
        return records[offset:]

    def points(self, collection: str, batch_size: int = 512) -> Iterator[list[models.Record]]:
        """Every point with its vectors and payload, a page at a time (for migrations)."""
        cursor = None
        while True:
            batch, cursor = self.client.scroll(
                collection, limit=batch_size, offset=cursor, with_vectors=True
            )
            if batch:
                yield batch
            if cursor is None:
                return

    def points_page(
        self, collection: str, cursor: int | str | None, limit: int
    ) -> tuple[list[models.Record], int | str | None]:
        flt = self._visible(collection, None)
        return self.client.scroll(
            collection, scroll_filter=flt, limit=limit, offset=cursor, with_vectors=True
        )

    def count(self, collection: str, flt: models.Filter | None) -> int:
        flt = self._visible(collection, flt)
        return self.client.count(collection, count_filter=flt, exact=True).count

    def facet(
        self, collection: str, key: str, flt: models.Filter | None, limit: int
    ) -> dict[Any, int]:
        flt = self._visible(collection, flt)
        response = self.client.facet(collection, key=key, facet_filter=flt, limit=limit, exact=True)
        return {hit.value: hit.count for hit in response.hits}

    def key_values(self, collection: str, key: str) -> list[Any]:
        response = self.client.facet(collection, key=key, limit=ALL_VALUES, exact=False)
        return [hit.value for hit in response.hits]

    def set_payload(self, collection: str, point_id: int | str, payload: dict[str, Any]) -> None:
        self.client.set_payload(collection, payload=payload, points=[point_id], wait=True)

    def upsert_points(self, collection: str, points: list[models.PointStruct]) -> None:
        dense = self._collection_params(collection).vectors
        size = (
            dense[DENSE_VECTOR].size if isinstance(dense, dict) and DENSE_VECTOR in dense else None
        )
        check_points(points, DENSE_VECTOR, size)
        if self.has_keywords(collection):
            points = [_with_keywords(point) for point in points]
        self.client.upsert(collection, points=points, wait=True)

    def close(self) -> None:
        self.client.close()


def _with_keywords(point: models.PointStruct) -> models.PointStruct:
    """The point with its BM25 vector, computed from its text when it has none."""
    vector = point.vector
    if not isinstance(vector, dict) or SPARSE_VECTOR in vector:
        return point
    sparse = document_vector(node_text(point.payload or {}))
    return point.model_copy(update={"vector": {**vector, SPARSE_VECTOR: sparse}})
