"""docs profile search: the one implementation behind `elf_docs_search_l0` and the HTTP route."""

from __future__ import annotations

from scoperag.core.contracts.docs import COLLECTION, DOCS_FILTERS, DocChunkPayload
from scoperag.core.docs_filters import DocsSearchRequest
from scoperag.core.index_status import refuse_unindexed
from scoperag.core.node_payload import stored_text_and_metadata
from scoperag.retrievers.searches import HybridSearch, TextQuery
from scoperag.server.docs_tools import EMPTY_HINT, DocsHit, DocsSearchResult
from scoperag.server.runtime import Runtime


def _hit(payload: dict, score: float) -> DocsHit:
    text, metadata = stored_text_and_metadata(payload)
    return DocsHit(
        text=text, score=score, **{key: metadata.get(key) for key in DocChunkPayload.model_fields}
    )


class DocsService:
    """The docs profile's search over one runtime."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def search(self, request: DocsSearchRequest) -> DocsSearchResult:
        """Validated filters -> native Qdrant filter -> top_k chunks."""
        filters = request.filters()
        backend = self.runtime.backend
        refuse_unindexed(backend, COLLECTION, DOCS_FILTERS)  # a Qdrant server's only
        search = HybridSearch(
            backend, self.runtime.embedder, COLLECTION, filters.qdrant_filter(), request.top_k
        )
        found = search.search(TextQuery(request.query))
        if not found.exists:
            return DocsSearchResult(filters=filters, hits=[], message=EMPTY_HINT)
        hits = [_hit(point.payload or {}, point.score) for point in found.hits]
        notes = [None if hits else "No document matches these filters.", search.keyword_hint()]
        message = " ".join(note for note in notes if note) or None
        return DocsSearchResult(filters=filters, hits=hits, message=message)
