"""dnd profile: the payload of one Open5e item and the filters of the D&D lookup tools."""

from __future__ import annotations

import re
import unicodedata
from fractions import Fraction
from typing import Literal

from pydantic import BaseModel, Field

from scoperag.core.config.settings import Settings
from scoperag.core.filters.fields import Condition, FieldType, FilterableField

COLLECTION = "dnd"

Kind = Literal["spell", "creature", "equipment", "character-option", "rule"]
KINDS: tuple[str, ...] = ("spell", "creature", "equipment", "character-option", "rule")
ITEM_TYPES = ("weapon", "armor", "magic-item")
OPTION_TYPES = ("class", "archetype", "race", "subrace", "background", "feat")
RULE_TYPES = ("section", "condition", "plane")


class DndItemPayload(BaseModel):
    """Metadata of one item (flat in the Qdrant payload); typed fields only on their kind.

    Keyword values a tool filters on (school, classes, type, size) are stored lower-case, and
    the tools lower-case what a caller gives, so those filters are case-insensitive.
    """

    document: str = Field(description="Slug of the source document, e.g. 'wotc-srd'.")
    document_title: str
    kind: Kind
    name: str
    slug: str = Field(description="The item's Open5e key (pk), unique within its kind.")
    name_order: int = Field(ge=0, description="Sort key: alphabetical order of the name.")
    item_type: Literal["weapon", "armor", "magic-item"] | None = None
    option_type: Literal["class", "archetype", "race", "subrace", "background", "feat"] | None = (
        None
    )
    rule_type: Literal["section", "condition", "plane"] | None = None
    level: int | None = Field(default=None, ge=0, le=9, description="Spell level, 0 = cantrip.")
    school: str | None = None
    classes: list[str] | None = None
    type: str | None = Field(default=None, description="Creature type, e.g. 'dragon'.")
    challenge_rating: float | None = Field(default=None, ge=0)
    size: str | None = None


PAYLOAD_MODEL = DndItemPayload  # what every stored point's payload fits (imports, check)


def parse_challenge_rating(value: str | float | int) -> float:
    """A challenge rating as a number: '1/8' -> 0.125, '2' -> 2.0; ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError(f"not a challenge rating: {value!r}")
    try:
        rating = float(Fraction(str(value).strip()))
    except (ValueError, ZeroDivisionError, OverflowError):
        raise ValueError(f"not a challenge rating: {value!r}") from None
    if rating < 0:
        raise ValueError(f"not a challenge rating: {value!r}")
    return rating


_ORDER_ALPHABET = " 0123456789abcdefghijklmnopqrstuvwxyz"
_ORDER_BASE = len(_ORDER_ALPHABET) + 1  # digit 0 pads names shorter than the key
_ORDER_CHARS = 12  # 38**12 < 2**63: the key fits Qdrant's signed 64-bit integers


def name_order(name: str) -> int:
    """An integer whose order is the alphabetical order of the name's first 12 characters.

    Qdrant orders scrolls by numeric keys only; this key lets a browse come back sorted by name.
    """
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().casefold()
    plain = re.sub(r"[^0-9a-z]+", " ", plain).strip()[:_ORDER_CHARS]
    key = 0
    for char in plain.ljust(_ORDER_CHARS, "\0"):
        key = key * _ORDER_BASE + _ORDER_ALPHABET.find(char) + 1
    return key


DOCUMENTS = FilterableField(
    name="documents",
    key="document",
    field_type=FieldType.KEYWORD,
    condition=Condition.ANY,
    description=(
        "Only these source documents, by slug as listed by list_documents (e.g. "
        "['wotc-srd', 'a5e']). Leave out to use every document; [] matches nothing."
    ),
)
LEVEL = FilterableField(
    name="level",
    field_type=FieldType.INTEGER,
    ge=0,
    le=9,
    description="Spell level: 0 for cantrips, 1 to 9.",
)
SCHOOL = FilterableField(
    name="school",
    field_type=FieldType.KEYWORD,
    description="School of magic, e.g. 'evocation' (case-insensitive).",
)
TYPE = FilterableField(
    name="type",
    field_type=FieldType.KEYWORD,
    description="Creature type, e.g. 'dragon', 'undead', 'beast' (case-insensitive).",
)
CHALLENGE_RATING = FilterableField(
    name="challenge_rating",
    field_type=FieldType.FLOAT,
    ge=0,
    description="Challenge rating; fractions as decimals (0.125 = 1/8, 0.25, 0.5) or '1/8'.",
)
ITEM_TYPE = FilterableField(
    name="item_type",
    field_type=FieldType.KEYWORD,
    choices=ITEM_TYPES,
    description="Kind of equipment: weapon, armor or magic-item.",
)
OPTION_TYPE = FilterableField(
    name="option_type",
    field_type=FieldType.KEYWORD,
    choices=OPTION_TYPES,
    description="Kind of character option: class, archetype, race, subrace, background or feat.",
)
RULE_TYPE = FilterableField(
    name="rule_type",
    field_type=FieldType.KEYWORD,
    choices=RULE_TYPES,
    description="Kind of rule: section (rules chapters), condition or plane.",
)


def _indexed(name: str, field_type: FieldType) -> FilterableField:
    return FilterableField(name=name, field_type=field_type, description="Indexed payload key.")


KIND = _indexed("kind", FieldType.KEYWORD)
NAME = _indexed("name", FieldType.KEYWORD)
NAME_ORDER = _indexed("name_order", FieldType.INTEGER)
DND_INDEXES = [
    DOCUMENTS,
    KIND,
    NAME,
    NAME_ORDER,
    LEVEL,
    SCHOOL,
    _indexed("classes", FieldType.KEYWORD),
    TYPE,
    CHALLENGE_RATING,
    _indexed("size", FieldType.KEYWORD),
    ITEM_TYPE,
    OPTION_TYPE,
    RULE_TYPE,
]


def required_indexes(settings: Settings) -> dict[str, list[FilterableField]]:
    """The dnd profile's collection and its indexed fields."""
    return {COLLECTION: DND_INDEXES}
