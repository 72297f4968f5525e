"""pdf profile tools: qdrant-find, qdrant-store, qdrant-list-documents, qdrant-ingest-pdf."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import anyio
from fastmcp import Context, FastMCP
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
from pydantic import BaseModel, Field
from qdrant_client import models

from core.contracts.pdf import PDF_FIELDS, PDF_INDEXES
from core.field_config import configured_fields
from core.fields import build_filter, empty_selection
from core.paths import allowed_path, expand_files
from pipelines.page_labels import label_runs
from pipelines.pdf import FileReport, ingest_pdfs
from pipelines.store import EmbedNodes, stable_id, write_nodes
from retrievers.filtered import FilteredRetriever
from server.runtime import Runtime
from server.tooling import ModelTool, params_model

EMPTY_HINT = (
    "No PDFs are ingested yet. Run `scoperag ingest pdf FILE.pdf` (with the server stopped when "
    "it uses the embedded store), or call the qdrant-ingest-pdf tool."
)
STORED_SOURCE = "qdrant-store"


class FindParams(BaseModel):
    query: str = Field(min_length=1, description="What to look for, in natural language.")
    limit: int = Field(default=10, ge=1, le=100, description="How many hits to return at most.")


class PageHit(BaseModel):
    text: str
    score: float
    document_id: str | None = None
    physical_page_index: int | None = None
    page_label: str | None = None
    source: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict, description="Other payload fields.")


class FindResult(BaseModel):
    hits: list[PageHit]
    message: str | None = None


class StoreParams(BaseModel):
    information: str = Field(min_length=1, description="The text to remember.")
    metadata: dict[str, Any] | None = Field(
        default=None,
        description="Payload stored with the text; its keys can be filtered on "
        "(e.g. document_id, physical_page_index, page_label).",
    )


class StoreResult(BaseModel):
    id: str
    collection: str


class LabelRange(BaseModel):
    first_label: str
    last_label: str
    first_index: int
    last_index: int


class DocumentInfo(BaseModel):
    document_id: str
    title: str | None
    source: str | None
    page_count: int
    pages_indexed: int
    label_ranges: list[LabelRange]


class NoParams(BaseModel):
    """A tool without parameters."""


class DocumentList(BaseModel):
    documents: list[DocumentInfo]
    message: str | None = None


class IngestResult(BaseModel):
    files: list[dict[str, Any]]
    ingested: int
    skipped: int


_HIT_KEYS = {"document_id", "physical_page_index", "page_label", "source"}
_INTERNAL_KEYS = {"_node_content", "_node_type", "doc_id", "ref_doc_id", "text"}


def _hit(text: str, score: float, metadata: dict[str, Any]) -> PageHit:
    extra = {k: v for k, v in metadata.items() if k not in _HIT_KEYS | _INTERNAL_KEYS}
    return PageHit(
        text=text, score=score, metadata=extra, **{k: metadata.get(k) for k in _HIT_KEYS}
    )


class PdfTools:
    """The pdf profile's handlers over one runtime."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.collection = runtime.settings.pdf_collection
        self.fields = PDF_FIELDS + configured_fields(runtime.settings, set(FindParams.model_fields))

    def find(self, params: BaseModel) -> FindResult:
        values = params.model_dump()
        if reason := empty_selection(self.fields, values):
            return FindResult(hits=[], message=reason)
        backend = self.runtime.backend
        if not backend.collection_exists(self.collection):
            return FindResult(hits=[], message=EMPTY_HINT)
        retriever = FilteredRetriever(
            backend,
            self.runtime.embedder,
            self.collection,
            build_filter(self.fields, values),
            top_k=values["limit"],
        )
        hits = [
            _hit(found.node.get_content(), found.score or 0.0, found.node.metadata)
            for found in retriever.retrieve(values["query"])
        ]
        return FindResult(hits=hits, message=None if hits else "No page matches these filters.")

    def store(self, params: StoreParams) -> StoreResult:
        metadata = dict(params.metadata or {})
        source = str(metadata.get("document_id", STORED_SOURCE))
        node = TextNode(
            id_=stable_id("store", params.information, json.dumps(metadata, sort_keys=True)),
            text=params.information,
            metadata=metadata,
            relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=source)},
        )
        runtime = self.runtime
        EmbedNodes(embedder=runtime.embedder)([node])
        write_nodes(runtime.backend, runtime.embedder, self.collection, PDF_INDEXES, [node])
        return StoreResult(id=node.node_id, collection=self.collection)

    def list_documents(self, _params: BaseModel) -> DocumentList:
        backend = self.runtime.backend
        if not backend.collection_exists(self.collection):
            return DocumentList(documents=[], message=EMPTY_HINT)
        first_chunks = models.Filter(
            must=[models.FieldCondition(key="chunk_index", match=models.MatchValue(value=0))]
        )
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

    def ingest(self, raw_paths: list[str], document_id: str | None, progress: Any) -> IngestResult:
        allowed = self.runtime.settings.allowed_dirs
        files = expand_files([allowed_path(raw, allowed) for raw in raw_paths], ".pdf")
        runtime = self.runtime
        reports = ingest_pdfs(
            files, runtime.backend, runtime.embedder, self.collection, document_id, progress
        )
        return _ingest_result(reports)


