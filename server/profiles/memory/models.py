"""memory profile: the tools' parameters and results, shared by `tools` (the
declarations) and `service` (the handlers)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, Field

from scoperag.core.contracts import memory
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
from scoperag.server.mcp.tooling import params_model
from scoperag.server.profiles.memory.toon_output import PageFigures
from scoperag.server.results.shape import Scored

Mode = Literal["hybrid", "tag", "faceted"]
EXPIRES_AT = "RFC 3339 time with a zone (e.g. 2026-03-01T09:00:00Z); hidden from search after it."
CURRENT_HASH = "A current memory's hash, or a unique prefix of it"


class SearchOptions(StrictParams):
    """`search`'s own parameters; its filters are `MEMORY_FILTERS` (see `search_params`)."""

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
    page: int = Field(default=1, ge=1, le=1_000_000, description="Page number, from 1.")
    page_size: int = Field(default=10, ge=1, le=100, description="Memories per page (1-100).")
    min_similarity: float = Field(
        default=0.2,
        ge=-1.0,
        le=1.0,
        description=(
            "Ranked searches only: the lowest cosine similarity to the query a result may have, "
            "-1 to 1 (0 = unrelated; -1 = no floor), the scale of each result's similarity. "
            "It bounds every result: keyword matches reorder results above it, never add any "
            "below it. The note says how many memories it hid and the best of them."
        ),
    )
    date_boost: bool = Field(
        default=True,
        description=(
            "Ranked searches: a day, month or year the query names with its year (14 June "
            "2022, March 2024, in 2023) lifts memories created then, less the further away; "
            "it reorders, never filters. False: dates in the query are words like any other."
        ),
    )
    explain: Explain = False


def search_params() -> type[SearchOptions]:
    """`search`'s parameters: its options and one parameter per memory filter (read when the
    tools are built, so a filter added to `MEMORY_FILTERS` is a parameter)."""
    return params_model("SearchParams", SearchOptions, memory.MEMORY_FILTERS)


class StoredMemory(BaseModel):
    """A memory as it is stored."""

    content: str
    tags: list[str]
    memory_type: str
    created_at: str = Field(description="RFC 3339, UTC.")
    content_hash: str = Field(description="sha256 of the content; pass it to delete_memory.")
    version: int = Field(default=1, description="1, 2, ...: its place in the memory's history.")
    updated_at: str | None = Field(default=None, description="When this version was written.")
    expires_at: str | None = Field(default=None, description="Hidden from search after it.")
    superseded_by: str | None = Field(
        default=None, description="The version that replaced it (null: it is current)."
    )

    @classmethod
    def of(cls, payload: dict[str, Any]) -> Self:
        """A stored memory as a row; keys a memory stored before versions lacks take defaults."""
        row = cls(**{key: payload[key] for key in cls.model_fields if key in payload})
        row.updated_at = row.updated_at or row.created_at
        return row


class MemoryRow(StoredMemory, Scored):
    """A memory found: a ranked search's hit carries its figures."""

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
    tags: Names | None = Field(
        default=None, description="Tags: a list, or one comma-separated string."
    )
    memory_type: Name | None = Field(
        default=None, description="Kind of memory, e.g. decision, learning, bug-fix. Default: note."
    )
    metadata: Metadata | None = Field(
        default=None,
        description=f"Any JSON object kept with the memory (at most {MAX_METADATA_BYTES} bytes).",
    )
    supersedes: Names | None = Field(
        default=None,
        description="Current memories this one replaces (hashes, or unique prefixes of them).",
    )
    expires_at: Name | None = Field(default=None, description=EXPIRES_AT)


class StoreMemoryResult(BaseModel):
    content_hash: str = Field(description="The memory's id: sha256 of its content.")
    stored: bool = Field(description="False when the same content was stored before.")
    message: str
    version: int = Field(default=1, description="Its version: 1 unless it supersedes others.")
    supersedes: list[str] = Field(default_factory=list, description="The hashes it replaced.")


