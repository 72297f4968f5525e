"""The engine seam: every operation `EngineOperations` declares, made by an attached process,
runs in the process that owns the embedded store and answers as it answers there; an error
raised there reaches the caller as its own class with its own message."""

from __future__ import annotations

import functools
import inspect
import json
import os
import socket
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from qdrant_client import models

from scoperag.core.config.settings import Settings
from scoperag.core.engine.edge.errors import MissingIndexError
from scoperag.core.engine.generations import Generations
from scoperag.core.engine.operations import EngineOperations, operations
from scoperag.core.engine.search_request import SearchRequest
from scoperag.core.engine.sharing.channel import owner_status
from scoperag.core.engine.sharing.dispatch import OPERATIONS
from scoperag.core.engine.sharing.owner import RECORD, engine_dir
from scoperag.core.engine.sharing.shared_backend import SharedBackend
from scoperag.core.engine.vector_names import DENSE_VECTOR
from scoperag.core.errors import ConflictError, InvalidParameterError, ScoperagError

WRITER = f"{socket.gethostname()}:{os.getpid()}"
VECTORS = {1: [1.0, 0.0, 0.0], 2: [0.9, 0.1, 0.0], 3: [0.0, 1.0, 0.0]}
IDS = {n: str(uuid.UUID(int=n)) for n in VECTORS}  # the ids scoperag writes are UUIDs
RANKS = {point_id: n for n, point_id in IDS.items()}


def _points() -> list[models.PointStruct]:
    return [
        models.PointStruct(
            id=IDS[n], vector={DENSE_VECTOR: vector}, payload={"doc_id": f"d{n}", "rank": n}
        )
        for n, vector in VECTORS.items()
    ]


@pytest.fixture(params=["edge", "local"])
def engines(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, SharedBackend]]:
    """The process owning a fresh store and one attached to it (in this process: the second
    open finds the store locked and reaches it through the first one's socket)."""
    settings = Settings(data_dir=tmp_path / "data", backend=request.param)
    owner = SharedBackend(settings)
    attached = SharedBackend(settings)
    try:
        assert (owner.role, attached.role) == ("owner", "attached")
        yield {"owner": owner, "attached": attached}
    finally:
        attached.close()
        owner.close()


def _each_operation(backend: SharedBackend, collection: str) -> dict[str, Any]:
    """Every declared operation made once on `backend`, in an order that leaves each one
    something to do; what each gave back (in a form to compare)."""
    flt = models.Filter(must=[models.FieldCondition(key="rank", range=models.Range(gte=2))])
    ordered = models.OrderBy(key="rank", direction=models.Direction.DESC)
    guard = models.Filter(must=[models.HasIdCondition(has_id=list(IDS.values()))])
    seen: dict[str, Any] = {}
    backend.create_collection(collection, 3, {"made_by": "test"})
    seen["create_collection"] = None
    seen["create_index"] = backend.create_index(collection, "rank", "integer")
    seen["create_index"] = backend.create_index(collection, "doc_id", "keyword")
    seen["upsert_points"] = backend.upsert_points(collection, _points()[:2])
    seen["write_if"] = backend.write_if(
        collection, guard, 2, _points()[2:], {IDS[1]: {"seen": True}}
    )
    seen["set_payload"] = backend.set_payload(collection, IDS[2], {"seen": False})
    seen["update_collection_metadata"] = backend.update_collection_metadata(
        collection, {"note": "n"}
    )
    seen["list_collections"] = backend.list_collections()
    seen["collection_exists"] = backend.collection_exists(collection)
    seen["collection_metadata"] = backend.collection_metadata(collection)
    seen["payload_indexes"] = backend.payload_indexes(collection)
    seen["has_keywords"] = backend.has_keywords(collection)
    seen["add_keywords"] = backend.add_keywords(collection)
    seen["count"] = backend.count(collection, flt)
    seen["scroll"] = [
        RANKS[str(r.id)] for r in backend.scroll(collection, flt, 10, order_by=ordered)
    ]
    seen["facet"] = backend.facet(collection, "doc_id", None, 10)
    seen["key_values"] = sorted(backend.key_values(collection, "doc_id"))
    pages = list(backend.points(collection, 2))
    seen["points"] = sorted(RANKS[str(r.id)] for page in pages for r in page)
    records, cursor = backend.points_page(collection, None, 2)
    seen["points_page"] = (sorted(RANKS[str(r.id)] for r in records), cursor is not None)
    found = backend.search(SearchRequest(collection=collection, dense=[1.0, 0.0, 0.0], limit=2))
    seen["search"] = [RANKS[str(hit.id)] for hit in found.hits]
    seen["neighbours"] = [
        sorted(RANKS[str(i)] for i in pair[:2])
        for pair in backend.neighbours(collection, None, 0.9, 2)
    ]
    generations = backend.generations
    generation = generations.begin(collection, ["d9"], WRITER, "g1")
    seen["generations.begin"] = generation
    seen["generations.commit"] = generations.commit(collection, generation, [])
    other = generations.begin(collection, ["d8"], WRITER, "g2")
    seen["generations.abort"] = generations.abort(collection, other)
    seen["generations.recover"] = generations.recover(collection)
    seen["delete"] = backend.delete(
        collection, models.Filter(must=[models.HasIdCondition(has_id=[IDS[3]])])
    )
    seen["count_after_delete"] = backend.count(collection, None)
    if backend.name == "edge":
        seen["accept_loss"] = backend.accept_loss(collection)
    else:
        with pytest.raises(ScoperagError, match="accept_loss is for the edge engine"):
            backend.accept_loss(collection)
        seen["accept_loss"] = "refused"
    seen["delete_collection"] = backend.delete_collection(collection)
    seen["exists_after_delete"] = backend.collection_exists(collection)
    return seen


