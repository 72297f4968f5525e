"""Edge filter translation: every condition kind, given in qdrant-client's models, selects the
same points on Edge as in local mode.

The same 60 points (small random vectors, payloads built to hit the edge cases: missing keys, nulls,
lists, booleans, time zones) are written to both engines; each filter is counted, scrolled, ordered
and faceted on both, and the answers must be identical.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from qdrant_client import models

from scoperag.core.engine.backend import VectorBackend
from scoperag.core.engine.client.backend import QdrantClientBackend
from scoperag.core.engine.edge.backend import EdgeBackend
from scoperag.core.engine.edge.conversion import UnsupportedFilterError, to_edge_filter
from scoperag.core.engine.vector_names import DENSE_VECTOR

COLLECTION = "conformance"
INDEXES = {
    "kind": models.PayloadSchemaType.KEYWORD,
    "tags": models.PayloadSchemaType.KEYWORD,
    "n": models.PayloadSchemaType.INTEGER,
    "score": models.PayloadSchemaType.FLOAT,
    "flag": models.PayloadSchemaType.BOOL,
    "at": models.PayloadSchemaType.DATETIME,
    "body": models.PayloadSchemaType.TEXT,
}
T0 = datetime(2025, 3, 1, tzinfo=UTC)


def _id(n: int) -> str:
    return str(uuid.UUID(int=n + 1))


def _payload(n: int, rng: random.Random) -> dict[str, object]:
    payload: dict[str, object] = {
        "kind": ["spell", "creature", "item", "rule"][n % 4],
        "n": n,
        "score": round(n * 0.25, 2),
        "flag": n % 3 == 0,
        # every instant written with an offset other than UTC for a third of the points
        "at": (T0 + timedelta(hours=7 * n))
        .astimezone(timezone(timedelta(hours=2 * (n % 3))))
        .isoformat(),
        "body": rng.choice(["Fire bolt hits", "The fire burns", "Cold ray", "Bolt of cold fire"]),
        "nested": {"level": n % 5},
        "items": [{"name": "a", "qty": n % 4}, {"name": "b", "qty": n % 2}],
    }
    if n % 5:
        payload["tags"] = rng.sample(["red", "blue", "green", "gold"], k=1 + n % 3)
    if n % 7 == 0:
        payload["maybe"] = None
    elif n % 7 == 1:
        payload["maybe"] = []
    elif n % 7 == 2:
        payload["maybe"] = "here"
    return payload


def _fill(backend: VectorBackend) -> None:
    rng = random.Random(11)
    backend.create_collection(COLLECTION, 4, {"made_by": "test"})
    for key, schema in INDEXES.items():
        backend.create_index(COLLECTION, key, schema)
    points = [
        models.PointStruct(
            id=_id(n),
            vector={DENSE_VECTOR: [rng.uniform(-1, 1) for _ in range(4)]},
            payload=_payload(n, random.Random(n)),
        )
        for n in range(60)
    ]
    backend.upsert_points(COLLECTION, points)


@pytest.fixture(scope="module")
def engines(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, VectorBackend]]:
    root: Path = tmp_path_factory.mktemp("engines")
    opened = {
        "local": QdrantClientBackend.local(root / "local"),
        "edge": EdgeBackend.open(root / "edge"),
    }
    for backend in opened.values():
        _fill(backend)
    yield opened
    for backend in opened.values():
        backend.close()


def field(key: str, **condition: object) -> models.FieldCondition:
    return models.FieldCondition(key=key, **condition)


FILTERS: dict[str, models.Filter] = {
    "keyword": models.Filter(must=[field("kind", match=models.MatchValue(value="spell"))]),
    "integer": models.Filter(must=[field("n", match=models.MatchValue(value=7))]),
    "boolean true": models.Filter(must=[field("flag", match=models.MatchValue(value=True))]),
    "boolean false": models.Filter(must=[field("flag", match=models.MatchValue(value=False))]),
    "any": models.Filter(must=[field("tags", match=models.MatchAny(any=["red", "gold"]))]),
    "all (two matches)": models.Filter(
        must=[
            field("tags", match=models.MatchValue(value="red")),
            field("tags", match=models.MatchValue(value="blue")),
        ]
    ),
    "except on a list, missing keys": models.Filter(
        must=[field("tags", match=models.MatchExcept(**{"except": ["red"]}))]
    ),
    "except on a value": models.Filter(
        must=[field("kind", match=models.MatchExcept(**{"except": ["spell", "rule"]}))]
    ),
    "not equal": models.Filter(must_not=[field("kind", match=models.MatchValue(value="item"))]),
    "integer range": models.Filter(must=[field("n", range=models.Range(gte=10, lt=25))]),
    "float range": models.Filter(must=[field("score", range=models.Range(gt=2.5, lte=9.75))]),
    "float equal": models.Filter(must=[field("score", range=models.Range(gte=2.75, lte=2.75))]),
    "datetime range, mixed offsets": models.Filter(
        must=[
            field(
                "at",
                range=models.DatetimeRange(
                    gt=T0 + timedelta(hours=70),
                    lte=(T0 + timedelta(hours=210)).astimezone(timezone(timedelta(hours=-5))),
                ),
            )
        ]
    ),
    "datetime, naive bound is UTC": models.Filter(
        must=[field("at", range=models.DatetimeRange(gte=datetime(2025, 3, 5, 4, 0)))]
    ),
    "date bound": models.Filter(
        must=[field("at", range=models.DatetimeRange(lt=date(2025, 3, 8)))]
    ),
    "text": models.Filter(must=[field("body", match=models.MatchText(text="fire bolt"))]),
    "text any": models.Filter(
        must=[field("body", match=models.MatchTextAny(text_any="ray burns"))]
    ),
    "is empty": models.Filter(
        must=[models.IsEmptyCondition(is_empty=models.PayloadField(key="maybe"))]
    ),
    "is null": models.Filter(
        must=[models.IsNullCondition(is_null=models.PayloadField(key="maybe"))]
    ),
    "has id": models.Filter(must=[models.HasIdCondition(has_id=[_id(3), _id(4), _id(59)])]),
    "not has id": models.Filter(must_not=[models.HasIdCondition(has_id=[_id(0), _id(1)])]),
    "values count": models.Filter(must=[field("tags", values_count=models.ValuesCount(gte=2))]),
    "nested key": models.Filter(must=[field("nested.level", match=models.MatchValue(value=3))]),
    "nested objects": models.Filter(
        must=[
            models.NestedCondition(
                nested=models.Nested(
                    key="items",
                    filter=models.Filter(
                        must=[
                            field("name", match=models.MatchValue(value="a")),
                            field("qty", match=models.MatchValue(value=1)),
                        ]
                    ),
                )
            )
        ]
    ),
    "should": models.Filter(
        should=[
            field("kind", match=models.MatchValue(value="rule")),
            field("n", range=models.Range(lt=5)),
        ]
    ),
    "min should": models.Filter(
        min_should=models.MinShould(
            conditions=[
                field("kind", match=models.MatchValue(value="spell")),
                field("flag", match=models.MatchValue(value=True)),
                field("tags", match=models.MatchAny(any=["green"])),
            ],
            min_count=2,
        )
    ),
    "nested filters": models.Filter(
        must=[
            models.Filter(
                should=[
                    field("kind", match=models.MatchValue(value="spell")),
                    field("kind", match=models.MatchValue(value="item")),
                ]
            ),
            models.Filter(must_not=[field("flag", match=models.MatchValue(value=True))]),
        ]
    ),
    "single condition, not a list": models.Filter(
        must=field("kind", match=models.MatchValue(value="creature"))
    ),
}


def _ids(records: list[models.Record]) -> list[str]:
    return [str(record.id) for record in records]


@pytest.mark.parametrize("name", list(FILTERS))
def test_same_points_as_local_mode(engines: dict[str, VectorBackend], name: str) -> None:
    flt = FILTERS[name]
    local, edge = engines["local"], engines["edge"]
    expected = sorted(_ids(local.scroll(COLLECTION, flt, limit=100)))
    assert expected, f"filter '{name}' should select some points"
    assert len(expected) < 60 or name == "not has id", f"filter '{name}' selects everything"
    assert sorted(_ids(edge.scroll(COLLECTION, flt, limit=100))) == expected
    assert edge.count(COLLECTION, flt) == local.count(COLLECTION, flt) == len(expected)


@pytest.mark.parametrize(
    ("key", "direction"), [("at", models.Direction.DESC), ("n", models.Direction.ASC)]
)
def test_order_by_and_offset_match(
    engines: dict[str, VectorBackend], key: str, direction: models.Direction
) -> None:
    flt = FILTERS["except on a value"]
    order = models.OrderBy(key=key, direction=direction)
    pages = {
        name: _ids(backend.scroll(COLLECTION, flt, limit=7, offset=5, order_by=order))
        for name, backend in engines.items()
    }
    assert len(pages["local"]) == 7
    assert pages["edge"] == pages["local"]


def test_facets_match(engines: dict[str, VectorBackend]) -> None:
    flt = FILTERS["integer range"]
    for key in ("kind", "tags", "flag"):
        assert engines["edge"].facet(COLLECTION, key, flt, 10) == engines["local"].facet(
            COLLECTION, key, flt, 10
        )


def test_delete_by_filter_matches(engines: dict[str, VectorBackend]) -> None:
    gone = models.Filter(must=[field("n", range=models.Range(gte=55))])
    for backend in engines.values():
        backend.delete(COLLECTION, gone)
    assert engines["edge"].count(COLLECTION, None) == engines["local"].count(COLLECTION, None) == 55


def test_geo_conditions_are_refused_with_the_reason() -> None:
    flt = models.Filter(
        must=[
            field(
                "where",
                geo_radius=models.GeoRadius(center=models.GeoPoint(lon=0.0, lat=0.0), radius=10.0),
            )
        ]
    )
    with pytest.raises(UnsupportedFilterError, match="cannot evaluate.*geo_radius"):
        to_edge_filter(flt)


def test_a_filter_that_is_not_qdrant_clients_is_refused_with_the_reason() -> None:
    with pytest.raises(UnsupportedFilterError, match="cannot evaluate.*must"):
        to_edge_filter({"must": [{"key": "kind", "match": {"value": "spell"}}]})
