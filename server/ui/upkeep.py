"""Keeping memories: which upkeep tools a profile serves, and the pages' values for a memory's
history and the duplicate groups. The controls show only for the tools that exist."""

from __future__ import annotations

from typing import Any

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


def history(ctx: UiContext, tool: str, content_hash: str) -> dict[str, Any]:
    """A memory's versions, oldest first, as the history tool gives them."""
    return ctx.call(tool, {KEY: content_hash})


def duplicates(ctx: UiContext, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The duplicate groups (each with its newest member first), as the tool gives them."""
    return ctx.call(tool, arguments)
