"""The notes profile's tools: `search_notes` (filtered by topic) and `ingest_notes`."""

from __future__ import annotations

from typing import Any

from fastmcp.server.providers import LocalProvider
from pydantic import BaseModel, Field

from notes_profile.contract import COLLECTION, TOPIC
from scoperag.core.engine.node_payload import stored_text_and_metadata
from scoperag.core.filters.fields import build_filter
from scoperag.core.filters.params import FilePath, Query, StrictParams
from scoperag.retrievers.searches import FilteredSearch, TextQuery
from scoperag.server.mcp.ingest_calls import Progress, allowed_file
from scoperag.server.mcp.tooling import DESTRUCTIVE, ModelTool, ProgressTool, params_model
from scoperag.server.runtime import Runtime


class SearchParams(StrictParams):
    query: Query = Field(description="What to look for.")
    limit: int = Field(default=5, ge=1, le=50, description="Most notes returned.")


class IngestParams(StrictParams):
    path: FilePath = Field(description="A notes file below SCOPERAG_ALLOWED_DIRS.")


class NoteHit(BaseModel):
    text: str
    topic: str
    line: int
    score: float


class NotesResult(BaseModel):
    hits: list[NoteHit]


def build(runtime: Runtime) -> LocalProvider:
    """The notes tools."""
    params = params_model("SearchNotesParams", SearchParams, [TOPIC])

    def search(request: Any) -> NotesResult:
        found = FilteredSearch(
            runtime.backend,
            runtime.embedder,
            COLLECTION,
            build_filter([TOPIC], request.model_dump()),
            request.limit,
        ).search(TextQuery(request.query))
        hits = []
        for point in found.hits:
            text, metadata = stored_text_and_metadata(point.payload or {})
            hits.append(
                NoteHit(
                    text=text, topic=metadata["topic"], line=metadata["line"], score=point.score
                )
            )
        return NotesResult(hits=hits)

    def ingest(request: IngestParams, progress: Progress) -> dict[str, Any]:
        from notes_profile.pipeline import ingest_notes

        path = allowed_file(runtime.settings, request.path)
        return {"notes": ingest_notes(path, runtime.backend, runtime.embedder)}

    tools = LocalProvider()
    tools.add_tool(ModelTool.build("search_notes", "Search notes.", params, search, NotesResult))
    tools.add_tool(
        ProgressTool.build(
            "ingest_notes",
            "Ingest a notes file.",
            IngestParams,
            ingest,
            None,
            annotations=DESTRUCTIVE,
            settings=runtime.settings,
        )
    )
    return tools
