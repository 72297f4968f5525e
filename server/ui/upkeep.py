"""Keeping memories: which upkeep tools a profile serves, and the pages' values for a memory's
history and the duplicate groups. The controls show only for the tools that exist."""

from __future__ import annotations

from typing import Any

from scoperag.core.errors import ScoperagError
from scoperag.server.profiles.declaration import Profile
from scoperag.server.ui.context import UiContext

# what the UI offers -> the tool that does it
UPKEEP = {
    "update": "update_memory",
    "delete": "delete_memory",
    "history": "memory_history",
    "duplicates": "find_duplicates",
    "merge": "merge_memories",
}
KEY = "content_hash"  # the parameter naming one memory in every upkeep tool


def upkeep_tools(ctx: UiContext, profile: Profile) -> dict[str, str]:
    """Action -> tool name, for the upkeep tools served, on the profile that declares any of
    them (e.g. `delete_memory`)."""
    if not set(UPKEEP.values()) & set(ctx.profile_tools(profile)):
        return {}
    return {action: tool for action, tool in UPKEEP.items() if tool in ctx.tools}


def edit_fields(ctx: UiContext, tool: str) -> list[Any]:
    """The update tool's inputs but the memory's key (it is the row's)."""
    from scoperag.server.ui.forms import form_fields

    return [f for f in form_fields(ctx.tools[tool].parameters) if f.name != KEY]


def _served(ctx: UiContext, profile: str, action: str) -> tuple[dict[str, str], str]:
    """The profile's upkeep tools and the one doing `action`, or an error naming it."""
    upkeep = upkeep_tools(ctx, ctx.profile(profile))
    if action not in upkeep:
        raise ScoperagError(f"This store serves no {UPKEEP[action]} tool.")
    return upkeep, upkeep[action]


def history_page(ctx: UiContext, profile: str, content_hash: str) -> dict[str, Any]:
    """A memory's versions, oldest first, as the history tool gives them."""
    upkeep, tool = _served(ctx, profile, "history")
    found = ctx.call(tool, {KEY: content_hash})
    return {"profile": profile, "history": found, "upkeep": upkeep}


def duplicates_page(ctx: UiContext, profile: str, query: dict[str, Any]) -> dict[str, Any]:
    """The duplicate groups (each with its newest member first), as the tool gives them for
    the page's query (its threshold)."""
    from scoperag.server.ui.forms import form_arguments

    upkeep, tool = _served(ctx, profile, "duplicates")
    found = ctx.call(tool, form_arguments(ctx.tools[tool].parameters, query))
    return {"profile": profile, "found": found, "upkeep": upkeep}
