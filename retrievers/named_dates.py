"""The date a question names ("on 14 June 2022", "in March 2024", "during 2023"), read as the
period it covers, and the boost a search gives points by their distance from it.

Only dates with a year are read (a day or a month alone would need today's date); a year
alone counts only after a word that makes it a date ("in 2023", "during 2023"), so "invoice
2023" stays a number. Of several dates, the most precise is read (a day before a month before
a year), the first of equals.
"""

from __future__ import annotations

import calendar
import re
from datetime import UTC, datetime, timedelta

from scoperag.core.engine.search_request import DateBoost

DAY = 86_400.0
# the decay's scale (where the boost has fallen to half), in units of the period named
SCALE_PER_PERIOD = {"day": 1.0, "month": 0.1, "year": 0.05}
BOOST_WEIGHT = 0.6  # added to the fused score at the period named, falling off outside it

_MONTHS = {name.casefold(): n for n, name in enumerate(calendar.month_name) if name}
_MONTHS |= {name.casefold(): n for n, name in enumerate(calendar.month_abbr) if name}
_MONTHS["sept"] = 9
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR = r"(?P<year>(?:19|20)\d{2})"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("day", re.compile(rf"\b{_YEAR}-(?P<month>[01]\d)-(?P<day>[0-3]\d)\b")),
    ("day", re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.I)),
    ("day", re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.I)),
    ("month", re.compile(rf"\b{_YEAR}-(?P<month>[01]\d)\b(?!-\d)")),
    ("month", re.compile(rf"\b{_MONTH}\s+(?:of\s+)?{_YEAR}\b", re.I)),
    (
        "year",
        re.compile(
            rf"\b(?:in|during|of|from|since|throughout|for|year|early|late|mid|around)\s+"
            rf"{_YEAR}\b(?!-\d)",
            re.I,
        ),
    ),
]


def named_date(query: str, key: str) -> DateBoost | None:
    """The most precise date `query` names with its year, as a boost on the points' Unix
    seconds under payload `key`; None: it names none."""
    for unit in ("day", "month", "year"):
        for kind, pattern in _PATTERNS:
            if kind != unit:
                continue
            for match in pattern.finditer(query):
                period = _period(unit, match.groupdict())
                if period is not None:
                    start, end = period
                    scale = SCALE_PER_PERIOD[unit] * (end - start).total_seconds()
                    return DateBoost(
                        key=key,
                        text=match.group(0),
                        unit=unit,
                        start=start.timestamp(),
                        end=end.timestamp(),
                        scale=scale,
                        weight=BOOST_WEIGHT,
                    )
    return None


def _period(unit: str, parts: dict[str, str | None]) -> tuple[datetime, datetime] | None:
    """The [start, end) of the day, month or year named; None: no such date (31 February)."""
    year = int(parts["year"] or 0)
    month_text = (parts.get("month") or "1").casefold().rstrip(".")
    month = int(month_text) if month_text.isdigit() else _MONTHS.get(month_text, 0)
    try:
        if unit == "day":
            start = datetime(year, month, int(parts["day"] or 0), tzinfo=UTC)
            return start, start + timedelta(days=1)
        if unit == "month":
            start = datetime(year, month, 1, tzinfo=UTC)
            days = calendar.monthrange(year, month)[1]
            return start, start + timedelta(days=days)
        start = datetime(year, 1, 1, tzinfo=UTC)
        return start, datetime(year + 1, 1, 1, tzinfo=UTC)
    except ValueError:
        return None
