"""memory profile tools: store_memory, delete_memory, search (TOON output), ingest_memories."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastmcp import Context
from fastmcp.server.providers import LocalProvider
from pydantic import BaseModel, Field

from scoperag.core.param_types import (
    MAX_METADATA_BYTES,
    FilePath,
    Metadata,
    Name,
    Names,
    OptionalQuery,
    StrictParams,
    Text,
)
from scoperag.server.ingest_calls import BELOW_ALLOWED, Progress, allowed_file, run_with_progress
from scoperag.server.runtime import Runtime
from scoperag.server.tooling import DESTRUCTIVE, WRITES, ModelTool
from scoperag.server.toon_output import PageFigures
from scoperag.server.warm_up import deferred_service

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


class SearchResult(PageFigures):
    mode: Mode = Field(description="The mode that ran (faceted without a facet runs as hybrid).")
    order: Literal["relevance", "newest"] = Field(
        description="How the memories are sorted: relevance = meaning and keywords fused."
    )
    note: str | None = Field(default=None, description="Why a result is empty, what was ignored.")
    memories: list[MemoryRow]


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


def _add_ingest(tools: LocalProvider, runtime: Runtime) -> None:
    """`ingest_memories`: a JSON file of memories."""

    @tools.tool(
        name="ingest_memories",
        annotations=WRITES,
        description=(
            "Import memories from a JSON file: a list of {content, tags, memory_type, created_at, "
            "metadata} objects, or an object with a `memories` list. Content already stored is "
            "kept once; a bad item is reported with its position and skipped."
        ),
    )
    async def ingest_memories(
        path: Annotated[FilePath, Field(description=f"A JSON file {BELOW_ALLOWED}.")],
        ctx: Context,
    ) -> dict[str, Any]:
        from scoperag.pipelines.memories import import_memories

        file = allowed_file(runtime.settings, path)

        def work(progress: Progress) -> Any:
            def memories(done: int, total: int) -> None:
                progress(done, total, file.name)

            return import_memories(
                file, runtime.backend, runtime.embedder, memories, runtime.settings.data_dir
            )

        return (await run_with_progress(ctx, work, runtime.settings)).model_dump()


def build(runtime: Runtime) -> LocalProvider:
    """The memory tools; its handlers (and their heavy imports) load on the first call."""
    service = deferred_service("scoperag.server.memory_service:MemoryService", runtime)
    tools = LocalProvider()
    tools.add_tool(
        ModelTool.build(
            "store_memory",
            "Store a short memory with optional tags, a type and metadata; its creation time is "
            "now. Storing the same content again does not duplicate it.",
            StoreMemoryParams,
            lambda params: service().store(params),
            StoreMemoryResult,
            annotations=WRITES,
        )
    )
    tools.add_tool(
        ModelTool.build(
            "delete_memory",
            "Delete the memory with this content_hash (as search and store_memory return it).",
            DeleteMemoryParams,
            lambda params: service().delete(params),
            DeleteMemoryResult,
            annotations=DESTRUCTIVE,
        )
    )
    tools.add_tool(
        ModelTool.build(
            "search",
            "Find memories by meaning and/or facets: tags (any, or all with match_all), "
            "start_date/end_date (YYYY-MM-DD, whole days, UTC), memory_type. With a query the "
            "results are ranked by meaning and keywords (score), each with a similarity "
            "(1 + cosine) / 2 of at least min_similarity; without one, newest first. Paged: the "
            "TOON header gives page, total, total_pages and has_more.",
            SearchParams,
            lambda params: service().search(params),
            SearchResult,
        )
    )
    _add_ingest(tools, runtime)
    return tools