def test_every_operation_of_the_protocol_is_a_method_with_its_signature() -> None:
    declared = operations(EngineOperations)
    assert {"search", "scroll", "write_if", "accept_loss"} <= declared.keys()
    assert set(OPERATIONS) == declared.keys() | {
        f"generations.{n}" for n in operations(Generations)
    }
    for name in declared:
        method = getattr(SharedBackend, name)
        assert inspect.signature(method) == inspect.signature(getattr(EngineOperations, name))
        assert method.__doc__ == getattr(EngineOperations, name).__doc__
    assert not SharedBackend.__abstractmethods__


def test_every_operation_runs_through_an_attached_engine_as_in_the_owner(
    engines: dict[str, SharedBackend],
) -> None:
    here = _each_operation(engines["owner"], "here")
    settings = engines["owner"].settings
    before = owner_status(json.loads((engine_dir(settings) / RECORD).read_text()))["operations"]
    there = _each_operation(engines["attached"], "there")
    after = owner_status(json.loads((engine_dir(settings) / RECORD).read_text()))["operations"]
    assert here["count"] == 2 and here["scroll"] == [3, 2] and here["search"] == [1, 2]
    assert here["facet"] == {"d1": 1, "d2": 1, "d3": 1} and here["neighbours"] == [[1, 2]]
    assert here["collection_metadata"]["made_by"] == "test" and here["exists_after_delete"] is False
    assert (here.pop("list_collections"), there.pop("list_collections")) == (["here"], ["there"])
    assert there == here
    reached = {op for op in OPERATIONS if after.get(op, 0) > before.get(op, 0)}
    cached = {"collection_exists", "collection_metadata", "has_keywords", "payload_indexes"}
    if settings.effective_backend == "edge":  # read once per version of collection.json
        assert set(OPERATIONS) - reached <= cached
    else:
        assert reached == set(OPERATIONS)


def _raised(call: Callable[[], Any]) -> BaseException:
    with pytest.raises(Exception) as raised:
        call()
    return raised.value


def test_an_error_in_the_owner_keeps_its_class_and_message_through_the_seam(
    engines: dict[str, SharedBackend],
) -> None:
    owner = engines["owner"]
    owner.create_collection("c", 3, {})
    owner.upsert_points("c", _points())
    guard = models.Filter(must=[models.HasIdCondition(has_id=[IDS[1]])])
    calls: list[Callable[[SharedBackend], Any]] = [
        lambda b: b.write_if("c", guard, 5, [], {}),  # ConflictError
        lambda b: b.call("__class__"),  # InvalidParameterError
        lambda b: b.upsert_points(
            "c", [models.PointStruct(id=9, vector={DENSE_VECTOR: [1.0, 0.0]}, payload={})]
        ),
    ]
    if owner.name == "edge":
        ordered = models.OrderBy(key="rank")
        calls.append(lambda b: b.scroll("c", None, 5, order_by=ordered))  # MissingIndexError
    else:
        calls.append(lambda b: b.accept_loss("c"))
    kinds = []
    for call in calls:
        here = _raised(functools.partial(call, owner))
        there = _raised(functools.partial(call, engines["attached"]))
        assert isinstance(here, ScoperagError), repr(here)
        assert type(there) is type(here) and str(there) == str(here)
        kinds.append(type(here))
    assert kinds[:2] == [ConflictError, InvalidParameterError]
    assert kinds[3] is (MissingIndexError if owner.name == "edge" else ScoperagError)
