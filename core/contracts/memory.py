"""memory profile: the payload of a stored memory, its facets, and how facet values are read."""

from __future__ import annotations

import contextlib
import hashlib
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from scoperag.core.config.settings import Settings
from scoperag.core.errors import InvalidParameterError
from scoperag.core.filters.fields import Condition, FieldType, FilterableField, build_filter
from scoperag.core.filters.params import as_list, plain_item

if TYPE_CHECKING:
    from qdrant_client import models

COLLECTION = "memories"
TIME_KEY = "created_at_ts"  # numeric twin of created_at: what date ranges use
# Newest-first order: a unique integer per memory (`pipelines.memory_order`), as Qdrant's
# order_by has no second key and equal timestamps would otherwise repeat or skip across pages.
ORDER_KEY = "created_order"
DEFAULT_MEMORY_TYPE = "note"


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


# The memory profile's filters: each one a tool parameter (of `search`; `find_duplicates` takes
# tags and memory_type), a CLI option and a Qdrant condition. A new filter is one more entry.
TAGS = FilterableField(
    name="tags",
    field_type=FieldType.KEYWORD,
    condition=Condition.ANY,
    description="Tags to match: a list, or one comma-separated string.",
    all_flag="match_all",
    all_flag_description="True: a memory must carry every tag; False: any of them.",
)
START_DATE = FilterableField(
    name="start_date",
    key=TIME_KEY,
    field_type=FieldType.DAY,
    condition=Condition.GTE,
    description="First day, YYYY-MM-DD (inclusive, UTC). faceted/tag modes.",
)
END_DATE = START_DATE.model_copy(
    update={
        "name": "end_date",
        "condition": Condition.LTE,
        "description": "Last day, YYYY-MM-DD (inclusive, UTC). faceted/tag modes.",
    }
)
MEMORY_TYPE = FilterableField(
    name="memory_type",
    field_type=FieldType.KEYWORD,
    description="Only memories of this type, e.g. decision, learning, note.",
)
# "current memory": neither superseded nor expired, unless the flag includes them
SUPERSEDED = FilterableField(
    name="include_superseded",
    key="superseded_by",
    field_type=FieldType.KEYWORD,
    condition=Condition.SET,
    hides=True,
    description="Also versions an update or a merge replaced.",
)
EXPIRED = FilterableField(
    name="include_expired",
    key="expires_ts",
    field_type=FieldType.FLOAT,
    condition=Condition.LTE,
    hides=True,
    description="Also memories past expires_at.",
)
MEMORY_FILTERS = [TAGS, START_DATE, END_DATE, MEMORY_TYPE, SUPERSEDED, EXPIRED]
CURRENT = [SUPERSEDED, EXPIRED]
TAGS_ANY = TAGS.model_copy(update={"all_flag": None})

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
LINEAGE = FilterableField(
    name="lineage",
    field_type=FieldType.KEYWORD,
    description="The content hash of the first version of a memory's line.",
)
SUPERSEDED_BY = FilterableField(
    name="superseded_by",
    field_type=FieldType.KEYWORD,
    description="The hash of the version that replaced a memory (absent or null: current).",
)
# lookups by a memory's identity, order and line, beside the filters
MEMORY_KEYS = [CONTENT_HASH, CREATED_ORDER, LINEAGE, SUPERSEDED_BY]


def memory_indexes() -> list[FilterableField]:
    """Every indexed field of the memories collection: the filters' keys and the lookups'."""
    return [*MEMORY_FILTERS, *MEMORY_KEYS]


def required_indexes(settings: Settings) -> dict[str, list[FilterableField]]:
    """The memory profile's collection and its indexed fields."""
    return {COLLECTION: memory_indexes()}


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
    at `now`, unless included (`CURRENT`); a memory without these keys is current and never
    expires."""
    flags = {SUPERSEDED.name: include_superseded, EXPIRED.name: include_expired}
    found = build_filter(CURRENT, flags, now=now)
    return [] if found is None else [found]


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
    """Tags as a list, read by `as_list` (a JSON array as text, `"a, b"` split on commas, `""`
    none), repeats dropped; a tag holding `[`, `]` or `"` is refused."""
    value = as_list(value)
    if value is None:
        return None
    accepted = "a list of strings or one comma-separated string"
    if not isinstance(value, list) or not all(isinstance(tag, str) for tag in value):
        raise InvalidParameterError(parameter, value, accepted)
    for tag in value:
        try:
            plain_item(tag)
        except ValueError as exc:
            raise InvalidParameterError(parameter, tag, f"{accepted}; this tag {exc}") from None
    return list(dict.fromkeys(value))


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
