"""docs profile: the search's hits and result, shared by `tools` (the declarations)
and `service` (the handler)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from scoperag.core.config.chunking import ChunkOverlap, ChunkSize
from scoperag.core.contracts.docs import DocChunkPayload
from scoperag.core.filters.params import FilePath, StrictParams
from scoperag.retrievers.explain import HitExplanation, ResultExplanation
from scoperag.server.mcp.ingest_calls import BELOW_ALLOWED
from scoperag.server.profiles.docs.filters import FILTER_CONTRACT, DocsSearchFilters
from scoperag.server.results.shape import Scored

EMPTY_HINT = (
    "No docs are ingested yet. Run `scoperag ingest docs FILE.jsonl` (running servers "
    "share the store with it), or call the ingest_docs tool."
)


class DocsHit(DocChunkPayload, Scored):
    """One chunk found: its text, its figures and its whole docs payload."""

    text: str
    explain: HitExplanation = None


class DocsSearchResult(BaseModel):
    contract: Literal["docs_search_filters/v1"] = FILTER_CONTRACT
    filters: DocsSearchFilters = Field(description="The filters applied, status defaulted.")
    hits: list[DocsHit]
    message: str | None = None
    explain: ResultExplanation = None


class IngestDocsParams(StrictParams):
    path: FilePath = Field(description=f"A JSONL file {BELOW_ALLOWED}.")
    chunk_size: ChunkSize = None
    chunk_overlap: ChunkOverlap = None
