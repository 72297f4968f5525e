"""`FilterableField`: one declaration gives a tool parameter, a Qdrant condition and an index.

A reader follows a filter value in three hops: the tool parameter (`FilterableField.annotation`),
`build_filter` (which asks each field for its conditions), and the `_CONDITIONS` table below.
Besides a value compared with a key, a field can switch `any` to `all` by a boolean parameter
(`all_flag`: tags any/all), or hide what its condition matches unless an `include_...` flag is
set (`hides`: superseded and expired memories).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field, model_validator

from scoperag.core.filters.days import DAY_BOUNDS, Day, day_end, day_start

if TYPE_CHECKING:  # imported when a filter is first built, not when tools are listed (~1 s)
    from qdrant_client import models
from scoperag.core.filters.params import (
    FiniteFloat,
    Int64,
    Name,
    Query,
    RawName,
    listed,
    plain_item,
)


class FieldType(StrEnum):
    KEYWORD = "keyword"
    INTEGER = "integer"
    FLOAT = "float"
    BOOLEAN = "boolean"
    DATETIME = "datetime"
    TEXT = "text"
    DAY = "day"  # a YYYY-MM-DD day (UTC) compared with a key holding Unix seconds


class Condition(StrEnum):
    EQ = "=="
    NE = "!="
    GT = ">"
    GTE = ">="
    LT = "<"
    LTE = "<="
    ANY = "any"
    ALL = "all"
    EXCEPT = "except"
    SET = "set"  # the key holds a value (not absent, null or [])


_PYTHON_TYPES: dict[FieldType, Any] = {
    FieldType.KEYWORD: Name,
    FieldType.INTEGER: Int64,
    FieldType.FLOAT: FiniteFloat,
    FieldType.BOOLEAN: bool,
    FieldType.DATETIME: datetime,
    FieldType.TEXT: Query,
    FieldType.DAY: Day,
}

LIST_CONDITIONS = (Condition.ANY, Condition.ALL, Condition.EXCEPT)
_EXACT = (Condition.EQ, Condition.NE)
_RANGES = (Condition.GT, Condition.GTE, Condition.LT, Condition.LTE)
# The conditions each field type can honour exactly on every engine.
VALID_CONDITIONS: dict[FieldType, tuple[Condition, ...]] = {
    FieldType.KEYWORD: (*_EXACT, *LIST_CONDITIONS, Condition.SET),
    FieldType.INTEGER: (*_EXACT, *_RANGES, *LIST_CONDITIONS, Condition.SET),
    FieldType.FLOAT: (*_EXACT, *_RANGES, Condition.SET),
    FieldType.BOOLEAN: (*_EXACT, Condition.SET),
    FieldType.DATETIME: (*_EXACT, *_RANGES, Condition.SET),
    FieldType.TEXT: (*_EXACT, Condition.SET),
    FieldType.DAY: (Condition.EQ, *_RANGES),
}

# field type -> Qdrant payload index type (qdrant-client's `PayloadSchemaType` values)
INDEX_SCHEMAS: dict[FieldType, str] = {
    FieldType.KEYWORD: "keyword",
    FieldType.INTEGER: "integer",
    FieldType.FLOAT: "float",
    FieldType.BOOLEAN: "bool",
    FieldType.DATETIME: "datetime",
    FieldType.TEXT: "text",
    FieldType.DAY: "float",
}

_RANGE_KEYS = {Condition.GT: "gt", Condition.GTE: "gte", Condition.LT: "lt", Condition.LTE: "lte"}


@dataclasses.dataclass
class Parts:
    """Conditions a field contributes: all of `must`, none of `must_not`."""

    must: list[models.Condition] = dataclasses.field(default_factory=list)
    must_not: list[models.Condition] = dataclasses.field(default_factory=list)


def _match(key: str, value: Any) -> models.FieldCondition:
    from qdrant_client import models

    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


def _range(key: str, bound: str, value: Any) -> models.FieldCondition:
    from qdrant_client import models

    if isinstance(value, datetime):
        return models.FieldCondition(key=key, range=models.DatetimeRange(**{bound: value}))
    return models.FieldCondition(key=key, range=models.Range(**{bound: value}))


def _equal(key: str, value: Any) -> Parts:
    if isinstance(value, float | datetime):
        return Parts(must=[_range(key, "gte", value), _range(key, "lte", value)])
    return Parts(must=[_match(key, value)])


def _complement(key: str, equal: Parts) -> Parts:
    """Points that carry `key` and do not match `equal`: the exact complement of `==`."""
    from qdrant_client import models

    matched = equal.must[0] if len(equal.must) == 1 else models.Filter(must=equal.must)
    has_no_value = models.IsEmptyCondition(is_empty=models.PayloadField(key=key))
    return Parts(must_not=[has_no_value, matched])


def _text(key: str, value: Any) -> Parts:
    from qdrant_client import models

    return Parts(must=[models.FieldCondition(key=key, match=models.MatchText(text=value))])


def _any(key: str, values: Any) -> Parts:
    from qdrant_client import models

    return Parts(must=[models.FieldCondition(key=key, match=models.MatchAny(any=list(values)))])


def _except(key: str, values: Any) -> Parts:
    from qdrant_client import models

    match = models.MatchExcept(**{"except": list(values)})  # a Python keyword: its alias
    return Parts(must=[models.FieldCondition(key=key, match=match)])


def _ranged(bound: str) -> Callable[[str, Any], Parts]:
    return lambda key, value: Parts(must=[_range(key, bound, value)])


def _set(key: str, value: Any) -> Parts:
    """Points whose `key` holds a value (`value` true) or holds none (false)."""
    from qdrant_client import models

    empty = models.IsEmptyCondition(is_empty=models.PayloadField(key=key))
    return Parts(must_not=[empty]) if value else Parts(must=[empty])


def _day_range(condition: Condition) -> Callable[[str, Any], Parts]:
    bound, end = DAY_BOUNDS[condition.value]
    return lambda key, day: Parts(must=[_range(key, bound, end(day))])


def _negated(parts: Parts) -> Parts:
    """The points `parts` does not match."""
    from qdrant_client import models

    if len(parts.must) + len(parts.must_not) == 1:
        return Parts(must=parts.must_not, must_not=parts.must)
    whole = models.Filter(must=parts.must or None, must_not=parts.must_not or None)
    return Parts(must_not=[whole])


# (field type or None for "any type", condition) -> how a value becomes conditions.
_CONDITIONS: dict[tuple[FieldType | None, Condition], Callable[[str, Any], Parts]] = {
    (FieldType.TEXT, Condition.EQ): _text,
    (None, Condition.EQ): _equal,
    (None, Condition.ANY): _any,
    (None, Condition.ALL): lambda key, values: Parts(must=[_match(key, v) for v in values]),
    (None, Condition.EXCEPT): _except,
    **{(None, condition): _ranged(bound) for condition, bound in _RANGE_KEYS.items()},
    (None, Condition.SET): _set,
    (FieldType.DAY, Condition.EQ): lambda key, day: Parts(
        must=[_range(key, "gte", day_start(day)), _range(key, "lt", day_end(day))]
    ),
    **{(FieldType.DAY, condition): _day_range(condition) for condition in _RANGES},
}


class FilterableField(BaseModel):
    """A metadata filter exposed as a tool parameter and applied as a native Qdrant condition."""

    name: str = Field(description="Tool parameter name.")
    field_type: FieldType = Field(description="Payload type; decides the index and the condition.")
    condition: Condition = Field(default=Condition.EQ, description="How the value is compared.")
    description: str = Field(description="Shown to the model in the tool's JSON schema.")
    key: str | None = Field(default=None, description="Payload key; defaults to `name`.")
    required: bool = False
    ge: float | None = Field(default=None, description="Smallest accepted value (numbers).")
    le: float | None = Field(default=None, description="Largest accepted value (numbers).")
    choices: tuple[str, ...] | None = Field(default=None, description="Accepted values, if fixed.")
    allow_empty: bool = Field(
        default=False,
        description="Accept '' as an exact keyword value (a PDF page label can be empty).",
    )
    all_flag: str | None = Field(
        default=None,
        description="A boolean parameter of this name, when true, makes the `any` condition "
        "`all` (every value must match).",
    )
    all_flag_description: str = "True: every value must match; false: any of them."
    hides: bool = Field(
        default=False,
        description="The parameter is a boolean `include_...` flag, false unless given: unless "
        "it is true, the points the condition matches (for a range: against the time of the "
        "search) are left out.",
    )

    @model_validator(mode="after")
    def _condition_fits_type(self) -> FilterableField:
        valid = VALID_CONDITIONS[self.field_type]
        if self.condition not in valid:
            raise ValueError(
                f"field '{self.name}': condition '{self.condition.value}' does not apply to "
                f"field_type '{self.field_type.value}'; accepted conditions for it: "
                f"{', '.join(c.value for c in valid)}"
            )
        if self.all_flag and self.condition is not Condition.ANY:
            raise ValueError(f"field '{self.name}': all_flag needs the condition 'any'")
        if self.hides and self.condition not in (Condition.SET, *_RANGES):
            raise ValueError(f"field '{self.name}': hides needs the condition 'set' or a range")
        return self

    @property
    def payload_key(self) -> str:
        return self.key or self.name

    @property
    def is_list(self) -> bool:
        return self.condition in LIST_CONDITIONS

    def parameters(self) -> dict[str, tuple[Any, Any]]:
        """The tool parameters this field adds: name -> (annotation, default)."""
        default = ... if self.required else None
        if self.hides:
            return {self.name: (Annotated[bool, Field(description=self.description)], False)}
        found: dict[str, tuple[Any, Any]] = {self.name: (self.annotation, default)}
        if self.all_flag:
            flag = Annotated[bool, Field(description=self.all_flag_description)]
            found[self.all_flag] = (flag, False)
        return found

    @property
    def annotation(self) -> Any:
        """The parameter's type with its description, as FastMCP turns it into JSON schema."""
        if self.condition is Condition.SET:
            base: Any = bool
            if self.required:
                return Annotated[base, Field(description=self.description)]
            return Annotated[base | None, Field(description=self.description)]
        base = _PYTHON_TYPES[self.field_type]
        if self.allow_empty and self.field_type is FieldType.KEYWORD:
            base = RawName
        if self.choices:
            base = Literal[self.choices]  # type: ignore[valid-type]
        if self.is_list and self.field_type in (FieldType.KEYWORD, FieldType.TEXT):
            base = listed(Annotated[base, AfterValidator(plain_item)])
        elif self.is_list:
            base = listed(base)
        bounds = {"ge": self.ge, "le": self.le}
        constraints = {name: bound for name, bound in bounds.items() if bound is not None}
        if self.required:
            return Annotated[base, Field(description=self.description, **constraints)]
        return Annotated[base | None, Field(description=self.description, **constraints)]

    def given(self, values: Mapping[str, Any], now: float | None = None) -> Parts | None:
        """The conditions for the tool's arguments `values` (None: this field adds none);
        `now` (default: the clock) is what a hiding range compares with."""
        if self.hides:
            if values.get(self.name):
                return None
            moment = time.time() if now is None else now
            return _negated(self.parts(True if self.condition is Condition.SET else moment))
        value = values.get(self.name)
        if value is None:
            return None
        if self.all_flag and values.get(self.all_flag):
            return _CONDITIONS[(None, Condition.ALL)](self.payload_key, value)
        return self.parts(value)

    def parts(self, value: Any) -> Parts:
        """Qdrant conditions for one given value."""
        if self.condition is Condition.NE:
            return _complement(
                self.payload_key, self._handler(Condition.EQ)(self.payload_key, value)
            )
        return self._handler(self.condition)(self.payload_key, value)

    def _handler(self, condition: Condition) -> Callable[[str, Any], Parts]:
        return _CONDITIONS.get((self.field_type, condition)) or _CONDITIONS[(None, condition)]


