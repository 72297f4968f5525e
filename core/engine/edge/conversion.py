"""qdrant-client's filters, orders, vectors and records <-> Qdrant Edge's types, in one place.

scoperag builds every filter, order and point in `qdrant_client.models`; each class is
translated by a table keyed by that class (qdrant-edge-py has classes of the same shape). Two
quirks of qdrant-edge-py 0.9 are handled here: a Python `bool` given to
Edge's `MatchValue` turns into the integer 1 and so matches nothing on a boolean field
(`numpy.bool_` keeps it a boolean; numpy is imported for such a value only, 0.1 s a first
search otherwise waits for), and datetimes travel as ISO strings (a naive datetime means UTC, as
on the server and in local mode).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, time
from typing import Any

import qdrant_edge as edge
from qdrant_client import models

from scoperag.core.errors import ScoperagError
from scoperag.core.filters.fields import conditions


class UnsupportedFilterError(ScoperagError):
    """A filter part the Edge engine cannot evaluate."""

    def __init__(self, part: object) -> None:
        super().__init__(
            f"The edge engine cannot evaluate this filter part: {part!r}. Supported: match "
            "(value, any, except, text, text_any, phrase, prefix, substring), range, datetime "
            "range, values_count, is_empty, is_null, has_id, has_vector, nested, must/should/"
            "must_not/min_should. Use SCOPERAG_BACKEND=local or a Qdrant server for the rest."
        )


def _value(value: Any) -> Any:
    if not isinstance(value, bool):
        return value
    import numpy

    return numpy.bool_(value)


def plain_id(point_id: Any) -> int | str:
    """A point id as qdrant-client spells it: an integer, or a UUID as a string."""
    return point_id if isinstance(point_id, int) else str(point_id)


def to_record(point: Any) -> models.Record:
    """An Edge point or record as a `Record` (qdrant-client's shape)."""
    return models.Record(
        id=plain_id(point.id),
        payload=point.payload,
        vector=to_plain_vectors(point.vector),
        order_value=point.order_value,
    )


def to_edge_vectors(vector: Any) -> Any:
    """Vectors in qdrant-client's shape (dense lists, `SparseVector`s) as Edge takes them."""
    if isinstance(vector, dict):
        return {name: to_edge_vectors(value) for name, value in vector.items()}
    if isinstance(vector, models.SparseVector):
        return edge.SparseVector(indices=vector.indices, values=vector.values)
    return vector


def to_plain_vectors(vector: Any) -> Any:
    """Edge vectors as qdrant-client spells them (sparse ones as `SparseVector`s)."""
    if isinstance(vector, dict):
        return {name: to_plain_vectors(value) for name, value in vector.items()}
    if isinstance(vector, edge.SparseVector):
        return models.SparseVector(indices=list(vector.indices), values=list(vector.values))
    return vector


def _instant(value: datetime | date | None) -> str | None:
    if value is None:
        return None
    if not isinstance(value, datetime):
        value = datetime.combine(value, time.min)
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.isoformat()


_MATCHES: dict[type, Callable[[Any], Any]] = {
    models.MatchValue: lambda m: edge.MatchValue(_value(m.value)),
    models.MatchAny: lambda m: edge.MatchAny(list(m.any)),
    models.MatchExcept: lambda m: edge.MatchExcept(list(m.except_)),
    models.MatchText: lambda m: edge.MatchText(m.text),
    models.MatchTextAny: lambda m: edge.MatchTextAny(m.text_any),
    models.MatchPhrase: lambda m: edge.MatchPhrase(m.phrase),
    models.MatchPrefix: lambda m: edge.MatchPrefix(m.prefix),
    models.MatchSubstring: lambda m: edge.MatchSubstring(m.substring),
}

_RANGES: dict[type, Callable[[Any], Any]] = {
    models.Range: lambda r: edge.RangeFloat(gte=r.gte, gt=r.gt, lte=r.lte, lt=r.lt),
    models.DatetimeRange: lambda r: edge.RangeDateTime(
        gte=_instant(r.gte), gt=_instant(r.gt), lte=_instant(r.lte), lt=_instant(r.lt)
    ),
}


def _convert(table: dict[type, Callable[[Any], Any]], part: Any) -> Any:
    if part is None:
        return None
    convert = table.get(type(part))
    if convert is None:
        raise UnsupportedFilterError(part)
    return convert(part)


def _field(condition: models.FieldCondition) -> edge.FieldCondition:
    if condition.geo_bounding_box or condition.geo_radius or condition.geo_polygon:
        raise UnsupportedFilterError(condition)
    count = condition.values_count
    return edge.FieldCondition(
        condition.key,
        match=_convert(_MATCHES, condition.match),
        range=_convert(_RANGES, condition.range),
        values_count=(
            edge.ValuesCount(lt=count.lt, gt=count.gt, lte=count.lte, gte=count.gte)
            if count
            else None
        ),
        is_empty=condition.is_empty,
        is_null=condition.is_null,
    )


_CONDITIONS: dict[type, Callable[[Any], Any]] = {
    models.FieldCondition: _field,
    models.IsEmptyCondition: lambda c: edge.IsEmptyCondition(c.is_empty.key),
    models.IsNullCondition: lambda c: edge.IsNullCondition(c.is_null.key),
    models.HasIdCondition: lambda c: edge.HasIdCondition({plain_id(i) for i in c.has_id}),
    models.HasVectorCondition: lambda c: edge.HasVectorCondition(c.has_vector),
    models.NestedCondition: lambda c: edge.NestedCondition(
        c.nested.key, to_edge_filter(c.nested.filter)
    ),
    models.Filter: lambda f: to_edge_filter(f),
}


def _conditions(parts: Any) -> list[Any] | None:
    if parts is None:
        return None
    return [_convert(_CONDITIONS, condition) for condition in conditions(parts)]


def to_edge_filter(flt: models.Filter | None) -> edge.Filter | None:
    """The same filter in Edge's types (None stays None)."""
    if flt is None:
        return None
    if not isinstance(flt, models.Filter):
        raise UnsupportedFilterError(flt)
    min_should = flt.min_should
    return edge.Filter(
        must=_conditions(flt.must),
        should=_conditions(flt.should),
        must_not=_conditions(flt.must_not),
        min_should=(
            edge.MinShould(_conditions(min_should.conditions), min_should.min_count)
            if min_should
            else None
        ),
    )


def to_edge_order_by(order_by: models.OrderBy) -> edge.OrderBy:
    """An order_by (key, direction, start_from) in Edge's types."""
    start = order_by.start_from
    if isinstance(start, date):
        start = _instant(start)
    descending = order_by.direction == models.Direction.DESC
    return edge.OrderBy(
        order_by.key, edge.Direction.Desc if descending else edge.Direction.Asc, start
    )
