"""Every (field type, condition) pair: valid ones filter exactly on every engine, the others are
refused when declared; `!=` is the exact complement of `==`."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from qdrant_client import models

from scoperag.core.engine.backend import VectorBackend
from scoperag.core.engine.client.backend import QdrantClientBackend
from scoperag.core.engine.edge.backend import EdgeBackend
from scoperag.core.engine.vector_names import DENSE_VECTOR
from scoperag.core.filters.fields import (
    LIST_CONDITIONS,
    VALID_CONDITIONS,
    Condition,
    FieldType,
    FilterableField,
    build_filter,
    index_plan,
)

COLLECTION = "conditions"
T0, T1, T2 = (datetime(2025, m, 1, tzinfo=UTC) for m in (1, 6, 9))
DAY = timedelta(days=1)
# key -> (field type, the values points 0..4 carry; None = the point has no such key)
COLUMNS: dict[str, tuple[FieldType, list[Any]]] = {
    "kw": (FieldType.KEYWORD, ["a", "b", "a", None, "c"]),
    "n": (FieldType.INTEGER, [1, 2, 3, None, -5]),
    "f": (FieldType.FLOAT, [0.5, 1.5, 0.5, None, -2.0]),
    "b": (FieldType.BOOLEAN, [True, False, True, None, False]),
    "dt": (FieldType.DATETIME, [T0, T1, T0, None, T2]),
    "tx": (FieldType.TEXT, ["red fox", "blue fox", "red hen", None, "green"]),
    # Unix seconds: the midnight starting 1 June, a moment later that day, 31 May, 2 June
    "dy": (
        FieldType.DAY,
        [
            T1.timestamp(),
            T1.timestamp() + 3600,
            (T1 - DAY).timestamp(),
            None,
            (T1 + DAY).timestamp(),
        ],
    ),
}
KEY_OF = {field_type: key for key, (field_type, _) in COLUMNS.items()}
PROBE: dict[FieldType, Any] = {
    FieldType.KEYWORD: "a",
    FieldType.INTEGER: 2,
    FieldType.FLOAT: 0.5,
    FieldType.BOOLEAN: True,
    FieldType.DATETIME: T1,
    FieldType.TEXT: "fox",
    FieldType.DAY: T1.date(),
}
PROBES: dict[FieldType, list[Any]] = {FieldType.KEYWORD: ["a", "c"], FieldType.INTEGER: [1, -5]}


def _stored(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def _matches(field_type: FieldType, condition: Condition, stored: Any, value: Any) -> bool:
    """The oracle: what the condition means, on one point's value."""
    if stored is None:
        return False
    if condition is Condition.SET:  # the key holds a value: not absent, null or []
        return stored != []
    if field_type is FieldType.DAY:  # a whole UTC day: [its midnight, the next midnight)
        start = datetime.combine(value, datetime.min.time(), UTC).timestamp()
        end = start + DAY.total_seconds()
        return {
            Condition.EQ: start <= stored < end,
            Condition.GT: stored >= end,
            Condition.GTE: stored >= start,
            Condition.LT: stored < start,
            Condition.LTE: stored < end,
        }[condition]
    if condition is Condition.EQ:
        return value in stored.split() if field_type is FieldType.TEXT else stored == value
    if condition is Condition.NE:
        return not _matches(field_type, Condition.EQ, stored, value)
    if condition in LIST_CONDITIONS:
        hits = [stored == item for item in value]
        return {Condition.ANY: any, Condition.ALL: all}.get(condition, lambda h: not any(h))(hits)
    compare = {
        Condition.GT: stored > value,
        Condition.GTE: stored >= value,
        Condition.LT: stored < value,
        Condition.LTE: stored <= value,
    }
    return compare[condition]