def _ingest_result(reports: list[FileReport]) -> IngestResult:
    files = [{k: v for k, v in vars(report).items() if v not in (None, [])} for report in reports]
    ok = sum(report.ok for report in reports)
    return IngestResult(files=files, ingested=ok, skipped=len(reports) - ok)


def build(runtime: Runtime) -> FastMCP:
    """The pdf sub-server."""
    tools = PdfTools(runtime)
    mcp = FastMCP("scoperag-pdf")
    mcp.add_tool(
        ModelTool.build(
            "qdrant-find",
            "Semantic search over ingested PDF pages. Every filter given narrows the search "
            "(AND): document_id, physical_page_index (0-based position in the file), page_label "
            "(the PDF's own label, e.g. 'iv'). Each hit says which document and page it is from.",
            params_model("QdrantFindParams", FindParams, tools.fields),
            tools.find,
            FindResult,
        )
    )
    mcp.add_tool(
        ModelTool.build(
            "qdrant-store",
            "Store a piece of text with optional metadata so that qdrant-find can find it.",
            StoreParams,
            tools.store,
            StoreResult,
            read_only=False,
        )
    )
    mcp.add_tool(
        ModelTool.build(
            "qdrant-list-documents",
            "List every ingested PDF with its page count and page label ranges, to discover "
            "valid document_id and page_label values for qdrant-find.",
            NoParams,
            tools.list_documents,
            DocumentList,
        )
    )

    @mcp.tool(name="qdrant-ingest-pdf")
    async def ingest_pdf(
        paths: Annotated[
            list[str],
            Field(
                min_length=1,
                description="PDF files or directories of PDFs, below SCOPERAG_ALLOWED_DIRS.",
            ),
        ],
        ctx: Context,
        document_id: Annotated[
            str | None,
            Field(description="Id for a single PDF; default: the file name without extension."),
        ] = None,
    ) -> IngestResult:
        """Ingest PDFs (one or more chunks per page); re-ingesting a file replaces its pages."""

        def progress(done: int, total: int, note: str) -> None:
            anyio.from_thread.run(ctx.report_progress, done, total, note)

        return await anyio.to_thread.run_sync(tools.ingest, paths, document_id, progress)

    return mcp


def ingest_paths(
    runtime: Runtime, paths: list[Path], document_id: str | None, progress: Any
) -> IngestResult:
    """CLI entry: ingest local files (no allowed-dirs check: the user runs it themselves)."""
    files = expand_files(paths, ".pdf")
    reports = ingest_pdfs(
        files,
        runtime.backend,
        runtime.embedder,
        runtime.settings.pdf_collection,
        document_id,
        progress,
    )
    return _ingest_result(reports)
