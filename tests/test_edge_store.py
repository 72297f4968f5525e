"""The vector store and EdgeBackend on Qdrant Edge: round trips, payload layout, plans, the lock.

Vectors are small and random here (the layout and the engine's behaviour do not depend on the
model); the real model runs in the conformance suite and the benchmark.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
import qdrant_edge as edge
from llama_index.core import MockEmbedding, VectorStoreIndex
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores import MetadataFilter, MetadataFilters, VectorStoreQuery
from qdrant_client import models

from scoperag.core.config.settings import Settings
from scoperag.core.engine.client.backend import QdrantClientBackend
from scoperag.core.engine.edge.backend import EdgeBackend
from scoperag.core.engine.edge.collection import EF_MIN, EF_PER_SHARE, EXACT_BELOW
from scoperag.core.engine.edge.conversion import to_edge_filter
from scoperag.core.engine.edge.errors import MissingIndexError
from scoperag.core.engine.vector_names import DENSE_VECTOR
from scoperag.core.errors import StoreLockedError

DIM = 8


def _vector(rng: random.Random) -> list[float]:
    return [rng.uniform(-1, 1) for _ in range(DIM)]


def _nodes(count: int, seed: int = 5) -> list[TextNode]:
    """Chunks of three source documents, with metadata of several types."""
    rng = random.Random(seed)
    nodes = []
    for n in range(count):
        source = f"doc-{n % 3}"
        nodes.append(
            TextNode(
                id_=f"00000000-0000-0000-0000-{n + 1:012d}",
                text=f"chunk {n} of {source}",
                metadata={
                    "chapter": n % 5,
                    "title": f"Title {n % 3}",
                    "written": datetime(2025, 1, 1 + n % 28, tzinfo=UTC),
                    "draft": n % 2 == 0,
                },
                relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=source)},
                embedding=_vector(rng),
            )
        )
    return nodes


@pytest.fixture
def edge_backend(tmp_path: Path) -> EdgeBackend:
    backend = EdgeBackend.open(tmp_path / "edge")
    backend.create_collection("c", DIM, {"note": "test"})
    yield backend
    backend.close()


def test_payload_layout_is_the_one_of_llamaindex_qdrant_store(
    edge_backend: EdgeBackend, tmp_path: Path
) -> None:
    local = QdrantClientBackend.local(tmp_path / "local")
    local.create_collection("c", DIM, {})
    nodes = _nodes(6)
    local.vector_store("c").add(nodes)
    edge_backend.vector_store("c").add(nodes)
    payloads = {
        name: {str(r.id): r.payload for r in backend.scroll("c", None, limit=10)}
        for name, backend in {"local": local, "edge": edge_backend}.items()
    }
    local.close()
    assert payloads["edge"] == payloads["local"]
    first = payloads["edge"][nodes[0].node_id]
    assert {"_node_content", "_node_type", "doc_id", "document_id", "ref_doc_id"} <= set(first)
    assert first["doc_id"] == first["ref_doc_id"] == "doc-0" and first["chapter"] == 0


def test_nodes_round_trip_with_embeddings(edge_backend: EdgeBackend) -> None:
    store = edge_backend.vector_store("c")
    nodes = _nodes(9)
    assert store.add(nodes) == [node.node_id for node in nodes]
    back = {node.node_id: node for node in store.get_nodes([nodes[2].node_id, nodes[7].node_id])}
    assert set(back) == {nodes[2].node_id, nodes[7].node_id}
    got = back[nodes[7].node_id]
    assert got.get_content() == nodes[7].get_content()
    assert got.ref_doc_id == "doc-1"
    assert got.metadata == nodes[7].model_dump(mode="json")["metadata"]
    sent = np.asarray(nodes[7].embedding)
    # cosine collections keep unit vectors, as a Qdrant server does
    assert got.embedding == pytest.approx(sent / np.linalg.norm(sent), abs=1e-6)


def test_vector_store_index_retrieves_with_metadata_filters(edge_backend: EdgeBackend) -> None:
    store = edge_backend.vector_store("c")
    store.add(_nodes(30))
    index = VectorStoreIndex.from_vector_store(store, embed_model=MockEmbedding(embed_dim=DIM))
    filters = MetadataFilters(filters=[MetadataFilter(key="chapter", value=2)])
    hits = index.as_retriever(similarity_top_k=20, filters=filters).retrieve("anything")
    assert len(hits) == 6 and {hit.node.metadata["chapter"] for hit in hits} == {2}


def test_qdrant_filters_replace_metadata_filters(edge_backend: EdgeBackend) -> None:
    store = edge_backend.vector_store("c")
    store.add(_nodes(30))
    query = VectorStoreQuery(
        query_embedding=[0.1] * DIM,
        similarity_top_k=30,
        filters=MetadataFilters(filters=[MetadataFilter(key="chapter", value=2)]),
    )
    native = models.Filter(
        must=[
            models.FieldCondition(key="draft", match=models.MatchValue(value=True)),
            models.FieldCondition(key="doc_id", match=models.MatchValue(value="doc-1")),
        ]
    )
    result = store.query(query, qdrant_filters=native)
    found = [(node.metadata["draft"], node.ref_doc_id) for node in result.nodes]
    assert len(found) == 5 and set(found) == {(True, "doc-1")}
    assert result.similarities == sorted(result.similarities, reverse=True)


def test_delete_by_document_and_by_node_ids(edge_backend: EdgeBackend) -> None:
    store = edge_backend.vector_store("c")
    nodes = _nodes(12)
    store.add(nodes)
    store.delete("doc-1")
    left = {str(record.id) for record in edge_backend.scroll("c", None, limit=20)}
    assert left == {node.node_id for node in nodes if node.ref_doc_id != "doc-1"}
    store.delete_nodes([nodes[0].node_id])
    assert edge_backend.count("c", None) == 7


def test_a_count_without_a_filter_is_exact_after_overwrites_and_deletes(
    edge_backend: EdgeBackend,
) -> None:
    """An unfiltered count is the shard's point count (0.07 ms against 7 ms at 100k
    for counting); it must stay the exact number of points through overwrites and deletes."""
    store = edge_backend.vector_store("c")
    store.add(_nodes(12))
    store.add(_nodes(16, seed=9))  # the first 12 ids are written again
    store.delete("doc-2")
    exact = edge_backend.edge_collection("c").client.count(edge.CountRequest(exact=True))
    assert edge_backend.edge_collection("c").count() == exact == 16 - 5


def test_a_kept_count_follows_every_kind_of_write(edge_backend: EdgeBackend) -> None:
    """An exact count is kept until the collection's next write; an upsert, a payload
    change and a delete each change the filter's count, and the next count must show it."""
    store = edge_backend.vector_store("c")
    store.add(_nodes(12))
    chapter_one = models.Filter(
        must=[models.FieldCondition(key="chapter", match=models.MatchValue(value=1))]
    )
    assert edge_backend.count("c", chapter_one) == 3  # nodes 1, 6 and 11
    assert edge_backend.count("c", chapter_one) == 3  # kept
    store.add([_nodes(14)[13]])  # chapter 13 % 5 = 3: other counts move, this one stays
    assert edge_backend.count("c", chapter_one) == 3
    edge_backend.set_payload("c", _nodes(1)[0].node_id, {"chapter": 1})
    assert edge_backend.count("c", chapter_one) == 4
    store.delete("doc-1")  # nodes 1, 4, 7 and 10: node 1 was in chapter 1
    shard = edge_backend.edge_collection("c").client
    exact = shard.count(edge.CountRequest(exact=True, filter=to_edge_filter(chapter_one)))
    assert edge_backend.count("c", chapter_one) == exact == 3


