"""`VectorBackend.key_values`: every value of an indexed key, never older than the last write.

Name lookups (dnd) match the query against this list and count only the candidates under the
caller's filter, so a list kept from before a write would hide what was just stored.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from qdrant_client import models

from scoperag.core.engine.backend import VectorBackend
from scoperag.core.engine.client.backend import QdrantClientBackend
from scoperag.core.engine.edge.backend import EdgeBackend
from scoperag.core.engine.key_values import KeyValues

if TYPE_CHECKING:
    from conftest import Worker

DIM = 4


def _point(n: int, name: str) -> models.PointStruct:
    vector = [1.0, float(n), 0.5, 0.25]
    return models.PointStruct(id=n, vector={"text-dense": vector}, payload={"name": name})


@pytest.fixture(params=["edge", "local"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorBackend]:
    if request.param == "edge":
        opened: VectorBackend = EdgeBackend.open(tmp_path / "edge")
    else:
        opened = QdrantClientBackend.local(tmp_path / "local")
    opened.create_collection("c", DIM, {})
    opened.create_index("c", "name", models.PayloadSchemaType.KEYWORD)
    yield opened
    opened.close()


def test_every_write_shows_in_the_next_list(backend: VectorBackend) -> None:
    """Regression: a kept list must not hide a value written after it was read."""
    backend.upsert_points("c", [_point(1, "Fireball"), _point(2, "Shield")])
    assert sorted(backend.key_values("c", "name")) == ["Fireball", "Shield"]
    backend.upsert_points("c", [_point(3, "Wish")])
    assert sorted(backend.key_values("c", "name")) == ["Fireball", "Shield", "Wish"]
    backend.set_payload("c", 1, {"name": "Fire Bolt"})
    assert "Fire Bolt" in backend.key_values("c", "name")


def test_a_list_read_during_a_write_is_not_kept(worker: type[Worker]) -> None:
    """Regression: a read that overlaps a write returns its list but never keeps it."""
    values = KeyValues()
    reads = []

    def read() -> list[str]:
        reads.append(1)
        return [f"read {len(reads)}"]

    writing, done = threading.Event(), threading.Event()

    def write() -> None:
        with values.writing():
            writing.set()
            done.wait(5)

    writer = worker(target=write)
    writer.start()
    writing.wait(5)
    assert values.get("name", read) == ["read 1"]
    done.set()
    writer.join(60)
    assert values.get("name", read) == ["read 2"]
    assert values.get("name", read) == ["read 2"]  # kept now: no write since


def test_a_search_plan_counts_a_broad_filter_once_per_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broad filter's exact count (the search plan's recall guard) cost 8-12 ms per
    query at 100k; it is kept between writes, and a write makes the next plan count again."""
    from scoperag.core.engine.edge import collection as edge_collection

    monkeypatch.setattr(edge_collection, "EXACT_BELOW", 1)  # every filter here is "broad"
    backend = EdgeBackend.open(tmp_path / "edge")
    backend.create_collection("c", DIM, {})
    backend.create_index("c", "name", models.PayloadSchemaType.KEYWORD)
    backend.upsert_points("c", [_point(n, "Fireball") for n in range(1, 4)])
    store = backend.edge_collection("c")
    counted: list[int] = []
    real_count = store.count_edge

    def count_edge(edge_filter: object) -> int:
        counted.append(real_count(edge_filter))
        return counted[-1]

    monkeypatch.setattr(type(store), "count_edge", lambda self, f: count_edge(f))
    flt = store.visible(
        models.Filter(
            must=[models.FieldCondition(key="name", match=models.MatchValue(value="Fireball"))]
        )
    )
    store.plan_search(flt, 10)
    store.plan_search(flt, 10)
    assert counted == [3]
    backend.upsert_points("c", [_point(4, "Fireball")])
    store.plan_search(flt, 10)
    assert counted == [3, 4]
    backend.close()
