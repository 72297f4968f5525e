"""`SearchRequest.explain` on every engine: each ranking alone, under the request's filter."""

from __future__ import annotations

import json
import math
from collections.abc import Callable

import pytest
from fastmcp import Client
from qdrant_client import models
from test_hybrid_search import COLLECTION, QUERY, _nodes, backend  # noqa: F401 (a fixture)

from scoperag.core.embedding.embedders import Embedder
from scoperag.core.engine.backend import VectorBackend
from scoperag.core.engine.search_request import SearchRequest
from scoperag.core.engine.sharing import wire
from scoperag.server.mcp.app import build_server
from scoperag.server.profiles.pdf.service import ingest_paths
from scoperag.server.runtime import Runtime
from scoperag.server.samples import SAMPLES

FLOOR = math.cos(math.radians(60))


def _request(**kwargs: object) -> SearchRequest:
    arguments = {"collection": COLLECTION, "dense": QUERY, "limit": 2, "score_threshold": FLOOR}
    return SearchRequest(**{**arguments, **kwargs})  # type: ignore[arg-type]


def _numbers(engine: VectorBackend, ids: list[int | str]) -> list[int]:
    records = engine.scroll(
        COLLECTION, models.Filter(must=[models.HasIdCondition(has_id=ids)]), limit=len(ids)
    )
    by_id = {record.id: record.payload["n"] for record in records}
    return [by_id[point_id] for point_id in ids]


def test_explain_gives_each_ranking_and_changes_nothing(backend: VectorBackend) -> None:  # noqa: F811
    backend.create_collection(COLLECTION, 3, {})
    backend.vector_store(COLLECTION).add(_nodes())
    not_three = models.Filter(
        must_not=[models.FieldCondition(key="n", match=models.MatchValue(value=3))]
    )
    plain = backend.search(_request(text="zephyr", filter=not_three))
    found = backend.search(_request(text="zephyr", filter=not_three, explain=True))
    assert found.hits and plain.branches is None
    assert found.hits == plain.hits  # the page is the same search
    branches = found.branches
    assert branches is not None and branches.prefetch_limit == 100 and branches.floor == FLOOR
    # dense: every point but 3, by cosine, with no floor; equal to a dense-only search
    assert _numbers(backend, [hit.id for hit in branches.dense]) == [1, 2, 4, 5, 6]
    dense_only = backend.search(_request(filter=not_three, limit=100, score_threshold=None))
    assert [(h.id, h.score) for h in branches.dense] == [(h.id, h.score) for h in dense_only.hits]
    # bm25: only the points holding the word, the one that repeats it first
    assert branches.bm25 is not None
    assert _numbers(backend, [hit.id for hit in branches.bm25]) == [6, 2]
    # fused: the candidates above the floor, the page being its start
    assert branches.fused is not None
    assert _numbers(backend, [hit.id for hit in branches.fused])[0] == 2
    assert len(branches.fused) == 4  # 1, 2, 4, 5: 6 is below the floor
    assert [hit.id for hit in branches.fused[:2]] == [hit.id for hit in found.hits]
    assert [hit.score for hit in branches.fused[:2]] == [hit.order_value for hit in found.hits]


def test_explain_of_a_dense_search_has_no_keyword_branch(backend: VectorBackend) -> None:  # noqa: F811
    backend.create_collection(COLLECTION, 3, {})
    backend.vector_store(COLLECTION).add(_nodes())
    found = backend.search(_request(explain=True, count_cap=10))
    assert found.hits and found.count == 5
    branches = found.branches
    assert branches is not None and branches.bm25 is None and branches.fused is None
    assert len(branches.dense) == 6 and branches.dense[-1].score < FLOOR


def test_branches_cross_the_owners_socket_as_they_are(backend: VectorBackend) -> None:  # noqa: F811
    """An attached process gets the owner's figures: the result survives the wire whole."""
    backend.create_collection(COLLECTION, 3, {})
    backend.vector_store(COLLECTION).add(_nodes())
    found = backend.search(_request(text="zephyr harbour", explain=True))
    assert found.branches is not None and found.branches.bm25
    assert wire.decode(json.loads(json.dumps(wire.encode(found)))) == found


async def test_an_attached_process_gets_the_owners_figures(
    make_runtime: Callable[..., Runtime], backend_name: str, embedder: Embedder
) -> None:
    """Through the owner's socket, explain gives the same figures as in the owner itself."""
    if backend_name == "server":
        pytest.skip("a server has no owner")
    holder = make_runtime(profiles=["pdf"])
    ingest_paths(holder, [SAMPLES / "qpdf-page-labels-num-tree.pdf"], None, None)
    other = Runtime(holder.settings, embedder=embedder)
    answers = []
    try:
        assert (holder.backend.role, other.backend.role) == ("owner", "attached")
        for runtime in (holder, other):
            async with Client(build_server(runtime)) as client:
                arguments = {"query": "page labels", "limit": 3, "explain": True}
                answer = await client.call_tool("qdrant-find", arguments)
                answers.append(answer.structured_content)
    finally:
        other.close()
    owner, attached = answers
    assert owner["hits"] and owner["explain"]["candidates"]["bm25"]
    assert attached["explain"] == owner["explain"]
    assert [hit["explain"] for hit in attached["hits"]] == [hit["explain"] for hit in owner["hits"]]
