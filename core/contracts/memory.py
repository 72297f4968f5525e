"""memory profile: the payload of a stored memory, its facets, and how facet values are read."""

from __future__ import annotations

import contextlib
import hashlib
import re
from datetime import UTC, date, datetime, time
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from scoperag.core.config.settings import Settings
from scoperag.core.errors import InvalidParameterError
from scoperag.core.filters.fields import Condition, FieldType, FilterableField
from scoperag.core.filters.params import json_array, plain_item

if TYPE_CHECKING:
    from qdrant_client import models

COLLECTION = "memories"
TIME_KEY = "created_at_ts"  # numeric twin of created_at: what date ranges use
# Newest-first order: a unique integer per memory (`pipelines.memory_order`), as Qdrant's
# order_by has no second key and equal timestamps would otherwise repeat or skip across pages.
ORDER_KEY = "created_order"
DEFAULT_MEMORY_TYPE = "note"
DATE_FORMAT = "a date as YYYY-MM-DD (ISO 8601, a whole day in UTC), e.g. 2026-01-31"
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


class MemoryPayload(BaseModel):
    """What every point of the `memories` collection carries (flat in the Qdrant payload)."""

    content: str = Field(description="The memory's text, as stored and embedded.")
    content_hash: str = Field(description="sha256 of the content; the memory's identity.")
    tags: list[str] = Field(default_factory=list)
    memory_type: str = DEFAULT_MEMORY_TYPE
    created_at: str = Field(description="RFC 3339 time in UTC, e.g. 2026-01-31T09:15:00Z.")
    created_at_ts: float = Field(description="created_at as Unix seconds (date ranges).")
    created_order: int = Field(
        default=0, description="Unique newest-first key: created_at in ms, then a write slot."
    )
    metadata: dict[str, Any] = Field(default_factory=dict)
    # A memory is a line of versions (absent keys, as memories stored before versions have
    # them, read as a current first version whose line is its own hash).
    version: int = Field(default=1, description="1 for a first version, then 2, 3, ...")
    lineage: str = Field(default="", description="content_hash of the line's first version.")
    supersedes: list[str] = Field(default_factory=list, description="Hashes this replaced.")
    superseded_by: str | None = Field(default=None, description="The hash that replaced it.")
    updated_at: str = Field(default="", description="RFC 3339 time this version was written.")
    expires_at: str | None = Field(default=None, description="RFC 3339; hidden after it.")
    expires_ts: float | None = Field(default=None, description="expires_at as Unix seconds.")


PAYLOAD_MODEL = MemoryPayload  # what every stored point's payload fits (imports, check)


TAGS_ANY = FilterableField(
    name="tags",
    field_type=FieldType.KEYWORD,
    condition=Condition.ANY,
    description="Memories carrying at least one of these tags.",
)
TAGS_ALL = TAGS_ANY.model_copy(
    update={"condition": Condition.ALL, "description": "Memories carrying every one of these tags."}
)
MEMORY_TYPE = FilterableField(
    name="memory_type",
    field_type=FieldType.KEYWORD,
    description="Memories of this type (exact), e.g. decision, learning, note.",
)
START_DATE = FilterableField(
    name="start_date",
    key=TIME_KEY,
    field_type=FieldType.FLOAT,
    condition=Condition.GTE,
    description="Memories created on or after this day (UTC).",
)
END_DATE = FilterableField(
    name="end_date",
    key=TIME_KEY,
    field_type=FieldType.FLOAT,
    condition=Condition.LT,
    description="Memories created on or before this day (UTC); the value is the next midnight.",
)
CONTENT_HASH = FilterableField(
    name="content_hash",
    field_type=FieldType.KEYWORD,
    description="The memory's sha256, as store_memory returned it.",
)
CREATED_ORDER = FilterableField(
    name=ORDER_KEY,
    field_type=FieldType.INTEGER,
    description="Newest-first order key (unique per memory).",
)
SUPERSEDED_BY = FilterableField(
    name="superseded_by",
    field_type=FieldType.KEYWORD,
    description="The hash of the version that replaced a memory (absent or null: current).",
)
LINEAGE = FilterableField(
    name="lineage",
    field_type=FieldType.KEYWORD,
    description="The content hash of the first version of a memory's line.",
)
EXPIRES = FilterableField(
    name="expires_ts",
    field_type=FieldType.FLOAT,
    condition=Condition.LTE,
    description="Memories expired at this Unix time (absent or null: never expire).",
)
MEMORY_INDEXES = [
    TAGS_ANY, MEMORY_TYPE, START_DATE, CONTENT_HASH, CREATED_ORDER, SUPERSEDED_BY, LINEAGE, EXPIRES
]  # fmt: skip


