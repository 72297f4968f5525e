"""What crosses between a store's owner and the processes attached to it keeps its types."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta, timezone

import pytest
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores.types import (
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryResult,
)
from qdrant_client import models

from scoperag.core.edge_errors import MissingIndexError
from scoperag.core.engine_codec import decode, decode_error, encode, encode_error
from scoperag.core.errors import InvalidParameterError, ScoperagError


def _round_trip(value: object) -> object:
    return decode(json.loads(json.dumps(encode(value))))


def test_engine_arguments_and_results_come_back_equal() -> None:
    node = TextNode(
        id_="n1",
        text="Page seven.",
        metadata={"document_id": "manual", "physical_page_index": 7},
        embedding=[0.1, 0.2],
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id="manual")},
    )
    flt = models.Filter(
        must=[models.FieldCondition(key="page", range=models.Range(gte=3))],
        must_not=[models.HasIdCondition(has_id=["a", 5])],
    )
    query = VectorStoreQuery(
        query_embedding=[0.5, 0.5],
        similarity_top_k=3,
        filters=MetadataFilters(
            filters=[MetadataFilter(key="tag", value=["x"], operator=FilterOperator.IN)]
        ),
    )
    result = VectorStoreQueryResult(nodes=[node], similarities=[0.9], ids=["n1"])
    facets = {"ops": 3, 7: 2, True: 1}
    for value in (node, flt, query, facets, {"qdrant_filters": flt}):
        assert _round_trip(value) == value
    assert _round_trip(("c", [flt])) == ["c", [flt]]  # positional arguments travel as a list
    back = _round_trip(result)
    assert isinstance(back, VectorStoreQueryResult) and back.ids == ["n1"]
    assert isinstance(back.nodes[0], TextNode) and back.nodes[0].ref_doc_id == "manual"
    assert back.nodes[0].embedding == [0.1, 0.2] and back.similarities == [0.9]
    records = [models.Record(id=1, payload={"k": [1, "a"]}, vector={"text-dense": [0.1]})]
    assert _round_trip(iter(records)) == records  # an iterator (e.g. `points`) is read whole


def test_filters_orders_and_hits_come_back_equal() -> None:
    """The datetimes inside a range keep their time zone (or lack of one); a date comes back
    as its midnight, the same bound on every engine."""
    midnight = datetime(2025, 3, 1)
    instants = {
        datetime(2025, 3, 1, 12, 30, tzinfo=timezone(timedelta(hours=-5))): None,
        datetime(2025, 3, 1, 12, 30): None,
        date(2025, 3, 1): midnight,
    }
    for instant, expected in instants.items():
        flt = models.Filter(
            must=[models.FieldCondition(key="at", range=models.DatetimeRange(gte=instant))],
            must_not=[models.IsEmptyCondition(is_empty=models.PayloadField(key="at"))],
        )
        back = _round_trip(flt)
        bound = back.must[0].range.gte
        assert bound.isoformat() == (expected or instant).isoformat()
        assert back.must_not == flt.must_not
    order = models.OrderBy(key="at", direction=models.Direction.DESC, start_from=midnight)
    assert _round_trip(order) == order
    hits = [
        models.ScoredPoint(id="a", version=0, score=0.5, payload={"k": 1}),
        models.Record(id=2, payload=None),
    ]
    assert _round_trip(hits) == hits


def test_errors_come_back_as_the_same_class_and_message() -> None:
    for error in (
        InvalidParameterError("limit", 0, "1-100"),
        MissingIndexError("c", "chapter", "order_by"),
        ScoperagError("Collection 'x' does not exist."),
        ValueError("EdgeVectorStore needs a query embedding."),
    ):
        back = decode_error(encode_error(error))
        assert type(back) is type(error) and str(back) == str(error)
    with pytest.raises(ScoperagError, match="Collection 'x'"):
        raise decode_error(encode_error(ScoperagError("Collection 'x' does not exist.")))


def test_only_engine_types_are_rebuilt() -> None:
    """A forged message cannot make the receiving process import or call anything else."""
    with pytest.raises(ScoperagError, match="not an engine type"):
        decode({"__model__": "os:system", "data": "echo hacked"})
    with pytest.raises(ScoperagError, match="Unexpected data"):
        decode({"command": "rm -rf /"})
    unknown = decode_error(json.dumps({"error": "subprocess:CalledProcessError", "message": "x"}))
    assert type(unknown) is RuntimeError and "subprocess:CalledProcessError" in str(unknown)
    with pytest.raises(ScoperagError, match="Cannot send"):
        encode(object())


def test_the_operation_table_covers_the_backend_interface() -> None:
    """Every `VectorBackend` method reaches the owner, and each read named as one exists (a
    misspelt read would silently run one at a time)."""
    from scoperag.core.backend import VectorBackend
    from scoperag.core.engine_ops import OPERATIONS, READS

    interface = {f"backend.{name}" for name in VectorBackend.__abstractmethods__}
    assert interface - set(OPERATIONS) == {"backend.close"}
    assert set(READS) <= set(OPERATIONS)
