"""Memories as cards: the search tool's own answer (newest first, or by relevance to a query),
narrowed by the filters the profile declares (tags, type, dates), a page at a time, over a
timeline of the whole span whose bars each open their month."""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any

from scoperag.core.contracts import memory as contract
from scoperag.server.profiles.declaration import Profile
from scoperag.server.ui.browse.common import page_number
from scoperag.server.ui.context import UiContext
from scoperag.server.ui.forms import form_arguments
from scoperag.server.ui.upkeep import upkeep_tools

TEMPLATE = "browse_memory.html"
PAGE_SIZE = 20
# the profile's declared filters that narrow (tags and how they combine, dates, type), not the
# flags that include replaced or expired versions: the page lists current memories
FILTERS = tuple(
    name
    for field in contract.MEMORY_FILTERS
    if not field.hides
    for name in (field.name, field.all_flag)
    if name
)
MONTHS_SHOWN = 60  # a longer span is drawn a bar a year
CHOICES = 200  # tags and types offered in the filters at most (the most used)


def _current(now: float) -> Any:
    from qdrant_client import models

    return models.Filter(must=contract.current_memories(now, False, False))


def _month_start(moment: datetime) -> date:
    return date(moment.year, moment.month, 1)


def _next(start: date, yearly: bool) -> date:
    if yearly:
        return date(start.year + 1, 1, 1)
    return date(start.year + start.month // 12, start.month % 12 + 1, 1)


def timeline(ctx: UiContext, collection: str, now: float) -> list[dict[str, Any]]:
    """Current memories per month (per year past five years) from the oldest to the newest:
    each bar's label, count, share of the busiest and its date range."""
    from datetime import timedelta

    from qdrant_client import models

    backend = ctx.runtime.backend
    current = _current(now)
    ends = []
    for direction in ("asc", "desc"):
        order = models.OrderBy(key=contract.ORDER_KEY, direction=direction)
        found = backend.scroll(collection, current, 1, order_by=order)
        if not found:
            return []
        ends.append(datetime.fromtimestamp(found[0].payload[contract.TIME_KEY], UTC))
    first, last = (_month_start(moment) for moment in ends)
    yearly = (last.year - first.year) * 12 + last.month - first.month >= MONTHS_SHOWN
    start = date(first.year, 1, 1) if yearly else first
    bars = []
    while start <= last:
        end = _next(start, yearly)
        bounds = [datetime(d.year, d.month, d.day, tzinfo=UTC).timestamp() for d in (start, end)]
        span = models.FieldCondition(
            key=contract.TIME_KEY, range=models.Range(gte=bounds[0], lt=bounds[1])
        )
        count = backend.count(collection, models.Filter(must=[current, span]))
        label = f"{start.year}" if yearly else f"{start:%b %Y}"
        bars.append({"label": label, "count": count, "start": start, "end": end})
        start = end
    busiest = max(bar["count"] for bar in bars) or 1
    for bar in bars:
        bar["level"] = 0 if not bar["count"] else max(1, round(10 * bar["count"] / busiest))
        bar["start_date"] = bar["start"].isoformat()
        bar["end_date"] = (bar.pop("end") - timedelta(days=1)).isoformat()
    return bars


def _choices(ctx: UiContext, collection: str, field: Any, now: float) -> list[tuple[Any, int]]:
    """The stored values of a keyword filter, most used first, with their counts."""
    counts = ctx.runtime.backend.facet(collection, field.payload_key, _current(now), CHOICES)
    return sorted(counts.items(), key=lambda item: (-item[1], str(item[0])))


def filter_inputs(ctx: UiContext, collection: str, now: float) -> list[dict[str, Any]]:
    """The filter form's inputs, one per declared filter that narrows: a day for a date, a
    list (with its flag for "every, not any") for tags, a choice among the stored values
    (with their counts) for any other keyword."""
    from scoperag.core.filters.fields import Condition, FieldType

    inputs: list[dict[str, Any]] = []
    for field in contract.MEMORY_FILTERS:
        if field.hides:
            continue
        label = field.name.replace("_", " ").capitalize()
        if field.field_type == FieldType.DAY:
            kind, known = "day", []
        else:
            many = field.condition in (Condition.ANY, Condition.ALL)
            kind, known = ("list" if many else "choice"), _choices(ctx, collection, field, now)
        inputs.append({"name": field.name, "label": label, "kind": kind, "choices": known})
        if field.all_flag:
            flag = field.all_flag_description.split(";")[0].removeprefix("True:").strip()
            inputs.append({"name": field.all_flag, "label": flag, "kind": "flag", "choices": []})
    return inputs


def page(
    ctx: UiContext, profile: Profile, collection: str, query: Mapping[str, str]
) -> dict[str, Any]:
    """One page of memory cards for the page's query, its filters and the timeline."""
    tool = profile.methods["search"]
    schema = ctx.tools[tool].parameters
    given = {name: query[name] for name in ("query", *FILTERS) if query.get(name)}
    arguments = form_arguments(schema, given) | {"page": page_number(query), "page_size": PAGE_SIZE}
    if set(given) - {"query"}:  # every filter given applies, with a query or without
        arguments["mode"] = "faceted"
    result = ctx.call(tool, arguments)
    now = time.time()
    return {
        "result": result,
        "cards": result["memories"],
        "given": given,
        "inputs": filter_inputs(ctx, collection, now),
        "timeline": timeline(ctx, collection, now),
        "upkeep": upkeep_tools(ctx, profile),
    }
