"""The embedder a collection records, and the check every engine's `search` makes against it."""

from __future__ import annotations

from scoperag.core.embedding.embedders import EmbedderInfo
from scoperag.core.embedding.vector_check import check_vectors
from scoperag.core.engine.backend import VectorBackend
from scoperag.core.engine.search_request import SearchRequest

EMBEDDER_KEY = "scoperag_embedder"


def stored_embedder(backend: VectorBackend, collection: str) -> EmbedderInfo | None:
    """The embedder a collection was built with, if it records one."""
    recorded = backend.collection_metadata(collection).get(EMBEDDER_KEY)
    return EmbedderInfo.model_validate(recorded) if recorded else None


def searchable(backend: VectorBackend, request: SearchRequest) -> bool:
    """False if the request's collection does not exist; raises if it was built with another
    embedder than the request names (the check inside every engine's `search`)."""
    if not backend.collection_exists(request.collection):
        return False
    dimension = None
    if request.embedder is not None:
        stored = stored_embedder(backend, request.collection)
        request.embedder.check_builds(request.collection, stored)
        dimension = stored.dimension if stored else None
    check_vectors([request.dense], dimension, False, "query")
    return True