def build_filter(
    fields: Iterable[FilterableField],
    values: Mapping[str, Any],
    extra: Iterable[models.Condition] = (),
    now: float | None = None,
) -> models.Filter | None:
    """AND of every given field's conditions (a value left out or None adds nothing; a hiding
    field adds its condition unless its flag is true, see `FilterableField.given`)."""
    from qdrant_client import models

    must: list[models.Condition] = list(extra)
    must_not: list[models.Condition] = []
    for field in fields:
        parts = field.given(values, now)
        if parts is None:
            continue
        must += parts.must
        must_not += parts.must_not
    if not must and not must_not:
        return None
    return models.Filter(must=must or None, must_not=must_not or None)


def conditions(part: Any) -> list[Any]:
    """A filter's `must`, `should` or `must_not` as a list (qdrant-client also takes one
    condition alone, or None)."""
    if part is None:
        return []
    return list(part) if isinstance(part, list) else [part]


def narrowed(
    flt: models.Filter | None,
    must: Sequence[models.Condition] = (),
    must_not: Sequence[models.Condition] = (),
) -> models.Filter:
    """`flt` (or None) AND every `must` AND none of `must_not`: a new flat filter, `flt`
    untouched (nested whole when it has a `min_should`, which has no place here)."""
    from qdrant_client import models

    if flt is None or flt.min_should is not None:
        kept = [] if flt is None else [flt]
        return models.Filter(must=kept + list(must) or None, must_not=list(must_not) or None)
    return models.Filter(
        must=conditions(flt.must) + list(must) or None,
        should=flt.should,
        must_not=conditions(flt.must_not) + list(must_not) or None,
    )


def empty_selection(fields: Iterable[FilterableField], values: Mapping[str, Any]) -> str | None:
    """The message for a list parameter given as `[]` (which matches nothing), else None."""
    for field in fields:
        if field.is_list and values.get(field.name) == []:
            return (
                f"'{field.name}' is an empty list, which matches nothing; leave it out to match "
                "every value."
            )
    return None


def index_plan(fields: Iterable[FilterableField]) -> dict[str, str]:
    """Payload key -> index type (`INDEX_SCHEMAS` values) for every field (one index per key)."""
    return {field.payload_key: INDEX_SCHEMAS[field.field_type] for field in fields}
