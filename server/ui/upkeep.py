"""Keeping memories: which upkeep tools a profile serves, the edit form prefilled with every
current value, a memory's history as its lineage, and the duplicate groups with what a merge
would do. The controls show only for the tools that exist."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from scoperag.core.errors import InvalidParameterError, ScoperagError
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
EDITED = ("content", "tags", "memory_type", "metadata", "expires_at")  # the edit form's inputs
MERGE_AT_MOST = 50  # a group past this size is not merged in one click


def upkeep_tools(ctx: UiContext, profile: Profile) -> dict[str, str]:
    """Action -> tool name, for the upkeep tools served, on the profile that declares any of
    them (e.g. `delete_memory`)."""
    if not set(UPKEEP.values()) & set(ctx.profile_tools(profile)):
        return {}
    return {action: tool for action, tool in UPKEEP.items() if tool in ctx.tools}


def served(ctx: UiContext, profile: str, action: str) -> tuple[dict[str, str], str]:
    """The profile's upkeep tools and the one doing `action`, or an error naming it."""
    upkeep = upkeep_tools(ctx, ctx.profile(profile))
    if action not in upkeep:
        raise ScoperagError(f"This store serves no {UPKEEP.get(action, action)} tool.")
    return upkeep, upkeep[action]


def stored(ctx: UiContext, hashes: list[str]) -> dict[str, dict[str, Any]]:
    """content_hash -> stored payload, for these memories (current or not)."""
    from qdrant_client import models

    from scoperag.core.contracts.memory import COLLECTION

    if not hashes or not ctx.runtime.backend.collection_exists(COLLECTION):
        return {}
    flt = models.Filter(
        must=[models.FieldCondition(key=KEY, match=models.MatchAny(any=list(hashes)))]
    )
    records = ctx.runtime.backend.scroll(COLLECTION, flt, len(hashes))
    return {(r.payload or {}).get(KEY): r.payload or {} for r in records}


def form_of(payload: Mapping[str, Any]) -> dict[str, str]:
    """A memory's current values as the edit form's inputs show them."""
    return {
        "content": payload.get("content", ""),
        "tags": ", ".join(payload.get("tags") or []),
        "memory_type": payload.get("memory_type", ""),
        "metadata": json.dumps(payload["metadata"]) if payload.get("metadata") else "",
        "expires_at": payload.get("expires_at") or "",
    }


def edit_page(ctx: UiContext, profile: str, content_hash: str) -> dict[str, Any]:
    """The edit form of a current memory, every input holding its current value."""
    upkeep, _ = served(ctx, profile, "update")
    payload = stored(ctx, [content_hash]).get(content_hash)
    if payload is None:
        raise InvalidParameterError(KEY, content_hash, "the hash of a stored memory")
    if payload.get("superseded_by"):
        raise ScoperagError(
            f"Version {payload.get('version', 1)} of this memory was replaced: "
            "edit its current version (its history shows it)."
        )
    return {
        "profile": profile,
        "memory": payload,
        "values": form_of(payload),
        "upkeep": upkeep,
        "notice": None,
    }


def changes(payload: Mapping[str, Any], form: Mapping[str, Any]) -> dict[str, str]:
    """The inputs of a submitted edit form that differ from the memory's current values (an
    input emptied keeps its value, but metadata, which it clears)."""
    current = form_of(payload)
    changed = {}
    for name in EDITED:
        given = str(form.get(name, "")).strip()
        if given == current[name].strip():
            continue
        if not given and name != "metadata":
            continue
        changed[name] = given or "{}"
    return changed


def history_page(ctx: UiContext, profile: str, content_hash: str) -> dict[str, Any]:
    """A memory's versions, oldest first, with the memories merged into each (from other
    lines) read from the store, so the page draws the lineage."""
    upkeep, tool = served(ctx, profile, "history")
    found = ctx.call(tool, {KEY: content_hash})
    versions = found["versions"]
    in_line = {v[KEY] for v in versions}
    merged_in = [h for v in versions for h in v.get("supersedes") or [] if h not in in_line]
    others = stored(ctx, merged_in)
    for version in versions:
        replaced = version.get("supersedes") or []
        version["merged"] = [others.get(h, {KEY: h}) for h in replaced if h not in in_line]
        version["follows"] = [h for h in replaced if h in in_line]
    return {"profile": profile, "history": found, "versions": versions, "upkeep": upkeep}


def duplicates_page(ctx: UiContext, profile: str, query: Mapping[str, Any]) -> dict[str, Any]:
    """The duplicate groups for the page's threshold and limit (kept in the form), each split
    into the members linked to its newest directly and those linked only through others."""
    from scoperag.server.ui.forms import form_arguments, form_values

    upkeep, tool = served(ctx, profile, "duplicates")
    schema = ctx.tools[tool].parameters
    arguments = form_arguments(schema, query)
    found = ctx.call(tool, arguments)
    values = form_values(schema, query)
    threshold = float(values.get("threshold") or 0)
    groups = []
    for group in found["groups"]:
        direct = [m for m in group["members"] if m["similarity"] >= threshold]
        chained = [m for m in group["members"] if m["similarity"] < threshold]
        groups.append({**group, "direct": direct, "chained": chained})
    stricter = min(1.0, round(threshold + (1 - threshold) / 2, 2))
    return {
        "profile": profile,
        "found": found,
        "groups": groups,
        "values": values,
        "threshold": threshold,
        "stricter": stricter,
        "merge_at_most": MERGE_AT_MOST,
        "upkeep": upkeep,
    }
