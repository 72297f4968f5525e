"""`VectorBackend.search` on every engine: BM25 beside the dense vector, fused by the engine.

Vectors are small and hand-made so the dense ranking is known; the texts carry the keywords.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import pytest
import qdrant_edge as edge
from click.testing import CliRunner
from llama_index.core.schema import TextNode
from qdrant_client import models

from scoperag.core.engine.backend import VectorBackend, meaning_breaks_ties
from scoperag.core.engine.client.backend import QdrantClientBackend
from scoperag.core.engine.disk_space import MIN_FREE_ENV, DiskFullError
from scoperag.core.engine.edge.backend import EdgeBackend
from scoperag.core.engine.edge.shard_config import HNSW
from scoperag.core.engine.search_request import SearchRequest
from scoperag.core.engine.vector_names import DENSE_VECTOR, SPARSE_VECTOR
from scoperag.retrievers.hybrid import HybridRetriever
from scoperag.retrievers.searches import TextQuery
from scoperag.server.cli.main import cli

COLLECTION = "hybrid"
QUERY = [1.0, 0.0, 0.0]
# id -> (angle to the query in degrees, text): cosine falls as the angle grows
POINTS = {
    1: (10, "The harbour master keeps the ledger of every ship."),
    2: (20, "A zephyr carried the kites over the harbour."),
    3: (30, "Ships leave the harbour at dawn with the tide."),
    4: (40, "The lighthouse keeper trims the lamp each night."),
    5: (50, "Fishing nets dry on the quay in the afternoon sun."),
    6: (85, "The zephyr zephyr zephyr: a wind word nobody else uses."),
}


def _vector(degrees: float) -> list[float]:
    return [math.cos(math.radians(degrees)), math.sin(math.radians(degrees)), 0.0]


def _nodes() -> list[TextNode]:
    return [
        TextNode(
            id_=f"00000000-0000-0000-0000-{n:012d}",
            text=text,
            metadata={"n": n},
            embedding=_vector(angle),
        )
        for n, (angle, text) in POINTS.items()
    ]


@pytest.fixture
def backend(backend_name: str, tmp_path: Path) -> Iterator[VectorBackend]:
    """The engine under test (a Qdrant server too when SCOPERAG_QDRANT_URL was set)."""
    if backend_name == "server":
        from conftest import SERVER_URL

        opened: VectorBackend = QdrantClientBackend.server(SERVER_URL or "", None)
        for name in (COLLECTION, "copy", f"{COLLECTION}__reindex"):  # the server is shared
            opened.client.delete_collection(name)
    elif backend_name == "local":
        opened = QdrantClientBackend.local(tmp_path / "qdrant")
    else:
        opened = EdgeBackend.open(tmp_path / "edge")
    yield opened
    opened.close()


def _numbers(points: list[models.ScoredPoint]) -> list[int]:
    return [point.payload["n"] for point in points]


def _search(backend: VectorBackend, text: str | None, **kwargs: object) -> list[models.ScoredPoint]:
    arguments = {"limit": 10, "score_threshold": math.cos(math.radians(60))}
    request = SearchRequest(
        collection=COLLECTION, dense=QUERY, text=text, **{**arguments, **kwargs}
    )
    return backend.search(request).hits


def test_keywords_reorder_what_the_floor_lets_through(backend: VectorBackend) -> None:
    backend.create_collection(COLLECTION, 3, {})
    backend.vector_store(COLLECTION).add(_nodes())
    assert backend.has_keywords(COLLECTION)
    dense = _search(backend, None)
    hybrid = _search(backend, "zephyr")
    assert _numbers(dense) == [1, 2, 3, 4, 5]
    assert _numbers(hybrid)[0] == 2  # the keyword lifts it above a closer meaning
    assert sorted(_numbers(hybrid)) == [1, 2, 3, 4, 5]  # 6 matches the word, below the floor
    for point in hybrid:  # scores stay cosine similarities
        assert point.score == pytest.approx(math.cos(math.radians(POINTS[point.payload["n"]][0])))
    assert _numbers(_search(backend, "zephyr", score_threshold=None))[0] in {2, 6}


def test_the_filter_holds_in_every_prefetch_and_pages_follow(backend: VectorBackend) -> None:
    backend.create_collection(COLLECTION, 3, {})
    backend.vector_store(COLLECTION).add(_nodes())
    not_two = models.Filter(
        must_not=[models.FieldCondition(key="n", match=models.MatchValue(value=2))]
    )
    hybrid = _search(backend, "zephyr harbour", filter=not_two, score_threshold=None)
    assert 2 not in _numbers(hybrid) and len(hybrid) == 5
    whole = _numbers(_search(backend, "harbour ships"))
    pages = [_numbers(_search(backend, "harbour ships", limit=2, offset=o)) for o in (0, 2, 4)]
    assert sum(pages, []) == whole
    ids_only = _search(backend, None, with_payload=False)
    assert len(ids_only) == 5 and all(not point.payload for point in ids_only)


def test_points_written_without_bm25_vectors_get_them(backend: VectorBackend) -> None:
    """Migration copies points as they are; a keyword collection computes what they lack."""
    source = _nodes()
    backend.create_collection(COLLECTION, 3, {})
    backend.vector_store(COLLECTION).add(source)
    records = [record for page in backend.points(COLLECTION) for record in page]
    assert len(records) == len(source)
    assert all(SPARSE_VECTOR in record.vector for record in records)
    backend.create_collection("copy", 3, {})
    backend.upsert_points(
        "copy",
        [
            models.PointStruct(
                id=r.id, vector={DENSE_VECTOR: r.vector[DENSE_VECTOR]}, payload=r.payload
            )
            for r in records
        ],
    )
    found = SearchRequest(
        collection="copy", dense=QUERY, text="zephyr", limit=10, score_threshold=0.5
    )
    assert _numbers(backend.search(found).hits)[0] == 2


def _dense_only_collection(backend: VectorBackend) -> None:
    """A collection as scoperag built them before hybrid search: one dense vector."""
    if isinstance(backend, QdrantClientBackend):
        backend.client.create_collection(
            COLLECTION,
            vectors_config={
                DENSE_VECTOR: models.VectorParams(size=3, distance=models.Distance.COSINE)
            },
        )
        return
    assert isinstance(backend, EdgeBackend)
    folder = backend.root / COLLECTION
    config = edge.EdgeConfig(
        vectors={DENSE_VECTOR: edge.EdgeVectorParams(3, edge.Distance.Cosine)}, hnsw_config=HNSW
    )
    edge.EdgeShard.create(str(folder / "shard"), config).close()
    (folder / "collection.json").write_text(json.dumps({"dimension": 3, "metadata": {}}))


def test_a_collection_without_bm25_vectors_is_ranked_by_meaning_with_a_hint(
    backend: VectorBackend, embedder
) -> None:
    _dense_only_collection(backend)
    backend.vector_store(COLLECTION).add(_nodes())
    assert not backend.has_keywords(COLLECTION)
    assert _numbers(_search(backend, "zephyr")) == [1, 2, 3, 4, 5]
    retriever = HybridRetriever(backend, embedder, COLLECTION)
    assert retriever.keyword_hint() is None  # nothing searched yet
    assert retriever.points(TextQuery("zephyr", list(QUERY)))
    hint = retriever.keyword_hint()
    assert hint and f"scoperag reindex --collection {COLLECTION}" in hint


def test_reindex_adds_bm25_vectors_keeping_points_and_indexes(backend: VectorBackend) -> None:
    _dense_only_collection(backend)
    backend.create_index(COLLECTION, "n", models.PayloadSchemaType.INTEGER)
    backend.vector_store(COLLECTION).add(_nodes())
    indexes = backend.payload_indexes(COLLECTION)  # local mode keeps none: it scans
    assert backend.add_keywords(COLLECTION) == len(POINTS)
    assert backend.has_keywords(COLLECTION) and backend.count(COLLECTION, None) == len(POINTS)
    assert backend.payload_indexes(COLLECTION) == indexes
    assert _numbers(_search(backend, "zephyr"))[0] == 2  # keywords count now
    assert backend.add_keywords(COLLECTION) == 0
    assert f"{COLLECTION}__reindex" not in backend.list_collections()


def test_a_reindex_below_the_disk_floor_keeps_the_collection_as_it_was(
    backend: VectorBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy checks the floor before each page it writes (a full disk mid-copy would end
    the process); the old shard answers on, and the next reindex starts clean."""
    if not isinstance(backend, EdgeBackend):
        pytest.skip("local mode keeps its files in Python's own writes, outside the floor")
    _dense_only_collection(backend)
    backend.vector_store(COLLECTION).add(_nodes())
    monkeypatch.setenv(MIN_FREE_ENV, str(1 << 30))  # a PiB: every disk is below it
    with pytest.raises(DiskFullError, match=f"copy the points of '{COLLECTION}'"):
        backend.add_keywords(COLLECTION)
    assert not backend.has_keywords(COLLECTION)
    assert backend.count(COLLECTION, None) == len(POINTS)
    monkeypatch.delenv(MIN_FREE_ENV)
    assert backend.add_keywords(COLLECTION) == len(POINTS)


