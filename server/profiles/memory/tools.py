"""memory profile tools: store_memory, delete_memory, search (TOON output), ingest_memories,
find_duplicates."""

from __future__ import annotations

from typing import Any

from fastmcp.server.providers import LocalProvider

from scoperag.server.mcp.ingest_calls import (
    Progress,
    allowed_file,
)
from scoperag.server.mcp.service_locator import deferred_service
from scoperag.server.mcp.tooling import DESTRUCTIVE, READ_ONLY, WRITES, ModelTool, ProgressTool
from scoperag.server.profiles.memory.models import (
    DeleteMemoryParams,
    DeleteMemoryResult,
    FindDuplicatesParams,
    FindDuplicatesResult,
    IngestMemoriesParams,
    MemoryHistoryParams,
    MemoryHistoryResult,
    MergeMemoriesParams,
    SearchResult,
    StoreMemoryParams,
    StoreMemoryResult,
    UpdateMemoryParams,
    VersionResult,
    search_params,
)
from scoperag.server.runtime import Runtime

NEW_VERSION = {**WRITES, "idempotentHint": False}  # a second call finds the memory replaced


def _add_ingest(tools: LocalProvider, runtime: Runtime) -> None:
    """`ingest_memories`: a JSON file of memories."""

    def ingest(params: IngestMemoriesParams, progress: Progress) -> dict[str, Any]:
        from scoperag.pipelines.memories import import_memories

        file = allowed_file(runtime.settings, params.path)

        def memories(done: int, total: int) -> None:
            progress(done, total, file.name)

        return import_memories(
            file, runtime.backend, runtime.embedder, memories, runtime.settings.data_dir
        ).model_dump()

    tools.add_tool(
        ProgressTool.build(
            "ingest_memories",
            "Import memories from a JSON file: a list of {content, tags, memory_type, created_at, "
            "metadata} objects, or an object with a `memories` list. Content already stored is "
            "kept once; a bad item is reported with its position and skipped.",
            IngestMemoriesParams,
            ingest,
            None,
            annotations=WRITES,
            settings=runtime.settings,
        )
    )


def build(runtime: Runtime) -> LocalProvider:
    """The memory tools; its handlers (and their heavy imports) load on the first call."""
    service = deferred_service("scoperag.server.profiles.memory.service:MemoryService", runtime)
    duplicates = deferred_service("scoperag.server.profiles.memory.duplicates:Duplicates", runtime)
    tools = LocalProvider()
    tools.add_tool(
        ModelTool.build(
            "store_memory",
            "Store a short memory with optional tags, a type, metadata and an expiry (expires_at: "
            "hidden from search after it); its creation time is now. Storing the same content "
            "again does not duplicate it. With supersedes, it is the next version of those "
            "memories (kept, hidden from search).",
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
            "results are ranked by meaning and keywords (score), each with a cosine similarity "
            "of at least min_similarity; without one, newest first. Paged: the "
            "TOON header gives page, total, total_pages and has_more. Superseded versions and "
            "expired memories are left out unless include_superseded / include_expired.",
            search_params(),
            lambda params: service().search(params),
            SearchResult,
        )
    )
    _add_versions(tools, runtime)
    tools.add_tool(
        ModelTool.build(
            "find_duplicates",
            "Groups of memories that say the same: the same text once case and whitespace are "
            "normalised, or embeddings with a cosine similarity of at least threshold (linked "
            "in chains). In each group the newest member comes first (similarity 1.0), the "
            "others with their similarity to it. Narrow with tags (any) and memory_type; the "
            "largest groups first, at most limit of them (total_groups counts all).",
            FindDuplicatesParams,
            lambda params: duplicates().find(params),
            FindDuplicatesResult,
        )
    )
    _add_ingest(tools, runtime)
    return tools


def _add_versions(tools: LocalProvider, runtime: Runtime) -> None:
    """`update_memory`, `memory_history`, `merge_memories`: a memory's versions."""
    versions = deferred_service("scoperag.server.profiles.memory.versions:MemoryVersions", runtime)
    declared = [
        (
            "update_memory",
            "Write a new version of a current memory (its hash or a unique prefix): what is given "
            "changes, the rest is kept. The old version is kept, hidden from search. Returns the "
            "new content_hash, its version and what it supersedes; if another writer replaced "
            "the memory first, an error names its current version.",
            UpdateMemoryParams,
            lambda params: versions().update(params),
            NEW_VERSION,
        ),
        (
            "memory_history",
            "Every version of a memory, oldest first, from the hash (or a unique prefix) of any "
            "of its versions.",
            MemoryHistoryParams,
            lambda params: versions().history(params),
            READ_ONLY,
        ),
        (
            "merge_memories",
            "Replace two or more current memories by one: the given content or the newest "
            "member's, every member's tags, the newest member's type, the earliest created_at. "
            "The members are kept, hidden from search.",
            MergeMemoriesParams,
            lambda params: versions().merge(params),
            NEW_VERSION,
        ),
    ]
    for name, description, params, handler, hints in declared:
        result = MemoryHistoryResult if params is MemoryHistoryParams else VersionResult
        tools.add_tool(
            ModelTool.build(name, description, params, handler, result, annotations=hints)
        )
