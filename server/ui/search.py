"""The search page: a form for each of a profile's read-only tools that take parameters, the
answer as readable hits, and the explain tables when the tool was asked to explain."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from scoperag.core.errors import InvalidParameterError, ScoperagError
from scoperag.server.profiles.declaration import Profile
from scoperag.server.ui.browse import point_text
from scoperag.server.ui.context import UiContext
from scoperag.server.ui.forms import form_arguments, form_fields, form_values

TEXT_FIELDS = ("content", "text", "snippet", "chunk", "description", "passage")


def search_tools(ctx: UiContext, profile: Profile) -> dict[str, Any]:
    """Tool name -> tool, for the profile's read-only tools that take parameters."""
    return {
        name: tool
        for name, tool in ctx.profile_tools(profile).items()
        if tool.annotations is not None
        and tool.annotations.read_only_hint
        and tool.parameters.get("properties")
    }


def hits_of(result: Any) -> list[dict[str, Any]]:
    """The hits of a tool's answer: the first list of objects in it."""
    if isinstance(result, list):
        return [hit for hit in result if isinstance(hit, dict)]
    if isinstance(result, dict):
        for value in result.values():
            if isinstance(value, list) and value and isinstance(value[0], dict):
                return value
    return []


def _hit_view(hit: dict[str, Any]) -> dict[str, Any]:
    text = next((hit[k] for k in TEXT_FIELDS if isinstance(hit.get(k), str)), None)
    if text is None:
        text = (
            point_text(hit.get("metadata") or {}) if isinstance(hit.get("metadata"), dict) else ""
        )
    fields = {
        key: json.dumps(value) if isinstance(value, dict | list) else value
        for key, value in hit.items()
        if key not in TEXT_FIELDS and key != "explain" and value not in (None, "", [], {})
    }
    return {"text": text, "fields": fields, "explain": hit.get("explain")}


def _listing(tool: str, result: Any) -> str | None:
    """The CLI's readable listing of the answer (`server.results.listing`)."""
    if not isinstance(result, dict):
        return None
    from scoperag.server.results.listing import render_hits

    try:
        return render_hits(tool, result, 100)
    except (KeyError, TypeError, ValueError):  # a shape it does not read: the hits as cards
        return None


def search_page(ctx: UiContext, profile: Profile, query: Mapping[str, Any]) -> dict[str, Any]:
    """The page's values: the tools, the chosen one's form and, when it was sent, its answer."""
    tools = search_tools(ctx, profile)
    if not tools:
        return {"profile": profile, "tools": {}, "tool": None}
    name = query.get("tool") or next(iter(tools))
    if name not in tools:
        raise InvalidParameterError("tool", name, ", ".join(tools))
    schema = tools[name].parameters
    page: dict[str, Any] = {
        "profile": profile,
        "tools": tools,
        "tool": name,
        "fields": form_fields(schema),
        "values": form_values(schema, query),
        "sent": "run" in query,
    }
    if not page["sent"]:
        return page
    try:
        result = ctx.call(name, form_arguments(schema, query))
    except ScoperagError as exc:
        return {**page, "error": str(exc)}
    hits = hits_of(result)
    page.update(
        hits=[_hit_view(hit) for hit in hits],
        explain=result.get("explain") if isinstance(result, dict) else None,
        summary={k: v for k, v in result.items() if not isinstance(v, list | dict)}
        if isinstance(result, dict)
        else {},
        listing=_listing(name, result),
        raw=json.dumps(result, indent=2, default=str)[:20_000],
    )
    return page


def search_link(profile: str, tool: str, arguments: dict[str, Any]) -> str:
    """The search page that runs `tool` with `arguments`, explained where the tool can."""
    from urllib.parse import urlencode

    def text(value: Any) -> str:
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return ",".join(value)
        return json.dumps(value) if isinstance(value, dict | list | bool) else str(value)

    given = {name: text(value) for name, value in arguments.items()}
    return f"/ui/search/{profile}?" + urlencode(
        {"tool": tool, **given, "explain": "true", "run": 1}
    )
