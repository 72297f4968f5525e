"""pdf profile handlers: the work behind the tools declared in `server.profiles.pdf.tools`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from qdrant_client import models

from scoperag.core.config.paths import expand_files, files_to_ingest
from scoperag.core.contracts.pdf import CHUNK_INDEX, pdf_indexes
from scoperag.core.engine.generations import GENERATION_KEY
from scoperag.core.engine.node_payload import stored_text_and_metadata
from scoperag.core.filters.fields import FilterableField, build_filter, empty_selection
from scoperag.pipelines.page_labels import label_runs
from scoperag.retrievers.explain import explained
from scoperag.retrievers.searches import HybridSearch, TextQuery
from scoperag.server.mcp.ingest_reports import file_entries
from scoperag.server.mcp.unknown_values import unknown_value_notes
from scoperag.server.profiles.pdf.models import (
    DocumentInfo,
    DocumentList,
    FindResult,
    IngestResult,
    LabelRange,
    PageHit,
    StoreParams,
    StoreResult,
)
from scoperag.server.results.hits import drop_names
from scoperag.server.results.shape import engine_figures
from scoperag.server.runtime import Runtime

if TYPE_CHECKING:
    from scoperag.pipelines.pdf import FileReport

EMPTY_HINT = (
    "No PDFs are ingested yet. Run `scoperag ingest pdf FILE.pdf` (a running server shares the "
    "store with it), or call the qdrant-ingest-pdf tool."
)

_HIT_KEYS = {"document_id", "physical_page_index", "page_label", "source"}
_INTERNAL_KEYS = {"_node_content", "_node_type", "doc_id", "ref_doc_id", "text", GENERATION_KEY}


def _hit(point: models.ScoredPoint) -> PageHit:
    text, metadata = stored_text_and_metadata(point.payload or {})
    extra = {k: v for k, v in metadata.items() if k not in _HIT_KEYS | _INTERNAL_KEYS}
    return PageHit(
        text=text,
        metadata=extra,
        **engine_figures(point),
        **{k: metadata.get(k) for k in _HIT_KEYS},
    )


class PdfService:
    """The pdf profile's handlers over one runtime."""

    def __init__(self, runtime: Runtime, fields: list[FilterableField]) -> None:
        self.runtime = runtime
        self.collection = runtime.settings.pdf_collection
        self.fields = fields

    def find(self, params: BaseModel) -> FindResult:
        values = params.model_dump()
        if reason := empty_selection(self.fields, values):
            return FindResult(hits=[], message=reason)
        flt = build_filter(self.fields, values)
        search = HybridSearch(
            self.runtime.backend,
            self.runtime.embedder,
            self.collection,
            flt,
            top_k=values["limit"],
            explain=values["explain"],
        )
        found = search.search(TextQuery(values["query"]))  # the one engine call
        if not found.exists:
            return FindResult(hits=[], message=EMPTY_HINT)
        hits = [_hit(point) for point in found.hits]
        notes = [] if hits else ["No page matches these filters.", *self._unknown(values)]
        notes.append(search.keyword_hint())
        message = " ".join(note for note in notes if note) or None
        result = FindResult(hits=hits, message=message)
        if not values["explain"]:
            return result
        names = drop_names("qdrant-find", self.runtime.backend, self.collection)
        return explained(result, result.hits, found, flt, names=names)

    def _unknown(self, values: dict[str, Any]) -> list[str]:
        """Notes on a document_id no page has (asked only when nothing matched)."""
        given = {"document_id": ("document_id", values.get("document_id"))}
        return unknown_value_notes(self.runtime.backend, self.collection, given)

    def store(self, params: StoreParams) -> StoreResult:
        from scoperag.server.profiles.pdf.notes import store_note  # LlamaIndex: writes only

        runtime = self.runtime
        point_id = store_note(
            runtime.backend,
            runtime.embedder,
            self.collection,
            pdf_indexes(runtime.settings),
            params.information,
            params.metadata,
        )
        return StoreResult(id=point_id, collection=self.collection)

    def list_documents(self, _params: BaseModel) -> DocumentList:
        backend = self.runtime.backend
        if not backend.collection_exists(self.collection):
            return DocumentList(documents=[], message=EMPTY_HINT)
        first_chunks = build_filter([CHUNK_INDEX], {CHUNK_INDEX.name: 0})
        total = backend.count(self.collection, first_chunks)
        pages: dict[str, list[dict[str, Any]]] = {}
        for record in backend.scroll(self.collection, first_chunks, limit=max(total, 1)):
            payload = record.payload or {}
            pages.setdefault(payload["document_id"], []).append(payload)
        documents = []
        for document_id, rows in sorted(pages.items()):
            rows.sort(key=lambda row: row["physical_page_index"])
            runs = label_runs([(row["physical_page_index"], row["page_label"]) for row in rows])
            documents.append(
                DocumentInfo(
                    document_id=document_id,
                    title=rows[0].get("title"),
                    source=rows[0].get("source"),
                    page_count=rows[0]["page_count"],
                    pages_indexed=len(rows),
                    label_ranges=[LabelRange(**vars(run)) for run in runs],
                )
            )
        return DocumentList(documents=documents, message=None if documents else EMPTY_HINT)

    def ingest(
        self,
        raw_paths: list[str],
        document_id: str | None,
        progress: Any,
        chunking: dict[str, int | None] | None = None,
    ) -> IngestResult:
        """MCP entry: only regular files below SCOPERAG_ALLOWED_DIRS, within the call's limits."""
        runtime = self.runtime
        settings = runtime.settings
        files = files_to_ingest(raw_paths, settings.allowed_dirs, ".pdf", settings.ingest_max_files)
        return _ingest(runtime, files, self.collection, document_id, progress, chunking)


def _ingest(
    runtime: Runtime,
    files: list[Path],
    collection: str,
    document_id: str | None,
    progress: Any,
    chunking: dict[str, int | None] | None = None,
    transformations: list[Any] | None = None,
) -> IngestResult:
    """Ingest with the chunking given, else the collection's, else the default (recorded)."""
    # imported here: pypdf is a quarter of a second of start-up that no search needs
    from scoperag.core.config.chunking import TextChunking, record, recorded, resolve
    from scoperag.pipelines.pdf import ingest_pdfs

    backend = runtime.backend
    used = resolve(TextChunking, recorded(backend, collection), chunking or {}, transformations)
    indexes = pdf_indexes(runtime.settings)
    embedder = runtime.embedder
    reports = ingest_pdfs(
        files, backend, embedder, collection, document_id, progress, indexes, used, transformations
    )
    record(backend, collection, used)
    result = _ingest_result(reports)
    result.chunking = used.parameters()
    return result


def _ingest_result(reports: list[FileReport]) -> IngestResult:
    ok = sum(report.ok for report in reports)
    return IngestResult(files=file_entries(reports), ingested=ok, skipped=len(reports) - ok)


def ingest_paths(
    runtime: Runtime,
    paths: list[Path],
    document_id: str | None,
    progress: Any,
    chunking: dict[str, int | None] | None = None,
    transformations: list[Any] | None = None,
) -> IngestResult:
    """CLI and Python entry: ingest local files (no allowed-dirs check: the user runs it
    themselves); `chunking` values (None: kept), or LlamaIndex `transformations` instead."""
    files = expand_files(paths, ".pdf")
    collection = runtime.settings.pdf_collection
    return _ingest(runtime, files, collection, document_id, progress, chunking, transformations)