def test_collection_metadata_follows_every_rewrite_of_its_file(tmp_path: Path) -> None:
    """Collection.json is parsed once per version of the file; a collection dropped
    and created again, or its file replaced while the store is open, is seen at the next call."""
    backend = EdgeBackend.open(tmp_path / "edge")
    backend.create_collection("c", DIM, {"who": "first"})
    assert backend.collection_metadata("c") == {"who": "first"}
    backend.delete_collection("c")
    backend.create_collection("c", DIM, {"who": "second"})
    assert backend.collection_metadata("c") == {"who": "second"}
    backend.update_collection_metadata("c", {"more": 1})
    assert backend.collection_metadata("c") == {"who": "second", "more": 1}
    path = tmp_path / "edge" / "c" / "collection.json"
    record = json.loads(path.read_text())
    replacement = path.with_suffix(".elsewhere")
    replacement.write_text(json.dumps({**record, "metadata": {"who": "another tool"}}))
    os.replace(replacement, path)
    assert backend.collection_metadata("c") == {"who": "another tool"}
    backend.close()


def test_changing_the_returned_metadata_changes_nothing_kept(tmp_path: Path) -> None:
    """The parsed collection.json is kept between calls, so handing callers the
    kept dict itself would let one caller's edit show up in every later read."""
    backend = EdgeBackend.open(tmp_path / "edge")
    backend.create_collection("c", DIM, {"who": "first", "tags": ["a"]})
    backend.collection_metadata("c")["who"] = "edited by a caller"
    backend.collection_metadata("c")["tags"].append("b")
    assert backend.collection_metadata("c") == {"who": "first", "tags": ["a"]}
    backend.close()


