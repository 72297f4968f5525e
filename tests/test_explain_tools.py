"""`explain` on every search and lookup tool, over the in-process MCP client, real engines.

Each figure is checked against the engine asked another way: a dense rank against a dense-only
search under the same filter, a null BM25 rank against the query's and the hit's BM25 terms,
the filter against the one built from the arguments; explain off changes nothing.
"""

from __future__ import annotations

import time
from typing import Any

from fastmcp import Client
from qdrant_client import models
from test_books_tools import call, text_of
from test_docs_search import base_url, corpus, http, mcp  # noqa: F401
from test_memory_search import search

from scoperag.core.contracts.books import BOOK_ID, READ_UP_TO
from scoperag.core.contracts.dnd import COLLECTION as DND
from scoperag.core.contracts.memory import COLLECTION as MEMORY
from scoperag.core.contracts.memory import CURRENT, TAGS_ANY
from scoperag.core.contracts.pdf import PDF_FIELDS
from scoperag.core.embedding.bm25 import document_vector, query_vector
from scoperag.core.engine.node_payload import stored_text_and_metadata
from scoperag.core.engine.search_request import SearchRequest
from scoperag.core.filters.fields import build_filter
from scoperag.server.mcp.app import build_server
from scoperag.server.profiles.docs.tools import SEARCH_PATH
from scoperag.server.runtime import Runtime


def dense_ranking(runtime: Runtime, collection: str, query: str, explain: dict) -> list:
    """(id, cosine) best first: a dense-only search under the explain's filter, as deep."""
    flt = explain.get("filter")
    request = SearchRequest(
        collection=collection,
        dense=runtime.embedder.embed_query(query),
        filter=None if flt is None else models.Filter.model_validate(flt),
        limit=explain["prefetch_limit"],
        with_payload=False,
    )
    return [(hit.id, hit.score) for hit in runtime.backend.search(request).hits]


def check_hits(hits: list[dict], query: str, ranking: list, ids: list) -> None:
    """Fused ranks 1..n in order; dense figures as the dense-only search gives them; a null
    BM25 rank only for a hit sharing no BM25 term with the query."""
    assert hits and len(hits) == len(ids)
    assert [hit["explain"]["fused"]["rank"] for hit in hits] == list(range(1, len(hits) + 1))
    positions = {point_id: (n, score) for n, (point_id, score) in enumerate(ranking, 1)}
    terms = set(query_vector(query).indices)
    for hit, point_id in zip(hits, ids, strict=True):
        why = hit["explain"]
        rank, score = positions[point_id]
        assert why["dense"]["rank"] == rank
        assert abs(why["dense"]["score"] - score) < 1e-4  # memory rows: 4 decimals
        if why["bm25"] is None:
            assert not terms & set(document_vector(hit["text"]).indices), hit["text"][:80]


def point_ids(runtime: Runtime, collection: str, hits: list[dict], key: str) -> list:
    """The point ids of tool hits, found by a payload key unique to each."""
    values = [hit[key] for hit in hits]
    condition = models.FieldCondition(key=key, match=models.MatchAny(any=values))
    records = runtime.backend.scroll(collection, models.Filter(must=[condition]), len(values))
    by_value = {record.payload[key]: record.id for record in records}
    return [by_value[value] for value in values]


async def find(runtime: Runtime, **arguments: Any) -> dict:
    async with Client(build_server(runtime)) as session:
        return (await session.call_tool("qdrant-find", arguments)).structured_content


