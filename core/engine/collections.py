"""Collections as scoperag keeps them: the embedder recorded, the declared indexes ensured."""

from __future__ import annotations

from collections.abc import Iterable

from scoperag.core.config.settings import Settings
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.engine.backend import VectorBackend
from scoperag.core.engine.collection_embedder import EMBEDDER_KEY, stored_embedder
from scoperag.core.filters.fields import FilterableField, index_plan


def open_backend(settings: Settings) -> VectorBackend:
    """The engine the settings choose (server by URL, else the embedded default)."""
    kind = settings.effective_backend
    if kind == "edge":  # its searches import neither LlamaIndex nor qdrant-client's client
        from scoperag.core.engine.edge.backend import EdgeBackend

        return EdgeBackend.open(settings.data_dir / "edge")
    from scoperag.core.engine.client.backend import QdrantClientBackend

    if kind == "server":
        key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        return QdrantClientBackend.server(settings.qdrant_url or "", key)
    return QdrantClientBackend.local(settings.data_dir / "qdrant")


def ensure_indexes(
    backend: VectorBackend, collection: str, fields: Iterable[FilterableField]
) -> list[str]:
    """Create the declared payload indexes that are missing; returns the keys created."""
    existing = backend.payload_indexes(collection)
    created = []
    for key, schema in index_plan(fields).items():
        if key not in existing:
            backend.create_index(collection, key, schema)
            created.append(key)
    return created


def missing_indexes(
    backend: VectorBackend, collection: str, fields: Iterable[FilterableField]
) -> list[str]:
    existing = backend.payload_indexes(collection)
    return [key for key in index_plan(fields) if key not in existing]


def prepare_for_writing(
    backend: VectorBackend,
    embedder: Embedder,
    collection: str,
    fields: Iterable[FilterableField],
) -> None:
    """Create the collection if needed (recording the embedder), check it, ensure its indexes.

    Idempotent under concurrent first use: a collection another process created meanwhile is
    taken if it records the same embedder, and refused otherwise."""
    if not backend.collection_exists(collection):
        info = embedder.info
        try:
            backend.create_collection(collection, info.dimension, {EMBEDDER_KEY: info.model_dump()})
        except Exception:
            if not backend.collection_exists(collection):
                raise
    embedder.check_compatible(collection, stored_embedder(backend, collection))
    ensure_indexes(backend, collection, fields)
