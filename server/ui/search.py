"""The search page: a form for each of a profile's read-only tools that take parameters, the
answer as hit cards (source, the text with the query's words marked, similarity and score),
a page at a time, and when asked each hit's ranks and the dropped candidates."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from scoperag.core.errors import InvalidParameterError, ScoperagError
from scoperag.server.profiles.declaration import Profile
from scoperag.server.results.hits import hits_of
from scoperag.server.results.listing import source_line
from scoperag.server.results.shape import FUSION_WORDS
from scoperag.server.ui.browse.common import page_number
from scoperag.server.ui.context import UiContext
from scoperag.server.ui.forms import form_arguments, form_fields, form_values

LIMITS = ("limit", "top_k", "page_size")  # the parameter bounding how many hits come back
SHOWN = 700  # characters of a hit's text shown
_WORD = re.compile(r"\w{3,}")


def search_tools(ctx: UiContext, profile: Profile) -> dict[str, Any]:
    """Tool name -> tool, for the profile's read-only tools that take parameters."""
    return {
        name: tool
        for name, tool in ctx.profile_tools(profile).items()
        if tool.annotations is not None
        and tool.annotations.read_only_hint
        and tool.parameters.get("properties")
    }


def marked(text: str, query: str) -> list[tuple[str, bool]]:
    """`text` (cut to `SHOWN` characters) in parts, each saying whether it is one of the
    query's words (three letters or more, any case)."""
    words = {w.casefold() for w in _WORD.findall(query)}
    text = text if len(text) <= SHOWN else text[:SHOWN].rsplit(" ", 1)[0] + " …"
    if not words:
        return [(text, False)]
    parts: list[tuple[str, bool]] = []
    last = 0
    for found in _WORD.finditer(text):
        if found.group().casefold() in words:
            parts += [(text[last : found.start()], False), (found.group(), True)]
            last = found.end()
    return [*parts, (text[last:], False)]


def _paging(schema: dict[str, Any], arguments: dict[str, Any], page: int) -> int:
    """Ask for page `page`: through the tool's `page` where it has one, else by asking for
    `page` times its limit and showing the last of them. Returns the hits a page holds."""
    properties = schema.get("properties", {})
    limit = next((name for name in LIMITS if name in properties), "")
    per_page = int(arguments.get(limit) or properties.get(limit, {}).get("default") or 10)
    if "page" in properties:
        arguments["page"] = page
    elif limit:
        most = properties[limit].get("maximum", per_page * page)
        if per_page * page > most:
            raise InvalidParameterError("page", page, f"a page up to {most // per_page}")
        arguments[limit] = per_page * page
    return per_page


# payload keys as the explanation names them for a reader
KEY_WORDS = {
    "superseded_by": "a newer version",
    "expires_ts": "expiry",
    "created_at_ts": "stored",
    "pos_start": "first sentence",
    "pos_end": "last sentence",
    "physical_page_index": "page in the file",
}
TIMES = ("expires_ts", "created_at_ts")
BOUNDS = {"gte": "≥", "gt": ">", "lte": "≤", "lt": "<"}


def _bound(key: str, value: Any) -> str:
    if key in TIMES and isinstance(value, int | float):
        from datetime import UTC, datetime

        return f"{datetime.fromtimestamp(value, UTC):%d %b %Y %H:%M} UTC"
    return str(value)


def filter_words(flt: Any) -> list[str]:
    """An explanation's filter (Qdrant's JSON) as phrases: `status is active`, `stored ≥ ...`,
    `without a newer version`, `either (...) or (...)`."""
    if not isinstance(flt, dict):
        return []
    phrases = []
    for clause, joined in (("must", ""), ("must_not", "not ")):
        for condition in flt.get(clause) or []:
            phrases += [joined + p for p in _condition_words(condition)]
    if flt.get("should"):
        parts = [" and ".join(_condition_words(c)) for c in flt["should"]]
        phrases.append("either " + " or ".join(f"({part})" for part in parts))
    return phrases


def _condition_words(condition: dict[str, Any]) -> list[str]:
    if any(clause in condition for clause in ("must", "should", "must_not")):
        return filter_words(condition)
    if "is_empty" in condition:
        key = condition["is_empty"].get("key", "")
        return [f"without {KEY_WORDS.get(key, key.replace('_', ' '))}"]
    key = str(condition.get("key", ""))
    name = KEY_WORDS.get(key, key.replace("_", " "))
    found = condition.get("match") or {}
    if "value" in found:
        return [f"{name} is {found['value']}"]
    if "any" in found:
        return [f"{name} is one of {', '.join(map(str, found['any']))}"]
    bounds = condition.get("range") or {}
    shown = [f"{name} {BOUNDS[b]} {_bound(key, v)}" for b, v in bounds.items() if v is not None]
    return shown or [name]


def named(ctx: UiContext, profile: Profile, dropped: list[dict[str, Any]]) -> list[dict]:
    """The dropped candidates, each named as hits are (the profile's `source`, read from the
    point's payload; a memory by its first words too)."""
    from qdrant_client import models

    ids = [d["id"] for d in dropped if d.get("id")]
    payloads: dict[str, dict[str, Any]] = {}
    collection = profile.collection(ctx.settings)
    if ids and ctx.runtime.backend.collection_exists(collection):
        flt = models.Filter(must=[models.HasIdCondition(has_id=ids)])
        records = ctx.runtime.backend.scroll(collection, flt, len(ids))
        payloads = {str(r.id): r.payload or {} for r in records}
    found = []
    for candidate in dropped:
        payload = payloads.get(str(candidate.get("id")))
        name = source_line(profile.source, payload) if payload else "a point no longer stored"
        if payload and isinstance(payload.get("content"), str):
            name = f"“{payload['content'][:60]}…” ({name})"
        found.append({**candidate, "named": name})
    return found


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
        "fields": [f for f in form_fields(schema) if f.name != "page"],
        "values": form_values(schema, query),
        "sent": "run" in query,
        "query": dict(query),
    }
    if not page["sent"]:
        return page
    arguments = form_arguments(schema, query)
    shown = page_number(query)
    per_page = _paging(schema, arguments, shown)
    try:
        result = ctx.call(name, arguments)
    except ScoperagError as exc:
        return {**page, "error": str(exc)}
    hits = hits_of(name, result)
    if "page" in schema.get("properties", {}):
        pages = int(result.get("total_pages") or shown)
    else:  # the tool gave the first pages' hits too, and a full page may have a next
        pages = shown + (len(hits) == per_page * shown)
        hits = hits[(shown - 1) * per_page :]
    words = str(query.get("query") or query.get("name") or "")
    explain = result.get("explain") if isinstance(result, dict) else None
    page.update(
        hits=[
            {
                "hit": hit,
                "source": source_line(profile.source, hit.fields),
                "parts": marked(hit.text, words),
            }
            for hit in hits
        ],
        fusion_words=FUSION_WORDS,
        first=(shown - 1) * per_page,
        page=shown,
        pages=pages,
        total=result.get("total") if isinstance(result, dict) else None,
        note=(result.get("message") or result.get("note")) if isinstance(result, dict) else None,
        explain=explain,
        filter_words=filter_words((explain or {}).get("filter")),
        dropped=named(ctx, profile, (explain or {}).get("dropped", [])),
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
