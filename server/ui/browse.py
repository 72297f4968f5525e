"""A profile's points, a page at a time, narrowed by the groupings its declaration names, and
its listing tools' answers (the tools without parameters, as `qdrant-list-documents`)."""

from __future__ import annotations

from typing import Any

from scoperag.core.errors import InvalidParameterError
from scoperag.server.profiles.declaration import Profile
from scoperag.server.ui.context import UiContext
from scoperag.server.ui.upkeep import KEY  # what the upkeep controls name a row by

PAGE_SIZE = 25
TIME_KEY = "created_at_ts"  # an indexed creation time (Unix seconds): the timeline's counts
MONTHS = 12
LONG_WORD = 40  # a value longer than this without a space (a hash) is shown shortened
TEXT_KEYS = ("content", "text", "_node_content", "description")  # where a point's text is
_HIDDEN = ("_node_content", "_node_type", "doc_id", "ref_doc_id")  # LlamaIndex's bookkeeping


def point_text(payload: dict[str, Any]) -> str:
    """A point's text: the first text key its payload has (LlamaIndex's JSON node, read)."""
    import json

    for key in TEXT_KEYS:
        value = payload.get(key)
        if isinstance(value, str) and value:
            if key == "_node_content":
                return str(json.loads(value).get("text", ""))
            return value
    return ""


def _shown(value: Any) -> Any:
    """A payload value as a cell: a list joined, a long word (a hash) shortened."""
    if isinstance(value, list):
        return ", ".join(map(str, value))
    if isinstance(value, str) and len(value) > LONG_WORD and " " not in value:
        return value[:12] + "…"
    return value


def _row(payload: dict[str, Any]) -> dict[str, Any]:
    from scoperag.core.engine.generations import GENERATION_KEY, SOURCE_KEY

    hidden = {*TEXT_KEYS, *_HIDDEN, GENERATION_KEY, SOURCE_KEY}
    fields = {
        key: _shown(value)
        for key, value in payload.items()
        if key not in hidden and not isinstance(value, dict)
    }
    return {"text": point_text(payload), "fields": fields, "key": payload.get(KEY)}


def _filter(profile: Profile, group: str | None, value: str | None) -> Any:
    if not group or value is None:
        return None
    if group not in profile.groups:
        raise InvalidParameterError("group", group, ", ".join(profile.groups) or "none")
    from qdrant_client import models

    key = profile.groups[group]
    match: Any = int(value) if value.lstrip("-").isdigit() else value
    condition = models.FieldCondition(key=key, match=models.MatchValue(value=match))
    return models.Filter(must=[condition])


def browse(
    ctx: UiContext, profile: Profile, group: str | None, value: str | None, page: int
) -> dict[str, Any]:
    """One page of the profile's points (narrowed to `group` == `value` when given), the
    groupings' values with their counts, and its listing tools."""
    from scoperag.server.data_admin import describe_profile

    if page < 1:
        raise InvalidParameterError("page", page, "a page number from 1")
    backend = ctx.runtime.backend
    data = describe_profile(backend, ctx.settings, profile.name)
    rows: list[dict[str, Any]] = []
    matching = 0
    if data.exists:
        flt = _filter(profile, group, value)
        matching = backend.count(data.collection, flt)
        records = backend.scroll(data.collection, flt, PAGE_SIZE, (page - 1) * PAGE_SIZE)
        rows = [_row(record.payload or {}) for record in records]
    columns = sorted({key for row in rows for key in row["fields"]})
    months = timeline(backend, data.collection) if data.exists else []
    return {
        "profile": profile,
        "data": data,
        "rows": rows,
        "columns": columns,
        "group": group,
        "value": value,
        "page": page,
        "pages": max(1, -(-matching // PAGE_SIZE)),
        "matching": matching,
        "listings": listing_tools(ctx, profile) if data.exists else [],
        "timeline": months,
        "busiest": max((n for _, n in months), default=0),
    }


def timeline(backend: Any, collection: str) -> list[tuple[str, int]]:
    """Points stored per month over the last months (YYYY-MM, count), where the collection
    indexes a creation time; else none."""
    from datetime import UTC, datetime

    from qdrant_client import models

    if TIME_KEY not in backend.payload_indexes(collection):
        return []
    now = datetime.now(UTC)
    starts = [
        datetime(
            now.year + (now.month - 1 - back) // 12, (now.month - 1 - back) % 12 + 1, 1, tzinfo=UTC
        )
        for back in range(MONTHS, -1, -1)
    ]
    months = []
    for start, end in zip(starts, [*starts[1:], None], strict=True):
        span = models.Range(gte=start.timestamp(), lt=end.timestamp() if end else None)
        flt = models.Filter(must=[models.FieldCondition(key=TIME_KEY, range=span)])
        months.append((start.strftime("%Y-%m"), backend.count(collection, flt)))
    return months


def listing_tools(ctx: UiContext, profile: Profile) -> list[str]:
    """The profile's read-only tools without parameters (its listings, as `list_books`); the
    page asks each when it is opened."""
    return [
        name
        for name, tool in ctx.profile_tools(profile).items()
        if tool.annotations is not None
        and tool.annotations.read_only_hint
        and not tool.parameters.get("properties")
    ]