async def test_qdrant_find_explains_hits_with_the_engine_figures(pdf_runtime: Runtime) -> None:
    query, document = "page labels and the number tree", "qpdf-manual-5.1.3"
    plain = await find(pdf_runtime, query=query, document_id=document, limit=8)
    explained = await find(pdf_runtime, query=query, document_id=document, limit=8, explain=True)
    assert plain["hits"] and "explain" not in plain and "explain" not in plain["hits"][0]
    stripped = [{k: v for k, v in hit.items() if k != "explain"} for hit in explained["hits"]]
    assert stripped == plain["hits"]  # explain changes nothing else
    result = explained["explain"]
    built = build_filter(PDF_FIELDS, {"document_id": document})
    assert result["filter"] == built.model_dump(mode="json", exclude_none=True)
    assert result["prefetch_limit"] == 100
    assert result["candidates"]["dense"] >= len(plain["hits"]) and result["candidates"]["bm25"]
    assert all(hit["explain"]["fused"]["method"] == "dbsf" for hit in explained["hits"])
    ranking = dense_ranking(pdf_runtime, "pdf_pages", query, result)
    by_page = {
        (hit["document_id"], hit["physical_page_index"], hit["text"]): hit
        for hit in explained["hits"]
    }
    assert len(by_page) == len(explained["hits"])
    records = pdf_runtime.backend.scroll("pdf_pages", built, 10_000)
    ids = {}
    for record in records:
        text, payload = stored_text_and_metadata(record.payload or {})
        ids[(payload["document_id"], payload["physical_page_index"], text)] = record.id
    check_hits(explained["hits"], query, ranking, [ids[key] for key in by_page])
    dropped = result["dropped"]
    assert result["dropped_total"] >= len(dropped) and len(dropped) <= 20
    assert dropped and all(drop["stage"] == "limit" for drop in dropped)  # no floor here


def current_only(applied: dict[str, Any], before: float, after: float, **values: Any) -> dict:
    """The filter a memory search builds from `values`, current memories only, at the moment
    (between `before` and `after`) the applied filter was built."""
    expiry = next(condition for condition in applied["must_not"] if "range" in condition)
    moment = expiry["range"]["lte"]
    assert before <= moment <= after
    built = build_filter([TAGS_ANY, *CURRENT], values, now=moment)
    return built.model_dump(mode="json", exclude_none=True)


async def test_memory_search_lists_what_the_floor_dropped(memory_server, memory_runtime) -> None:
    query = "database locked errors"
    plain = await search(memory_server, query=query, min_similarity=0.4, page_size=5)
    before = time.time()
    explained = await search(
        memory_server, query=query, min_similarity=0.4, page_size=5, explain=True
    )
    after = time.time()
    assert plain["memories"] and "explain" not in plain
    assert [row["content_hash"] for row in explained["memories"]] == [
        row["content_hash"] for row in plain["memories"]
    ]
    result = explained["explain"]
    assert result["filter"] == current_only(result["filter"], before, after)  # no facet
    floor = 0.4
    floors = [drop for drop in result["dropped"] if drop["stage"] == "floor"]
    assert floors and all(drop["score"] < floor for drop in floors)
    assert result["candidates"]["dense"] == plain["total"]  # every hit above the floor
    for row in explained["memories"]:
        assert row["explain"]["similarity"] >= floor
        assert row["explain"]["similarity"] == row["similarity"]
    ranking = dense_ranking(memory_runtime, MEMORY, query, result)
    ids = point_ids(memory_runtime, MEMORY, explained["memories"], "content_hash")
    rows = [{**row, "text": row["content"]} for row in explained["memories"]]
    check_hits(rows, query, ranking, ids)


async def test_memory_explain_filter_is_the_one_built_and_plain_toon_is_unchanged(
    memory_server,
) -> None:
    async with Client(memory_server) as session:
        plain = await session.call_tool("search", {"query": "sqlite", "tags": ["bench:bugfix-5"]})
        again = await session.call_tool("search", {"query": "sqlite", "tags": ["bench:bugfix-5"]})
        before = time.time()
        explained = await session.call_tool(
            "search", {"query": "sqlite", "tags": ["bench:bugfix-5"], "explain": True}
        )
        after = time.time()
    assert plain.content[0].text == again.content[0].text and "explain" not in plain.content[0].text
    assert "explain" in explained.content[0].text and "dense" in explained.content[0].text
    applied = explained.structured_content["explain"]["filter"]
    assert applied == current_only(applied, before, after, tags=["bench:bugfix-5"])