def required_indexes(settings: Settings) -> dict[str, list[FilterableField]]:
    """The memory profile's collection and its indexed fields."""
    return {COLLECTION: MEMORY_INDEXES}


def content_hash(content: str) -> str:
    """The identity of a memory: sha256 (hex) of its UTF-8 text."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def version_hash(content: str, lineage: str, version: int) -> str:
    """The hash of a version whose text another memory already has (e.g. a version that changes
    tags only): sha256 of its text, line and version number, so it is a memory of its own."""
    return content_hash(f"{content}\x00{lineage}\x00{version}")


def current_memories(
    now: float, include_superseded: bool, include_expired: bool
) -> list[models.Condition]:
    """Conditions (to AND into a filter) leaving out superseded versions and memories expired
    at `now`, unless included; a memory without these keys is current and never expires."""
    from qdrant_client import models

    found: list[models.Condition] = []
    if not include_superseded:  # is_empty: the key absent, null or []
        found.append(models.IsEmptyCondition(is_empty=models.PayloadField(key="superseded_by")))
    if not include_expired:
        never = models.IsEmptyCondition(is_empty=models.PayloadField(key=EXPIRES.payload_key))
        later = models.FieldCondition(key=EXPIRES.payload_key, range=models.Range(gt=now))
        found.append(models.Filter(should=[never, later]))
    return found


def parse_expiry(value: object, parameter: str = "expires_at") -> datetime:
    """An expiry time: RFC 3339 with a time zone (`2026-03-01T00:00:00Z`, `...+02:00`)."""
    moment = None
    if isinstance(value, str) and "T" in value.upper():
        with contextlib.suppress(ValueError):
            moment = datetime.fromisoformat(value.strip())
    if moment is None or moment.tzinfo is None:
        raise InvalidParameterError(
            parameter, value, "an RFC 3339 time with a zone, e.g. 2026-03-01T09:00:00Z"
        )
    return moment.astimezone(UTC)


def normalise_tags(value: str | list[str] | None, parameter: str = "tags") -> list[str] | None:
    """Tags as a list: a JSON array as text is that array, `"a, b"` is split on commas, `""`
    means none; blanks and repeats dropped; a tag holding `[`, `]` or `"` is refused."""
    value = json_array(value)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str):
        value = value.split(",")
    accepted = "a list of strings or one comma-separated string"
    if not isinstance(value, list) or not all(isinstance(tag, str) for tag in value):
        raise InvalidParameterError(parameter, value, accepted)
    for tag in value:
        try:
            plain_item(tag)
        except ValueError as exc:
            raise InvalidParameterError(parameter, tag, f"{accepted}; this tag {exc}") from None
    return list(dict.fromkeys(tag.strip() for tag in value if tag.strip()))


def rfc3339(moment: datetime) -> str:
    """`2026-01-31T09:15:00Z` (fractions of a second kept when there are any)."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def parse_moment(value: object, parameter: str = "created_at") -> datetime:
    """A creation time from a datetime, RFC 3339 / ISO 8601 text or Unix seconds (no zone = UTC),
    within the years 1-9999 in UTC."""
    moment = None
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, int | float) and not isinstance(value, bool):
        with contextlib.suppress(OverflowError, OSError, ValueError):  # past year 9999, NaN
            moment = datetime.fromtimestamp(value, UTC)
    elif isinstance(value, str):
        with contextlib.suppress(ValueError):
            moment = datetime.fromisoformat(value.strip())
    if moment is not None:
        moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
        with contextlib.suppress(OverflowError):  # e.g. 0001-01-01T00:00+05:00 is before year 1
            return moment.astimezone(UTC)
    raise InvalidParameterError(
        parameter,
        value,
        "an RFC 3339 time such as 2026-01-31T09:15:00Z, or Unix seconds, in the years 1-9999",
    )


def parse_day(value: str, parameter: str) -> date:
    """A `YYYY-MM-DD` day; anything else is a clear error naming the expected format."""
    if _DAY.fullmatch(value.strip()):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise InvalidParameterError(parameter, value, DATE_FORMAT)


SECONDS_PER_DAY = 86_400


def day_start(day: date) -> float:
    """Unix seconds of the day's first instant (00:00:00 UTC)."""
    return datetime.combine(day, time(), UTC).timestamp()


def day_end(day: date) -> float:
    """Unix seconds of the next day's midnight: the exclusive end of the whole day (for
    9999-12-31 too, whose next day Python's `date` cannot hold)."""
    return day_start(day) + SECONDS_PER_DAY
