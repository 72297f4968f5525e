"""The collection's LlamaIndex vector store on Qdrant Edge and local mode: MetadataFilters select
the points they name, queries skip points a replacement hides, and the store's payloads are
LlamaIndex's own."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
)
from llama_index.core.vector_stores.types import VectorStoreQueryMode
from llama_index.core.vector_stores.utils import node_to_metadata_dict

from scoperag.core.engine.backend import VectorBackend
from scoperag.core.engine.client.backend import QdrantClientBackend
from scoperag.core.engine.edge.backend import EdgeBackend
from scoperag.core.errors import InvalidParameterError
from scoperag.pipelines.store import stamped

DIM = 8
COUNT = 30
ENGINES: dict[str, Callable[[Path], VectorBackend]] = {
    "edge": EdgeBackend.open,
    "local": QdrantClientBackend.local,
}


def _nodes(count: int = COUNT) -> list[TextNode]:
    rng = random.Random(3)
    return [
        TextNode(
            id_=f"00000000-0000-0000-0000-{n + 1:012d}",
            text=f"chunk {n} about {'dragons' if n % 4 == 0 else 'gardens'}",
            metadata={"n": n, "kind": ["spell", "item", "creature"][n % 3], "cr": n / 4},
            relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=f"doc-{n % 3}")},
            embedding=[rng.uniform(-1, 1) for _ in range(DIM)],
        )
        for n in range(count)
    ]


@pytest.fixture(params=list(ENGINES))
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorBackend]:
    opened = ENGINES[request.param](tmp_path / request.param)
    opened.create_collection("c", DIM, {})
    opened.vector_store("c").add(_nodes())
    yield opened
    opened.close()


def _filters(*parts: MetadataFilter, condition: FilterCondition = FilterCondition.AND):
    return MetadataFilters(filters=list(parts), condition=condition)


KIND_ITEM = MetadataFilter(key="kind", value="item")
CASES: dict[str, tuple[MetadataFilters, Callable[[dict], bool]]] = {
    "equal": (_filters(KIND_ITEM), lambda m: m["kind"] == "item"),
    "equal float": (
        _filters(MetadataFilter(key="cr", value=2.5)),
        lambda m: m["cr"] == 2.5,
    ),
    "not equal": (
        _filters(MetadataFilter(key="kind", value="item", operator=FilterOperator.NE)),
        lambda m: m["kind"] != "item",
    ),
    "range": (
        _filters(
            MetadataFilter(key="n", value=5, operator=FilterOperator.GTE),
            MetadataFilter(key="n", value=9, operator=FilterOperator.LT),
        ),
        lambda m: 5 <= m["n"] < 9,
    ),
    "in": (
        _filters(MetadataFilter(key="n", value=[1, 2, 29], operator=FilterOperator.IN)),
        lambda m: m["n"] in (1, 2, 29),
    ),
    "not in": (
        _filters(MetadataFilter(key="kind", value=["spell", "item"], operator=FilterOperator.NIN)),
        lambda m: m["kind"] == "creature",
    ),
    "or": (
        _filters(
            KIND_ITEM,
            MetadataFilter(key="n", value=2, operator=FilterOperator.LTE),
            condition=FilterCondition.OR,
        ),
        lambda m: m["kind"] == "item" or m["n"] <= 2,
    ),
    "not": (_filters(KIND_ITEM, condition=FilterCondition.NOT), lambda m: m["kind"] != "item"),
    "nested": (
        _filters(
            _filters(KIND_ITEM, MetadataFilter(key="n", value=0), condition=FilterCondition.OR),
            MetadataFilter(key="n", value=20, operator=FilterOperator.LT),
            _filters(),
        ),
        lambda m: (m["kind"] == "item" or m["n"] == 0) and m["n"] < 20,
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_metadata_filters_select_the_nodes_they_name(backend: VectorBackend, name: str) -> None:
    filters, wanted = CASES[name]
    expected = {node.node_id for node in _nodes() if wanted(node.metadata)}
    assert expected, name
    store = backend.vector_store("c")
    query = VectorStoreQuery(query_embedding=[0.1] * DIM, similarity_top_k=COUNT, filters=filters)
    assert set(store.query(query).ids) == expected
    assert {node.node_id for node in store.get_nodes(filters=filters)} == expected


def test_an_operator_the_engine_cannot_honour_is_refused_by_name(backend: VectorBackend) -> None:
    contains = MetadataFilter(key="kind", value="item", operator=FilterOperator.CONTAINS)
    with pytest.raises(InvalidParameterError, match='"contains".*Accepted: ==, !='):
        backend.vector_store("c").get_nodes(filters=_filters(contains))


def test_a_query_skips_the_points_a_replacement_hides(backend: VectorBackend) -> None:
    """While a source's new version is being written, queries return its old one only."""
    store = backend.vector_store("c")
    query = VectorStoreQuery(query_embedding=[0.1] * DIM, similarity_top_k=COUNT)
    before = set(store.query(query).ids)
    new = [node for node in _nodes() if node.ref_doc_id == "doc-1"]
    with backend.generations.replacing("c", ["doc-1"]) as generation:
        store.add(stamped(new, generation))
        assert set(store.query(query).ids) == before
    after = set(store.query(query).ids)
    assert len(after) == COUNT and after != before  # the new points replaced the old ones


def test_hybrid_queries_rank_the_keyword_matches_first(backend: VectorBackend) -> None:
    query = VectorStoreQuery(
        query_embedding=[0.0] * (DIM - 1) + [1.0],
        query_str="dragons",
        similarity_top_k=3,
        mode=VectorStoreQueryMode.HYBRID,
    )
    result = backend.vector_store("c").query(query)
    assert result.nodes and all("dragons" in node.get_content() for node in result.nodes)


def test_payloads_are_llamaindexs_own(backend: VectorBackend) -> None:
    node = _nodes(1)[0]
    stored = backend.scroll("c", None, 1)[0].payload
    assert stored == node_to_metadata_dict(node, remove_text=False, flat_metadata=False)


def test_nodes_written_by_llamaindexs_qdrant_store_read_back(tmp_path: Path) -> None:
    """A collection LlamaIndex's own `QdrantVectorStore` wrote is searched and read as it is."""
    from llama_index.vector_stores.qdrant import QdrantVectorStore

    backend = QdrantClientBackend.local(tmp_path)
    backend.create_collection("c", DIM, {})
    nodes = _nodes()
    QdrantVectorStore(collection_name="c", client=backend.client).add(nodes)
    store = backend.vector_store("c")
    query = VectorStoreQuery(query_embedding=nodes[5].embedding, similarity_top_k=1)
    assert store.query(query).nodes[0].get_content() == nodes[5].get_content()
    back = store.get_nodes([nodes[7].node_id])[0]
    assert back.metadata == nodes[7].metadata and back.ref_doc_id == "doc-1"
    assert backend.scroll("c", None, 1)[0].payload == node_to_metadata_dict(
        nodes[0], remove_text=False, flat_metadata=False
    )
    backend.close()
