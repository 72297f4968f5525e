"""pdf profile tools: qdrant-find, qdrant-store, qdrant-list-documents, qdrant-ingest-pdf,
qdrant-delete-document."""

from __future__ import annotations

from fastmcp.server.providers import LocalProvider

from scoperag.core.config.chunking import chunking_of
from scoperag.core.contracts.pdf import PDF_FIELDS, user_fields
from scoperag.server.data_admin import DeleteReport
from scoperag.server.mcp.service_locator import deferred_service
from scoperag.server.mcp.tooling import (
    DESTRUCTIVE,
    WRITES,
    ModelTool,
    NoParams,
    ProgressTool,
    params_model,
)
from scoperag.server.profiles.pdf.models import (
    DeleteDocumentParams,
    DocumentList,
    FindParams,
    FindResult,
    IngestPdfParams,
    IngestResult,
    StoreParams,
    StoreResult,
)
from scoperag.server.runtime import Runtime


def _delete_document(runtime: Runtime, params: DeleteDocumentParams) -> DeleteReport:
    from scoperag.server.data_admin import delete

    return delete(runtime.backend, runtime.settings, "pdf", params.document_id)


def build(runtime: Runtime) -> LocalProvider:
    """The pdf tools; its handlers (and their heavy imports) load on the first call."""
    fields = PDF_FIELDS + user_fields(runtime.settings)

    service = deferred_service("scoperag.server.profiles.pdf.service:PdfService", runtime, fields)
    tools = LocalProvider()
    tools.add_tool(
        ModelTool.build(
            "qdrant-find",
            "Search ingested PDF pages by meaning, reordered by keyword matches (dense and BM25 "
            "scores fused). Every filter given narrows the search (AND): document_id, "
            "physical_page_index (0-based position in the file), page_label (the PDF's own "
            "label, e.g. 'iv'). Each hit says which document and page it is from.",
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

    tools.add_tool(
        ProgressTool.build(
            "qdrant-ingest-pdf",
            "Ingest PDFs (one or more chunks per page); re-ingesting a file replaces its pages.",
            IngestPdfParams,
            lambda params, progress: service().ingest(
                params.paths, params.document_id, progress, chunking_of(params)
            ),
            IngestResult,
            annotations=DESTRUCTIVE,
            settings=runtime.settings,
        )
    )

    return tools