class UpdateMemoryParams(StrictParams):
    content_hash: Name = Field(description=CURRENT_HASH)
    content: Text | None = Field(default=None, description="New text (default: kept).")
    tags: Names | None = Field(default=None, description="New tags (default: kept).")
    memory_type: Name | None = Field(default=None, description="New type (default: kept).")
    metadata: Metadata | None = Field(default=None, description="New metadata (default: kept).")
    expires_at: Name | None = Field(default=None, description=EXPIRES_AT + " Default: kept.")


class VersionResult(BaseModel):
    content_hash: str = Field(description="The new version's hash.")
    version: int = Field(description="Its version number in its memory's history.")
    supersedes: list[str] = Field(description="The hashes it replaced (now hidden by default).")
    message: str


class MemoryHistoryParams(StrictParams):
    content_hash: Name = Field(description="Any version's hash, or a unique prefix of it.")


class VersionRow(StoredMemory):
    supersedes: list[str] = Field(default_factory=list, description="The hashes it replaced.")


class MemoryHistoryResult(BaseModel):
    content_hash: str = Field(description="The hash the history was asked for.")
    versions: list[VersionRow] = Field(
        description="Every version, oldest first (the newest 10,000 of a longer line)."
    )
    total: int | None = Field(default=None, description="Versions the line has in all.")
    note: str | None = Field(default=None, description="How many versions are not shown.")


class MergeMemoriesParams(StrictParams):
    content_hashes: Annotated[Names, Field(min_length=2)] = Field(
        description="Two or more current memories: hashes, or unique prefixes of them."
    )
    content: Text | None = Field(
        default=None, description="The merged text (default: the newest member's)."
    )


class DeleteMemoryParams(StrictParams):
    content_hash: Name = Field(
        description="The memory's sha256, as search or store_memory gave it."
    )
    whole_line: bool = Field(
        default=False,
        description="Delete every version of the memory's line, not only this one (by "
        "default the version it replaced becomes current again).",
    )


class DeleteMemoryResult(BaseModel):
    content_hash: str
    deleted: bool
    message: str


class IngestMemoriesParams(StrictParams):
    path: FilePath = Field(description=f"A JSON file {BELOW_ALLOWED}.")


class DuplicatesOptions(StrictParams):
    threshold: float = Field(
        default=0.92,
        description="Memories whose embeddings have at least this cosine similarity are "
        "duplicates: greater than 0 and at most 1 (1 = the same embedding only).",
        json_schema_extra={"exclusiveMinimum": 0, "maximum": 1},
    )
    limit: int = Field(
        default=20, ge=1, le=1000, description="Groups returned at most, largest first (1-1000)."
    )


DUPLICATE_FILTERS = [memory.TAGS_ANY, memory.MEMORY_TYPE]
FindDuplicatesParams = params_model("FindDuplicatesParams", DuplicatesOptions, DUPLICATE_FILTERS)


class DuplicateMember(BaseModel):
    content_hash: str = Field(description="sha256 of the content; pass it to delete_memory.")
    content: str
    tags: list[str]
    memory_type: str
    created_at: str = Field(description="RFC 3339, UTC.")
    similarity: float = Field(
        description="Cosine similarity of its embedding to the group's newest member's (1.0 for "
        "that one)."
    )


class DuplicateGroup(BaseModel):
    reason: Literal["same text", "similar"] = Field(
        description="same text: every member's text is the same once case and whitespace are "
        "normalised; similar: embeddings at or above the threshold link them."
    )
    members: list[DuplicateMember] = Field(
        description="Newest first, then by similarity to the newest (highest first)."
    )


class FindDuplicatesResult(BaseModel):
    groups: list[DuplicateGroup] = Field(description="Largest first, then newest first.")
    total_groups: int = Field(description="Every group found (limit caps those returned).")
    note: str | None = Field(default=None, description="Why there are no groups, or fewer.")
