"""LlamaIndex's `MetadataFilters` as a qdrant-client `Filter`, read as LlamaIndex's Qdrant store
reads them (an `==` on a float is a closed range, `!=` and `nin` are `except` matches)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)
from qdrant_client import models

from scoperag.core.errors import InvalidParameterError


def _equal(key: str, value: Any) -> models.Condition:
    if isinstance(value, float):
        return models.FieldCondition(key=key, range=models.Range(gte=value, lte=value))
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


def _values(operator: FilterOperator, value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise InvalidParameterError(f"filters ({operator.value})", value, "a list of values")
    return value


def _range(bound: str) -> Callable[[str, Any], models.Condition]:
    return lambda key, value: models.FieldCondition(key=key, range=models.Range(**{bound: value}))


def _text(key: str, value: Any) -> models.Condition:
    return models.FieldCondition(key=key, match=models.MatchText(text=value))


_OPERATORS: dict[FilterOperator, Callable[[str, Any], models.Condition]] = {
    FilterOperator.EQ: _equal,
    FilterOperator.NE: lambda key, value: models.FieldCondition(
        key=key, match=models.MatchExcept(**{"except": [value]})
    ),
    FilterOperator.GT: _range("gt"),
    FilterOperator.GTE: _range("gte"),
    FilterOperator.LT: _range("lt"),
    FilterOperator.LTE: _range("lte"),
    FilterOperator.IN: lambda key, value: models.FieldCondition(
        key=key, match=models.MatchAny(any=_values(FilterOperator.IN, value))
    ),
    FilterOperator.NIN: lambda key, value: models.FieldCondition(
        key=key, match=models.MatchExcept(**{"except": _values(FilterOperator.NIN, value)})
    ),
    FilterOperator.TEXT_MATCH: _text,
    FilterOperator.TEXT_MATCH_INSENSITIVE: _text,
    FilterOperator.IS_EMPTY: lambda key, _: models.IsEmptyCondition(
        is_empty=models.PayloadField(key=key)
    ),
}
_PARTS = {
    FilterCondition.AND: "must",
    FilterCondition.OR: "should",
    FilterCondition.NOT: "must_not",
}


def _condition(part: MetadataFilter) -> models.Condition:
    build = _OPERATORS.get(part.operator)
    if build is None:
        accepted = ", ".join(operator.value for operator in _OPERATORS)
        raise InvalidParameterError("filters (operator)", part.operator.value, accepted)
    return build(part.key, part.value)


def to_qdrant_filter(filters: MetadataFilters) -> models.Filter:
    """All (`and`), any (`or`) or none (`not`) of the filters' conditions, nested ones included
    (an empty nested group adds nothing)."""
    conditions = [
        to_qdrant_filter(part) if isinstance(part, MetadataFilters) else _condition(part)
        for part in filters.filters
        if not (isinstance(part, MetadataFilters) and not part.filters)
    ]
    part = _PARTS.get(filters.condition)
    if part is None:
        raise InvalidParameterError(
            "filters (condition)", str(filters.condition), ", ".join(c.value for c in _PARTS)
        )
    return models.Filter(**{part: conditions or None})
