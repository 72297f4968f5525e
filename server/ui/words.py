"""Numbers, counts, dates and links as the pages write them for people: `3 memories`,
`1 book`, `0.77`, `2 Mar 2026` (the templates' filters and globals)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

IRREGULAR = {"memory": "memories", "entry": "entries", "this": "these", "is": "are"}


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """`count` and the word for it: 1 memory, 3 memories, 12,408 points."""
    word = singular if count == 1 else plural_form or IRREGULAR.get(singular, singular + "s")
    return f"{count:,} {word}"


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 22nd."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n:,}{suffix}"


def figure(value: Any) -> str:
    """A score or similarity rounded for a reader: two decimals, or two significant digits
    below 0.1 (0.033); not a number: an empty string."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return ""
    if value != 0 and abs(value) < 0.1:
        return f"{value:.2g}"
    return f"{value:.2f}"


def day(moment: Any) -> str:
    """An RFC 3339 time as a day: 2 Mar 2026 (what is not a time, as it is)."""
    if not isinstance(moment, str) or not moment:
        return ""
    try:
        parsed = datetime.fromisoformat(moment.replace("Z", "+00:00"))
    except ValueError:
        return moment
    return f"{parsed.day} {parsed:%b %Y}"


def link(query: Mapping[str, Any], **changes: Any) -> str:
    """The current page's query with `changes` (a None value removes a parameter)."""
    merged = {**query, **changes}
    return "?" + urlencode({k: v for k, v in merged.items() if v not in (None, "")})


def install(environment: Any) -> None:
    """Add the filters and globals to a Jinja2 environment."""
    environment.filters.update(plural=plural, ordinal=ordinal, figure=figure, day=day)
    environment.globals.update(link=link)
