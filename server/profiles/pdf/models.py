"""pdf profile: the tools' parameters and results, shared by `tools` (the declarations)
and `service` (the handlers)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from scoperag.core.config.chunking import ChunkOverlap, ChunkSize
from scoperag.core.filters.params import (
    Explain,
    FilePaths,
    Metadata,
    Name,
    Query,
    StrictParams,
    Text,
)
from scoperag.retrievers.explain import HitExplanation, ResultExplanation
from scoperag.server.mcp.ingest_reports import FILES_DESCRIPTION
from scoperag.server.results.shape import Scored


class FindParams(StrictParams):
    query: Query = Field(description="What to look for, in natural language.")
    limit: int = Field(default=10, ge=1, le=100, description="How many hits to return at most.")
    explain: Explain = False


class PageHit(Scored):
    text: str
    document_id: str | None = None
    physical_page_index: int | None = None
    page_label: str | None = None
    source: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict, description="Other payload fields.")
    explain: HitExplanation = None


class FindResult(BaseModel):
    hits: list[PageHit]
    message: str | None = None
    explain: ResultExplanation = None


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


class IngestResult(BaseModel):
    files: list[dict[str, Any]] = Field(description=FILES_DESCRIPTION)
    ingested: int
    skipped: int
    chunking: dict[str, Any] | None = Field(
        default=None, description="The chunking used, recorded with the collection."
    )


class IngestPdfParams(StrictParams):
    paths: FilePaths = Field(
        description="PDF files or directories of PDFs, below SCOPERAG_ALLOWED_DIRS."
    )
    document_id: Name | None = Field(
        default=None, description="Id for a single PDF; default: the file name without extension."
    )
    chunk_size: ChunkSize = None
    chunk_overlap: ChunkOverlap = None