async def test_search_book_lists_the_spoiler_gate_cut(books_runtime: Runtime, book) -> None:
    reader, user_pos = "explainer", 12  # inside the chunk of sids 10..15
    await call(
        books_runtime, "set_reading_position", book_id="pride", sentence=user_pos, reader=reader
    )
    arguments = {"book_id": "pride", "query": text_of(book, 10, 15), "top_k": 3, "reader": reader}
    plain = await call(books_runtime, "search_book", **arguments)
    explained = await call(books_runtime, "search_book", **arguments, explain=True)
    assert plain["passages"] and "explain" not in plain
    stripped = [{k: v for k, v in p.items() if k != "explain"} for p in explained["passages"]]
    assert stripped == plain["passages"]
    result = explained["explain"]
    gate = [drop for drop in result["dropped"] if drop["stage"] == "gate"]
    assert len(gate) == plain["chunks_cut"] >= 1
    assert any(f"13-15 are past the reader's position {user_pos}" in d["reason"] for d in gate)
    built = build_filter([BOOK_ID, READ_UP_TO], {"book_id": "pride", "user_pos": user_pos})
    assert result["filter"] == built.model_dump(mode="json", exclude_none=True)
    assert result["candidates"]["bm25"] is None
    for rank, passage in enumerate(explained["passages"], 1):
        why = passage["explain"]
        assert why["fused"] == {"score": passage["score"], "rank": rank, "method": "dense"}
        assert why["bm25"] is None and why["dense"]["score"] == passage["score"]


async def test_dnd_search_and_lookups_explain(dnd_ingest) -> None:
    runtime = dnd_ingest[0]
    async with Client(build_server(runtime)) as client:
        plain = (
            await client.call_tool("search_dnd_content", {"query": "fireball"})
        ).structured_content
        explained = (
            await client.call_tool("search_dnd_content", {"query": "fireball", "explain": True})
        ).structured_content
        assert plain["results"] and "explain" not in plain
        hits = explained["results"]
        assert [h["name"] for h in hits] == [h["name"] for h in plain["results"]]
        assert [h["explain"]["fused"]["rank"] for h in hits] == list(range(1, len(hits) + 1))
        assert hits and all(h["explain"]["fused"]["method"] == "rrf" for h in hits)
        assert hits[0]["explain"]["name_match"]["kind"] == "exact"
        ranking = dict(dense_ranking(runtime, DND, "fireball", explained["explain"]))
        assert any(h["explain"]["dense"] for h in hits)
        for hit in hits:
            if hit["explain"]["dense"]:
                assert hit["explain"]["dense"]["score"] in ranking.values()
        for tool, name in [("lookup_spell", "firebal"), ("lookup_creature", "dragon")]:
            answer = (
                await client.call_tool(tool, {"name": name, "limit": 2, "explain": True})
            ).structured_content
            off = (await client.call_tool(tool, {"name": name, "limit": 2})).structured_content
            assert answer["results"], tool
            assert "explain" not in off and "explain" not in off["results"][0]
            assert [{k: v for k, v in r.items() if k != "explain"} for r in answer["results"]] == (
                off["results"]
            )
            why = answer["results"][0]["explain"]
            assert why["dense"] is None and why["fused"]["method"] == "name"
            assert why["name_match"]["kind"] in {"fuzzy", "prefix"}
            assert why["name_match"]["score"] == answer["results"][0]["name_similarity"]
            assert why["similarity"] is None and answer["results"][0]["similarity"] is None
            assert answer["explain"]["filter"]["must"][-1]["match"]["value"] in {
                "spell",
                "creature",
            }
        listing = (
            await client.call_tool("lookup_spell", {"limit": 3, "explain": True})
        ).structured_content
        assert listing["explain"]["dropped_total"] == listing["total"] - 3
        assert [r["explain"]["fused"]["rank"] for r in listing["results"]] == [1, 2, 3]


async def test_the_docs_route_and_tool_honour_explain(http, mcp) -> None:  # noqa: F811
    arguments = {"query": "what failed and how was it fixed", "top_k": 5, "doc_type": "runbook"}
    plain = (await http.post(SEARCH_PATH, json=arguments)).json()
    by_route = (await http.post(SEARCH_PATH, json={**arguments, "explain": True})).json()
    by_tool = (
        await mcp.call_tool("elf_docs_search_l0", {**arguments, "explain": True})
    ).structured_content
    assert plain["hits"] and "explain" not in plain and "explain" not in plain["hits"][0]
    for explained in (by_route, by_tool):
        assert [h["doc_id"] for h in explained["hits"]] == [h["doc_id"] for h in plain["hits"]]
        ranks = [hit["explain"]["fused"]["rank"] for hit in explained["hits"]]
        assert ranks == list(range(1, len(plain["hits"]) + 1))
        conditions = explained["explain"]["filter"]["must"]
        assert {"key": "doc_type", "match": {"value": "runbook"}} in conditions
    refused = await http.post(SEARCH_PATH, json={**arguments, "explain": "maybe"})
    assert refused.status_code == 400 and refused.json()["field"] == "explain"
