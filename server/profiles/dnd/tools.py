"""dnd profile tools: search_dnd_content, the five lookups, list_documents, ingest_dnd (Open5e).

Every tool takes `documents` (source slugs): left out = all, [] = nothing (with a message), an
unknown slug = nothing (with a message naming the known ones); it is ANDed with the rest. The
handlers (and LlamaIndex, qdrant-client) load on the first call: `server.profiles.dnd.service`.
"""

from __future__ import annotations

from typing import Any

from fastmcp.server.providers import LocalProvider

from scoperag.core.contracts.dnd import (
    DOCUMENTS,
)
from scoperag.server.mcp.ingest_calls import (
    Progress,
    allowed_folders,
)
from scoperag.server.mcp.service_locator import deferred_service
from scoperag.server.mcp.tooling import DESTRUCTIVE, ModelTool, NoParams, ProgressTool, params_model
from scoperag.server.profiles.dnd.models import (
    KIND_FIELDS,
    LOOKUPS,
    DndResult,
    DocumentList,
    IngestDndParams,
    Lookup,
    LookupParams,
    SearchParams,
)
from scoperag.server.runtime import Runtime

_SHARED_RULES = (
    " documents: source slugs from list_documents; left out = all, [] = nothing, an unknown slug "
    "= nothing (the message lists the known slugs). Every filter given narrows the result (AND). "
    "Every result says which document it comes from."
)


def _tool_model(tool: str) -> str:
    return "".join(part.title() for part in tool.split("_")) + "Params"


def _add_ingest(tools: LocalProvider, runtime: Runtime) -> None:
    """`ingest_dnd`: Open5e fixture folders."""

    def ingest(params: IngestDndParams, progress: Progress) -> dict[str, Any]:
        from scoperag.server.profiles.dnd.service import ingest_paths

        folders = allowed_folders(runtime.settings, params.paths)
        return ingest_paths(runtime, folders, progress).model_dump()

    tools.add_tool(
        ProgressTool.build(
            "ingest_dnd",
            "Ingest Open5e (API v1) folders: one item per spell, creature, equipment, character "
            "option or rule; re-ingesting a file replaces its items; other files are skipped with "
            "a note.",
            IngestDndParams,
            ingest,
            None,
            annotations=DESTRUCTIVE,
            settings=runtime.settings,
        )
    )


def _of_kind(tool: ModelTool, lookup: Lookup) -> dict[str, Any]:
    """The tool's output schema with only the typed fields of its kind (the others are never
    in its results)."""
    schema = tool.output_schema or {}
    hit = schema["$defs"]["DndHit"]
    hidden = KIND_FIELDS - set(lookup.shows)
    shown = {key: value for key, value in hit["properties"].items() if key not in hidden}
    return {**schema, "$defs": {**schema["$defs"], "DndHit": {**hit, "properties": shown}}}


def build(runtime: Runtime) -> LocalProvider:
    """The dnd tools; its handlers (and their heavy imports) load on the first call."""
    service = deferred_service("scoperag.server.profiles.dnd.service:DndService", runtime)
    tools = LocalProvider()
    tools.add_tool(
        ModelTool.build(
            "search_dnd_content",
            "Search D&D 5e content (spells, creatures, equipment, character options, rules) by "
            "meaning and by name at once; the hits of both are merged without duplicates."
            + _SHARED_RULES,
            params_model("SearchDndContentParams", SearchParams, [DOCUMENTS]),
            lambda params: service().search(params),
            DndResult,
        )
    )
    for lookup in LOOKUPS:
        tool = ModelTool.build(
            lookup.tool,
            lookup.description
            + " The same name in two documents gives two results."
            + _SHARED_RULES,
            params_model(_tool_model(lookup.tool), LookupParams, lookup.fields),
            lambda params, lookup=lookup: service().lookup(lookup, params),
            DndResult,
        )
        tools.add_tool(tool.model_copy(update={"output_schema": _of_kind(tool, lookup)}))
    tools.add_tool(
        ModelTool.build(
            "list_documents",
            "List every ingested D&D source document: its slug (for `documents`), title and "
            "number of items per kind.",
            NoParams,
            lambda params: service().list_documents(params),
            DocumentList,
        )
    )
    _add_ingest(tools, runtime)
    return tools
