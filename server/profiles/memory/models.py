"""memory profile: the tools' parameters and results, shared by `tools` (the
declarations) and `service` (the handlers)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from scoperag.core.filters.params import (
    MAX_METADATA_BYTES,
    Explain,
    FilePath,
    Metadata,
    Name,
    Names,
    OptionalQuery,
    StrictParams,
    Text,
)
from scoperag.retrievers.explain import HitExplanation, ResultExplanation
from scoperag.server.mcp.ingest_calls import BELOW_ALLOWED
from scoperag.server.profiles.memory.toon_output import PageFigures

Mode = Literal["hybrid", "tag", "faceted"]
FACETS = ("tags", "start_date", "end_date", "memory_type")
# The facets each mode applies; a facet given to a mode that does not use it is named in `note`.
MODE_FACETS: dict[str, tuple[str, ...]] = {
    "hybrid": ("tags", "memory_type"),
    "tag": ("tags", "start_date", "end_date"),
    "faceted": FACETS,
}


class SearchParams(StrictParams):
    query: OptionalQuery = Field(
        default="",
        description="What to look for, in natural language. Empty: newest memories first.",
    )
    mode: Mode = Field(
        default="hybrid",
        description=(
            "hybrid: ranked by meaning and keywords (dense + BM25, fused), narrowed by tags and "
            "memory_type. tag: memories with the tags (and in the dates), newest first. "
            "faceted: every facet given, combined with AND; ranked as hybrid with a query, "
            "newest first without one."
        ),
    )
    tags: Name | Names | None = Field(
        default=None, description="Tags to match: a list, or one comma-separated string."
    )
    match_all: bool = Field(
        default=False, description="True: a memory must carry every tag; False: any of them."
    )
    start_date: Name | None = Field(
        default=None, description="First day, YYYY-MM-DD (inclusive, UTC). faceted/tag modes."
    )
    end_date: Name | None = Field(
        default=None, description="Last day, YYYY-MM-DD (inclusive, UTC). faceted/tag modes."
    )
    memory_type: Name | None = Field(
        default=None, description="Only memories of this type, e.g. decision, learning, note."
    )
    page: int = Field(default=1, ge=1, le=1_000_000, description="Page number, from 1.")
    page_size: int = Field(default=10, ge=1, le=100, description="Memories per page (1-100).")
    min_similarity: float = Field(
        default=0.6,
        ge=0.0,
        le=1.0,
        description=(
            "Ranked searches only: the lowest relevance a result may have, on the scale "
            "(1 + cosine similarity) / 2 from 0 to 1 (0.5 = unrelated; 0.6 = cosine 0.2). "
            "It bounds every result: keyword matches reorder results above it, never add any "
            "below it. The note says how many memories it hid and the best of them."
        ),
    )
    explain: Explain = False


class MemoryRow(BaseModel):
    content: str
    tags: list[str]
    memory_type: str
    created_at: str = Field(description="RFC 3339, UTC.")
    content_hash: str = Field(description="sha256 of the content; pass it to delete_memory.")
    score: float | None = Field(
        default=None,
        description="What ranked results are ordered by: meaning and keywords fused (ranked only).",
    )
    similarity: float | None = Field(
        default=None,
        description="Relevance, (1 + cosine similarity) / 2 in [0, 1], the scale of "
        "min_similarity (ranked only).",
    )
    explain: HitExplanation = None


class SearchResult(PageFigures):
    mode: Mode = Field(description="The mode that ran (faceted without a facet runs as hybrid).")
    order: Literal["relevance", "newest"] = Field(
        description="How the memories are sorted: relevance = meaning and keywords fused."
    )
    note: str | None = Field(default=None, description="Why a result is empty, what was ignored.")
    memories: list[MemoryRow]
    explain: ResultExplanation = None


class StoreMemoryParams(StrictParams):
    content: Text = Field(description="The memory, a short self-contained text.")
    tags: Names | Name | None = Field(
        default=None, description="Tags: a list, or one comma-separated string."
    )
    memory_type: Name | None = Field(
        default=None, description="Kind of memory, e.g. decision, learning, bug-fix. Default: note."
    )
    metadata: Metadata | None = Field(
        default=None,
        description=f"Any JSON object kept with the memory (at most {MAX_METADATA_BYTES} bytes).",
    )


class StoreMemoryResult(BaseModel):
    content_hash: str = Field(description="The memory's id: sha256 of its content.")
    stored: bool = Field(description="False when the same content was stored before.")
    message: str


class DeleteMemoryParams(StrictParams):
    content_hash: Name = Field(
        description="The memory's sha256, as search or store_memory gave it."
    )


class DeleteMemoryResult(BaseModel):
    content_hash: str
    deleted: bool
    message: str


class IngestMemoriesParams(StrictParams):
    path: FilePath = Field(description=f"A JSON file {BELOW_ALLOWED}.")
