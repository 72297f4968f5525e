"""docs profile search: the one implementation behind `elf_docs_search_l0` and the HTTP route."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scoperag.core.contracts.docs import COLLECTION, DOCS_FILTERS, DocChunkPayload
from scoperag.core.engine.index_status import refuse_unindexed
from scoperag.core.engine.node_payload import stored_text_and_metadata
from scoperag.retrievers.explain import explained
from scoperag.retrievers.searches import HybridSearch, TextQuery
from scoperag.server.mcp.unknown_values import unknown_value_notes
from scoperag.server.profiles.docs.filters import DocsSearchFilters, DocsSearchRequest
from scoperag.server.profiles.docs.models import EMPTY_HINT, DocsHit, DocsSearchResult
from scoperag.server.results.hits import drop_names
from scoperag.server.results.shape import engine_figures
from scoperag.server.runtime import Runtime

if TYPE_CHECKING:
    from qdrant_client.models import ScoredPoint

    from scoperag.core.engine.backend import VectorBackend


def _hit(point: ScoredPoint) -> DocsHit:
    text, metadata = stored_text_and_metadata(point.payload or {})
    return DocsHit(
        text=text,
        **engine_figures(point),
        **{key: metadata.get(key) for key in DocChunkPayload.model_fields},
    )


def _unknown(backend: VectorBackend, filters: DocsSearchFilters) -> list[str]:
    """Notes on a doc_type, agent_id or status no document has (asked only when empty)."""
    given = {name: (name, getattr(filters, name)) for name in ("doc_type", "agent_id", "status")}
    return unknown_value_notes(backend, COLLECTION, given)


class DocsService:
    """The docs profile's search over one runtime."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def search(self, request: DocsSearchRequest) -> DocsSearchResult:
        """Validated filters -> native Qdrant filter -> top_k chunks."""
        filters = request.filters()
        backend = self.runtime.backend
        refuse_unindexed(backend, COLLECTION, DOCS_FILTERS)  # a Qdrant server's only
        flt = filters.qdrant_filter()
        search = HybridSearch(
            backend, self.runtime.embedder, COLLECTION, flt, request.top_k, explain=request.explain
        )
        found = search.search(TextQuery(request.query))
        if not found.exists:
            return DocsSearchResult(filters=filters, hits=[], message=EMPTY_HINT)
        hits = [_hit(point) for point in found.hits]
        notes = [] if hits else ["No document matches these filters.", *_unknown(backend, filters)]
        notes.append(search.keyword_hint())
        message = " ".join(note for note in notes if note) or None
        result = DocsSearchResult(filters=filters, hits=hits, message=message)
        if not request.explain:
            return result
        names = drop_names("elf_docs_search_l0", backend, COLLECTION)
        return explained(result, result.hits, found, flt, names=names)
