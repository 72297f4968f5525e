"""The notes profile's payload contract: its collection and its one filter field."""

from __future__ import annotations

from scoperag.core.config.settings import Settings
from scoperag.core.filters.fields import FieldType, FilterableField

COLLECTION = "notes"
TOPIC = FilterableField(
    name="topic", field_type=FieldType.KEYWORD, description="Only notes on this topic."
)


def required_indexes(settings: Settings) -> dict[str, list[FilterableField]]:
    """The notes collection and its indexed field."""
    return {COLLECTION: [TOPIC]}