def test_search_plan_follows_the_filter(tmp_path: Path) -> None:
    """Exact search below EXACT_BELOW matches, a wider beam as a filter keeps a smaller share."""
    backend = EdgeBackend.open(tmp_path / "edge")
    backend.create_collection("big", 4, {})
    rng = random.Random(1)
    total = 4 * EXACT_BELOW + 8000
    backend.upsert_points(
        "big",
        [
            models.PointStruct(
                id=n,
                vector={DENSE_VECTOR: _vector(rng)[:4]},
                payload={"part": n % 8, "rare": n % 100 == 0},
            )
            for n in range(total)
        ],
    )
    backend.create_index("big", "part", models.PayloadSchemaType.INTEGER)
    store = backend.edge_collection("big")

    def plan(flt: models.Filter | None) -> tuple[object, bool]:
        params = store.plan_search(to_edge_filter(flt), 10)
        return params.hnsw_ef, params.exact

    def parts(below: int) -> models.Filter:
        return models.Filter(must=[models.FieldCondition(key="part", range=models.Range(lt=below))])

    half, quarter, eighth = parts(4), parts(2), parts(1)
    few = models.Filter(must=[models.HasIdCondition(has_id=list(range(50)))])
    # no index on "rare": the engine's estimate is far above the 440 points that match
    rare = models.Filter(
        must=[models.FieldCondition(key="rare", match=models.MatchValue(value=True))]
    )
    assert plan(None) == (EF_MIN, False)
    assert plan(half) == (max(EF_MIN, 2 * EF_PER_SHARE), False)
    assert plan(quarter) == (4 * EF_PER_SHARE, False)  # 22,000 matches: the beam widens
    assert plan(eighth) == (None, True)  # 11,000 matches: below EXACT_BELOW
    assert plan(few) == (None, True)
    assert (
        store.client.count(edge.CountRequest(exact=False, filter=to_edge_filter(rare)))
        > EXACT_BELOW
    )
    assert plan(rare) == (None, True)
    backend.close()


def test_order_by_without_a_range_index_says_which_key(edge_backend: EdgeBackend) -> None:
    edge_backend.vector_store("c").add(_nodes(3))
    order = models.OrderBy(key="chapter")
    with pytest.raises(MissingIndexError, match="no integer, float or datetime.*'chapter'"):
        edge_backend.scroll("c", None, limit=3, order_by=order)
    edge_backend.create_index("c", "chapter", models.PayloadSchemaType.INTEGER)
    assert [r.payload["chapter"] for r in edge_backend.scroll("c", None, 3, order_by=order)] == [
        0,
        1,
        2,
    ]
    with pytest.raises(MissingIndexError, match="keyword, integer or bool.*'title'"):
        edge_backend.facet("c", "title", None, 5)


def test_data_indexes_and_metadata_survive_a_reopen(tmp_path: Path) -> None:
    backend = EdgeBackend.open(tmp_path / "edge")
    backend.create_collection("c", DIM, {"scoperag_embedder": {"dimension": DIM}})
    backend.create_index("c", "chapter", models.PayloadSchemaType.INTEGER)
    backend.vector_store("c").add(_nodes(10))
    backend.close()
    again = EdgeBackend.open(tmp_path / "edge")
    assert again.list_collections() == ["c"]
    assert again.collection_metadata("c") == {"scoperag_embedder": {"dimension": DIM}}
    assert again.payload_indexes("c") == {"chapter": "integer"}
    assert again.count("c", None) == 10
    again.close()


def test_one_process_at_a_time(tmp_path: Path) -> None:
    root = tmp_path / "edge"
    holder = EdgeBackend.open(root)
    with pytest.raises(StoreLockedError, match="already open in another process"):
        EdgeBackend.open(root)
    probe = (
        "import sys; from pathlib import Path\n"
        "from scoperag.core.engine.edge.backend import EdgeBackend\n"
        "from scoperag.core.errors import StoreLockedError\n"
        "try:\n    EdgeBackend.open(Path(sys.argv[1]))\n"
        "except StoreLockedError as exc:\n    print(exc); sys.exit(3)\n"
    )
    other = subprocess.run(
        [sys.executable, "-c", probe, str(root)], capture_output=True, text=True, timeout=60
    )
    # the message names the tool that shows who holds the store, and what to do
    assert other.returncode == 3 and "scoperag status" in other.stdout
    assert "stop it and try again" in other.stdout
    holder.close()
    EdgeBackend.open(root).close()


def test_edge_is_the_default_and_an_old_local_store_keeps_working(tmp_path: Path) -> None:
    assert Settings(data_dir=tmp_path / "new").effective_backend == "edge"
    old = tmp_path / "old"
    QdrantClientBackend.local(old / "qdrant").close()
    assert Settings(data_dir=old).effective_backend == "local"
    assert Settings(data_dir=old, backend="edge").effective_backend == "edge"
    EdgeBackend.open(old / "edge").close()  # migrated: both stores there, edge wins
    assert Settings(data_dir=old).effective_backend == "edge"