def test_the_reindex_command_names_what_it_did(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    backend = EdgeBackend.open(data_dir / "edge")
    _dense_only_collection(backend)
    backend.vector_store(COLLECTION).add(_nodes())
    backend.close()
    env = {"SCOPERAG_DATA_DIR": str(data_dir), "SCOPERAG_BACKEND": "edge"}
    first = CliRunner().invoke(cli, ["reindex"], env=env, catch_exceptions=False)
    again = CliRunner().invoke(cli, ["reindex", "--collection", COLLECTION], env=env)
    unknown = CliRunner().invoke(cli, ["reindex", "--collection", "nope"], env=env)
    assert f"{COLLECTION}: {len(POINTS)} points now have BM25 vectors" in first.output
    assert f"{COLLECTION}: already has them" in again.output
    assert unknown.exit_code != 0 and "nope" in unknown.output and COLLECTION in unknown.output
    reopened = EdgeBackend.open(data_dir / "edge")
    assert reopened.has_keywords(COLLECTION) and [
        p.name for p in (data_dir / "edge" / COLLECTION).iterdir() if p.name.startswith("shard")
    ] != ["shard"]
    reopened.close()


def test_equal_fusion_scores_are_ordered_by_meaning() -> None:
    """Regression: two candidates ranked oppositely by meaning and keywords tie under DBSF, and
    the engines returned them in either order from one run to the next (devbench MRR flipped)."""
    near = models.ScoredPoint(id=1, version=0, score=0.41)
    far = models.ScoredPoint(id=2, version=0, score=0.29)
    fused = [(1.0000001, far), (1.0, near), (2.0, models.ScoredPoint(id=3, version=0, score=0.1))]
    assert [hit.id for hit in meaning_breaks_ties(fused)] == [3, 1, 2]


def _crowded_nodes() -> list[TextNode]:
    """150 points close to the query by meaning, and one far down it that alone names Zorblax."""
    near = [
        TextNode(
            id_=f"00000000-0000-0000-0001-{n:012d}",
            text=f"Invoice {n} for the harbour was paid at dawn.",
            metadata={"n": n},
            embedding=_vector(n * 0.25),
        )
        for n in range(1, 151)
    ]
    rare = TextNode(
        id_="00000000-0000-0000-0002-000000000001",
        text="Zorblax signed for invoice 4471.",
        metadata={"n": 0},
        embedding=_vector(70),
    )
    return [*near, rare]


def test_a_point_only_bm25_finds_joins_the_fusion(backend: VectorBackend) -> None:
    """A point sharing a rare name with the query, outside the dense top candidates, is found;
    the floor still bounds what BM25 brings in."""
    backend.create_collection(COLLECTION, 3, {})
    backend.vector_store(COLLECTION).add(_crowded_nodes())
    dense_rank = _numbers(_search(backend, None, limit=151, score_threshold=None)).index(0)
    assert dense_rank == 150  # last by meaning: outside any prefetch of the dense branch
    found = _search(backend, "Zorblax invoice 4471", limit=5, score_threshold=0.2)
    assert found and 0 in _numbers(found)
    assert next(p for p in found if p.payload["n"] == 0).score == pytest.approx(
        math.cos(math.radians(70))
    )
    alone = _search(
        backend, "Zorblax invoice 4471", limit=5, score_threshold=0.2, keyword_candidates=False
    )
    assert alone and 0 not in _numbers(alone)
    assert 0 not in _numbers(_search(backend, "Zorblax invoice 4471", limit=5, score_threshold=0.5))


def test_explain_names_the_branch_that_found_each_hit(backend: VectorBackend) -> None:
    from scoperag.retrievers.explain import Explainer

    backend.create_collection(COLLECTION, 3, {})
    backend.vector_store(COLLECTION).add(_crowded_nodes())
    request = SearchRequest(
        collection=COLLECTION, dense=QUERY, text="Zorblax harbour", limit=5, explain=True
    )
    found = backend.search(request)
    why = Explainer(found, None)
    figures = {point.payload["n"]: why.hit(point, rank) for rank, point in enumerate(found.hits, 1)}
    assert 0 in figures and figures[0].found_by == ["bm25"]
    assert all(hit.found_by[0] == "dense" for n, hit in figures.items() if n)
