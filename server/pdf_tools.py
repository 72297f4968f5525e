"""pdf profile tools: qdrant-find, qdrant-store, qdrant-list-documents, qdrant-ingest-pdf,
qdrant-delete-document."""

from __future__ import annotations

from typing import Annotated, Any

from fastmcp import Context
from fastmcp.server.providers import LocalProvider
from pydantic import BaseModel, Field

from scoperag.core.contracts.pdf import PDF_FIELDS, user_fields
from scoperag.core.param_types import FilePaths, Metadata, Name, Query, StrictParams, Text
from scoperag.server.data_admin import DeleteReport
from scoperag.server.ingest_calls import run_with_progress
from scoperag.server.ingest_reports import FILES_DESCRIPTION
from scoperag.server.runtime import Runtime
from scoperag.server.tooling import (
    DESTRUCTIVE,
    WRITES,
    ModelTool,
    NoParams,
    params_model,
)
from scoperag.server.warm_up import deferred_service


class FindParams(StrictParams):
    query: Query = Field(description="What to look for, in natural language.")
    limit: int = Field(default=10, ge=1, le=100, description="How many hits to return at most.")


class PageHit(BaseModel):
    text: str
    score: float = Field(
        description="What the hits are ordered by: meaning and keywords fused (or, for a "
        "collection without keyword vectors, the cosine similarity)."
    )
    similarity: float = Field(description="Cosine similarity of the page text to the query.")
    document_id: str | None = None
    physical_page_index: int | None = None
    page_label: str | None = None
    source: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict, description="Other payload fields.")


class FindResult(BaseModel):
    hits: list[PageHit]
    message: str | None = None


class StoreParams(StrictParams):
    information: Text = Field(description="The text to remember.")
    metadata: Metadata | None = Field(
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


class DocumentList(BaseModel):
    documents: list[DocumentInfo]
    message: str | None = None


class DeleteDocumentParams(StrictParams):
    document_id: Name = Field(
        description="Exact id of the PDF document, as qdrant-list-documents shows."
    )


def _delete_document(runtime: Runtime, params: DeleteDocumentParams) -> DeleteReport:
    from scoperag.server.data_admin import delete

    return delete(runtime.backend, runtime.settings, "pdf", params.document_id)


class IngestResult(BaseModel):
    files: list[dict[str, Any]] = Field(description=FILES_DESCRIPTION)
    ingested: int
    skipped: int


def build(runtime: Runtime) -> LocalProvider:
    """The pdf tools; its handlers (and their heavy imports) load on the first call."""
    fields = PDF_FIELDS + user_fields(runtime.settings)

    service = deferred_service("scoperag.server.pdf_service:PdfService", runtime, fields)
    tools = LocalProvider()
    tools.add_tool(
        ModelTool.build(
            "qdrant-find",
            "Semantic search over ingested PDF pages. Every filter given narrows the search "
            "(AND): document_id, physical_page_index (0-based position in the file), page_label "
            "(the PDF's own label, e.g. 'iv'). Each hit says which document and page it is from.",
            params_model("QdrantFindParams", FindParams, fields),
            lambda params: service().find(params),
            FindResult,
        )
    )
    tools.add_tool(
        ModelTool.build(
            "qdrant-store",
            "Store a piece of text with optional metadata so that qdrant-find can find it.",
            StoreParams,
            lambda params: service().store(params),
            StoreResult,
            annotations=WRITES,
        )
    )
    tools.add_tool(
        ModelTool.build(
            "qdrant-list-documents",
            "List every ingested PDF with its page count and page label ranges, to discover "
            "valid document_id and page_label values for qdrant-find.",
            NoParams,
            lambda params: service().list_documents(params),
            DocumentList,
        )
    )

    tools.add_tool(
        ModelTool.build(
            "qdrant-delete-document",
            "Delete every page of one ingested PDF document (by its document_id). An unknown id "
            "is an error listing the stored ones; nothing else is touched.",
            DeleteDocumentParams,
            lambda params: _delete_document(runtime, params),
            DeleteReport,
            annotations=DESTRUCTIVE,
        )
    )

    @tools.tool(
        name="qdrant-ingest-pdf",
        annotations=DESTRUCTIVE,
        description=(
            "Ingest PDFs (one or more chunks per page); re-ingesting a file replaces its pages."
        ),
    )
    async def ingest_pdf(
        paths: Annotated[
            FilePaths,
            Field(
                description="PDF files or directories of PDFs, below SCOPERAG_ALLOWED_DIRS.",
            ),
        ],
        ctx: Context,
        document_id: Annotated[
            Name | None,
            Field(description="Id for a single PDF; default: the file name without extension."),
        ] = None,
    ) -> IngestResult:
        return await run_with_progress(
            ctx,
            lambda p: service().ingest(paths, document_id, p),
            runtime.settings,
        )

    return tools
