"""Whole days in UTC (`YYYY-MM-DD`) as filter values on a key holding Unix seconds: a day is
the span from its midnight to the next, so "on or before 2026-03-01" ends at 2026-03-02 00:00."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time
from typing import Annotated

from pydantic import AfterValidator, Field

DATE_FORMAT = "a date as YYYY-MM-DD (ISO 8601, a whole day in UTC), e.g. 2026-01-31"
SECONDS_PER_DAY = 86_400
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def parse_day(value: str) -> date:
    """A `YYYY-MM-DD` day; anything else is a ValueError naming the expected format."""
    if _DAY.fullmatch(value.strip()):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise ValueError(f"accepted: {DATE_FORMAT}")


Day = Annotated[str, Field(json_schema_extra={"format": "date"}), AfterValidator(parse_day)]
"""A tool parameter taking one day as `YYYY-MM-DD`; its value is that `date`."""


def day_start(day: date) -> float:
    """Unix seconds of the day's first instant (00:00:00 UTC)."""
    return datetime.combine(day, time(), UTC).timestamp()


def day_end(day: date) -> float:
    """Unix seconds of the next day's midnight: the exclusive end of the whole day (for
    9999-12-31 too, whose next day Python's `date` cannot hold)."""
    return day_start(day) + SECONDS_PER_DAY


# a condition on a day -> (bound on the seconds key, which end of the day it is compared with)
DAY_BOUNDS = {
    ">=": ("gte", day_start),
    ">": ("gte", day_end),
    "<": ("lt", day_start),
    "<=": ("lt", day_end),
}