def _fill(backend: VectorBackend) -> None:
    backend.create_collection(COLLECTION, 4, {"made_by": "test"})
    fields = [
        FilterableField(name=key, field_type=field_type, description="d")
        for key, (field_type, _) in COLUMNS.items()
    ]
    for key, schema in index_plan(fields).items():
        backend.create_index(COLLECTION, key, schema)
    points = []
    for n in range(5):
        payload = {key: _stored(values[n]) for key, (_, values) in COLUMNS.items()}
        payload = {key: value for key, value in payload.items() if value is not None}
        vector = [1.0, float(n), 0.5, 0.25]
        points.append(models.PointStruct(id=n, vector={DENSE_VECTOR: vector}, payload=payload))
    backend.upsert_points(COLLECTION, points)


@pytest.fixture(scope="module", params=["local", "edge"])
def backend(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    root: Path = tmp_path_factory.mktemp(request.param)
    opened = QdrantClientBackend.local(root) if request.param == "local" else EdgeBackend.open(root)
    _fill(opened)
    yield opened
    opened.close()


VALID = [(t, c) for t in FieldType for c in VALID_CONDITIONS[t]]
INVALID = [(t, c) for t, c in itertools.product(FieldType, Condition) if (t, c) not in VALID]


def test_every_pair_is_either_valid_or_refused() -> None:
    assert len(VALID) + len(INVALID) == len(FieldType) * len(Condition)
    assert len(INVALID) >= 18


@pytest.mark.parametrize(("field_type", "condition"), INVALID)
def test_an_invalid_pair_fails_when_declared(field_type: FieldType, condition: Condition) -> None:
    """Defect: 18 pairs were accepted and built invalid Qdrant models at call time."""
    with pytest.raises(ValidationError) as caught:
        FilterableField(name="x", field_type=field_type, condition=condition, description="d")
    message = str(caught.value)
    assert f"'{condition.value}'" in message and f"'{field_type.value}'" in message
    for accepted in VALID_CONDITIONS[field_type]:
        assert accepted.value in message


@pytest.mark.parametrize(("field_type", "condition"), VALID)
def test_a_valid_pair_filters_exactly(
    backend: VectorBackend, field_type: FieldType, condition: Condition
) -> None:
    key = KEY_OF[field_type]
    value = PROBES[field_type] if condition in LIST_CONDITIONS else PROBE[field_type]
    field = FilterableField(name=key, field_type=field_type, condition=condition, description="d")
    flt = build_filter([field], {key: value})
    expected = sum(_matches(field_type, condition, stored, value) for stored in COLUMNS[key][1])
    assert backend.count(COLLECTION, flt) == expected


@pytest.mark.parametrize(
    "field_type", [t for t in FieldType if Condition.NE in VALID_CONDITIONS[t]]
)
def test_not_equal_is_the_complement_of_equal(
    backend: VectorBackend, field_type: FieldType
) -> None:
    """Defect: float and datetime `!=` matched nothing; text `!=` negated an exact match while
    text `==` is a token match."""
    key = KEY_OF[field_type]
    counts = []
    for condition in (Condition.EQ, Condition.NE):
        field = FilterableField(
            name=key, field_type=field_type, condition=condition, description="d"
        )
        counts.append(backend.count(COLLECTION, build_filter([field], {key: PROBE[field_type]})))
    with_key = sum(value is not None for value in COLUMNS[key][1])
    assert counts[0] > 0 and counts[1] > 0
    assert sum(counts) == with_key


@pytest.mark.parametrize(
    ("condition", "instant"),
    [
        (Condition.GT, datetime(1, 1, 1, tzinfo=UTC)),
        (Condition.GTE, datetime(1, 1, 1, 5, tzinfo=timezone(timedelta(hours=5)))),
        (Condition.LT, datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)),
        (Condition.LTE, datetime(9999, 12, 31, 20, tzinfo=timezone(timedelta(hours=-5)))),
    ],
)
def test_the_extreme_instants_python_holds_are_bounds_every_engine_honours(
    backend: VectorBackend, condition: Condition, instant: datetime
) -> None:
    """Dates at the ends of Python's range (some beyond it in UTC) filter, never crash."""
    field = FilterableField(
        name="dt", field_type=FieldType.DATETIME, condition=condition, description="d"
    )
    with_key = sum(value is not None for value in COLUMNS["dt"][1])
    assert backend.count(COLLECTION, build_filter([field], {"dt": instant})) == with_key
