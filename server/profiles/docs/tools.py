"""docs profile: MCP `elf_docs_search_l0`, `ingest_docs` (its HTTP routes: `docs_http.py`).

Both interfaces validate with `server.profiles.docs.filters.DocsSearchRequest` and run
`DocsService.search` so they accept, refuse and answer alike.
"""

from __future__ import annotations

from typing import Any

from fastmcp.server.providers import LocalProvider

from scoperag.server.mcp.ingest_calls import (
    Progress,
    allowed_file,
)
from scoperag.server.mcp.service_locator import deferred_service
from scoperag.server.mcp.tooling import DESTRUCTIVE, ModelTool, ProgressTool
from scoperag.server.profiles.docs.filters import DocsSearchRequest
from scoperag.server.profiles.docs.models import DocsSearchResult, IngestDocsParams
from scoperag.server.runtime import Runtime

SEARCH_PATH = "/v2/docs/search/l0"
# the search both interfaces run, loaded on first use
SERVICE = "scoperag.server.profiles.docs.service:DocsService"
DESCRIPTION = (
    "Search the shared docs by meaning, reordered by keyword matches (docs_search_filters/v1). "
    "Filters combine with AND: "
    "scope (agent_private | project_shared | org_shared), status (default 'active'), doc_type, "
    "agent_id, and updated_after / updated_before (RFC3339 with a time zone, both exclusive). "
    "Each hit gives its doc_id, chunk_index and all five contract fields."
)


def _add_ingest(tools: LocalProvider, runtime: Runtime) -> None:
    """`ingest_docs`: a JSONL file of documents."""

    def ingest(params: IngestDocsParams, progress: Progress) -> dict[str, Any]:
        from scoperag.core.config.chunking import chunking_of
        from scoperag.pipelines.docs import ingest_docs_jsonl

        file = allowed_file(runtime.settings, params.path)
        chunking = chunking_of(params)
        report = ingest_docs_jsonl(file, runtime.backend, runtime.embedder, progress, chunking)
        return report.model_dump(mode="json")

    tools.add_tool(
        ProgressTool.build(
            "ingest_docs",
            "Ingest a JSONL file, one document a line (doc_id, title, text, scope, status, "
            "doc_type, agent_id, updated_at); re-ingesting a doc_id replaces it; a bad line is "
            "reported with its number and skipped.",
            IngestDocsParams,
            ingest,
            None,
            annotations=DESTRUCTIVE,
            settings=runtime.settings,
        )
    )


def build(runtime: Runtime) -> LocalProvider:
    """The docs tools."""
    service = deferred_service(SERVICE, runtime)
    tools = LocalProvider()
    tools.add_tool(
        ModelTool.build(
            "elf_docs_search_l0",
            DESCRIPTION,
            DocsSearchRequest,
            lambda request: service().search(request),
            DocsSearchResult,
        )
    )
    _add_ingest(tools, runtime)
    return tools
