"""Qdrant's filters, orders and points in qdrant-client's names and shapes, without qdrant-client.

scoperag's searches build their filters and read their hits with these: importing
qdrant-client takes 1.1-1.5 s, most of a freshly started server's first answer, and the
embedded engine (Qdrant Edge) has no use for it. Each class has the name and the fields of its
`qdrant_client.models` namesake, so the Edge translation (`core.edge_filters`) takes either,
and `to_client` turns these into qdrant-client's models for local mode and a Qdrant server. A
filter built from `qdrant_client.models` (a notebook's, say) works on every engine too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from enum import StrEnum
from typing import Any

_model = dataclasses.dataclass(slots=True, kw_only=True)


class Direction(StrEnum):
    ASC = "asc"
    DESC = "desc"


@_model
class PayloadField:
    key: str


@_model
class MatchValue:
    value: Any


@_model
class MatchAny:
    any: list[Any]


@_model
class MatchExcept:
    except_: list[Any]  # qdrant-client's alias: "except"


@_model
class MatchText:
    text: str


@_model
class MatchPhrase:
    phrase: str


@_model
class Range:
    gt: float | None = None
    gte: float | None = None
    lt: float | None = None
    lte: float | None = None


@_model
class DatetimeRange:
    gt: Any = None
    gte: Any = None
    lt: Any = None
    lte: Any = None


@_model
class FieldCondition:
    key: str
    match: MatchValue | MatchAny | MatchExcept | MatchText | MatchPhrase | None = None
    range: Range | DatetimeRange | None = None


@_model
class IsEmptyCondition:
    is_empty: PayloadField


@_model
class HasIdCondition:
    has_id: list[int | str]


@_model
class Filter:
    must: list[Any] | None = None
    should: list[Any] | None = None
    must_not: list[Any] | None = None


Condition = FieldCondition | IsEmptyCondition | HasIdCondition | Filter


@_model
class OrderBy:
    key: str
    direction: Direction | None = None
    start_from: Any = None


@_model
class SparseVector:
    indices: list[int]
    values: list[float]


@_model
class PointStruct:
    id: int | str
    vector: Any
    payload: dict[str, Any] | None = None


@_model
class Record:
    id: int | str
    payload: dict[str, Any] | None = None
    vector: Any = None
    order_value: Any = None


@_model
class ScoredPoint:
    id: int | str
    score: float
    version: int = 0
    payload: dict[str, Any] | None = None
    vector: Any = None
    order_value: Any = None


def conditions(part: Any) -> list[Any]:
    """A filter's `must`, `should` or `must_not` as a list (qdrant-client also takes one
    condition alone, or None)."""
    if part is None:
        return []
    return list(part) if isinstance(part, list) else [part]


def narrowed(flt: Any, must: Sequence[Any] = (), must_not: Sequence[Any] = ()) -> Filter:
    """`flt` (either vocabulary, or None) AND every `must` AND none of `must_not`: a new flat
    filter, `flt` untouched (nested whole when it has a `min_should`, which has no place here)."""
    if flt is None or getattr(flt, "min_should", None) is not None:
        kept = [] if flt is None else [flt]
        return Filter(must=kept + list(must) or None, must_not=list(must_not) or None)
    return Filter(
        must=conditions(flt.must) + list(must) or None,
        should=flt.should,
        must_not=conditions(flt.must_not) + list(must_not) or None,
    )


def to_client(value: Any) -> Any:
    """`value` with every part of this module replaced by its `qdrant_client.models` namesake,
    inside lists and dicts too (local mode and a Qdrant server take only those); anything else
    comes back as it is."""
    if isinstance(value, list):
        return [to_client(item) for item in value]
    if isinstance(value, dict):
        return {key: to_client(item) for key, item in value.items()}
    if type(value).__module__ != __name__:
        return value
    from qdrant_client import models

    if isinstance(value, Direction):
        return models.Direction(value.value)
    fields = {
        field.name.rstrip("_"): to_client(getattr(value, field.name))
        for field in dataclasses.fields(value)
    }
    return getattr(models, type(value).__name__)(**fields)
