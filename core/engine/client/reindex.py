"""Adding BM25 vectors to a qdrant-client collection built before hybrid search (`reindex`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from qdrant_client import models

from scoperag.core.engine.vector_names import DENSE_VECTOR

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

    from scoperag.core.engine.backend import VectorBackend

SPARE = "__reindex"  # suffix of the spare copy `add_keywords` makes


def add_keywords(backend: VectorBackend, client: QdrantClient, collection: str) -> int:
    """Copy into `<collection>__reindex`, recreate the collection with BM25, copy back.

    Resumable: the spare copy outlives a crash while the collection is being rebuilt, and
    the next run finishes from it (the engine has no atomic rename to do it in one step).
    """
    spare = f"{collection}{SPARE}"
    exists = client.collection_exists(collection)
    if exists and backend.has_keywords(collection) and not client.collection_exists(spare):
        return 0
    if exists and not backend.has_keywords(collection):
        backend.delete_collection(spare)  # a spare from a crash before the original was touched
        _copy(backend, client, collection, spare)
        backend.delete_collection(collection)
    if not client.collection_exists(collection):
        _copy_shape(backend, client, spare, collection)
    copied = _copy_points(backend, spare, collection)
    backend.delete_collection(spare)
    return copied


def _copy(backend: VectorBackend, client: QdrantClient, source: str, target: str) -> int:
    _copy_shape(backend, client, source, target)
    return _copy_points(backend, source, target)


def _copy_shape(backend: VectorBackend, client: QdrantClient, source: str, target: str) -> None:
    """An empty BM25-keeping collection with the dimension, metadata, indexes of `source`."""
    config = client.get_collection(source).config
    dimension = config.params.vectors[DENSE_VECTOR].size
    backend.create_collection(target, dimension, config.metadata or {})
    for key, kind in backend.payload_indexes(source).items():
        backend.create_index(target, key, kind)


def _copy_points(backend: VectorBackend, source: str, target: str) -> int:
    copied = 0
    for page in backend.points(source):
        points = [models.PointStruct(id=r.id, vector=r.vector, payload=r.payload) for r in page]
        backend.upsert_points(target, points)
        copied += len(page)
    return copied
