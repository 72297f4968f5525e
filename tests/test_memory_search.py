"""memory `search` over a real MCP client in memory: every facet, modes, order, pages, errors.

The store holds the 30 devbench memories plus four probes around midnight of 2026-03-01; the
expected result of each search is worked out from that input, never written down by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any

import pytest
import toon_format
from fastmcp import Client, FastMCP
from fastmcp.exceptions import ToolError

from scoperag.core.contracts.memory import COLLECTION, TAGS_ANY, MemoryPayload
from scoperag.core.engine.search_request import SearchRequest
from scoperag.core.filters.fields import build_filter


async def search(server: FastMCP, **arguments: Any) -> dict[str, Any]:
    async with Client(server) as client:
        result = await client.call_tool("search", arguments)
    assert toon_format.decode(result.content[0].text) == result.structured_content
    return result.structured_content


async def every_page(server: FastMCP, page_size: int, **arguments: Any) -> list[dict[str, Any]]:
    """The rows of all pages in order, checking each page's figures on the way."""
    rows: list[dict[str, Any]] = []
    page = 1
    while True:
        result = await search(server, page=page, page_size=page_size, **arguments)
        assert result["page"] == page
        assert result["total_pages"] == -(-result["total"] // page_size)
        assert result["has_more"] == (page < result["total_pages"])
        assert len(result.get("memories", [])) == min(page_size, result["total"] - len(rows))
        rows += result.get("memories", [])
        if not result["has_more"]:
            assert len(rows) == result["total"]
            return rows
        page += 1


def hashes(rows: list[dict[str, Any]]) -> set[str]:
    return {row["content_hash"] for row in rows}


def expected(memories: list[MemoryPayload], keep: Callable[[MemoryPayload], bool]) -> set[str]:
    return {memory.content_hash for memory in memories if keep(memory)}


def day_of(memory: MemoryPayload) -> date:
    return datetime.fromisoformat(memory.created_at).astimezone(UTC).date()


FACETED = {"mode": "faceted", "page_size": 100}


async def test_tags_any_matches_memories_with_at_least_one(memory_server, memories) -> None:
    wanted = {"storage", "oauth"}
    result = await search(memory_server, tags=sorted(wanted), **FACETED)
    assert hashes(result["memories"]) == expected(memories, lambda m: bool(wanted & set(m.tags)))
    assert result["total"] == len(result["memories"]) > 2


async def test_tags_all_matches_memories_with_every_one(memory_server, memories) -> None:
    wanted = {"storage", "architecture"}
    result = await search(memory_server, tags=sorted(wanted), match_all=True, **FACETED)
    assert hashes(result["memories"]) == expected(memories, lambda m: wanted <= set(m.tags))
    assert 0 < result["total"] < len(expected(memories, lambda m: bool(wanted & set(m.tags))))


async def test_tags_as_one_comma_separated_string(memory_server) -> None:
    as_list = await search(memory_server, tags=["sqlite", "wal"], match_all=True, **FACETED)
    as_text = await search(memory_server, tags="sqlite, wal", match_all=True, **FACETED)
    assert as_list == as_text and as_list["total"] == 2


async def test_memory_type_alone(memory_server, memories) -> None:
    result = await search(memory_server, memory_type="learning", **FACETED)
    assert hashes(result["memories"]) == expected(memories, lambda m: m.memory_type == "learning")
    assert result["total"] == 6


async def test_date_range_alone(memory_server, memories) -> None:
    first, last = date(2025, 7, 1), date(2025, 9, 30)
    result = await search(
        memory_server, start_date=first.isoformat(), end_date=last.isoformat(), **FACETED
    )
    assert hashes(result["memories"]) == expected(memories, lambda m: first <= day_of(m) <= last)
    assert result["total"] > 5


@pytest.mark.parametrize(
    ("arguments", "created"),
    [
        (
            {"start_date": "2026-03-01", "end_date": "2026-03-01"},
            {"03-01T00:00:00", "03-01T23:59:59"},
        ),
        ({"start_date": "2026-03-01"}, {"03-01T00:00:00", "03-01T23:59:59", "03-02T00:00:00"}),
        ({"end_date": "2026-02-28"}, {"02-28T23:59:59"}),
        ({"start_date": "2026-02-28", "end_date": "2026-02-28"}, {"02-28T23:59:59"}),
    ],
)
async def test_date_edges_first_and_last_second_of_a_day(memory_server, arguments, created) -> None:
    result = await search(memory_server, tags="probe", **arguments, **FACETED)
    assert {row["created_at"][5:19] for row in result["memories"]} == created


async def test_start_date_after_end_date_is_an_empty_result(memory_server) -> None:
    result = await search(memory_server, start_date="2026-03-02", end_date="2026-03-01", **FACETED)
    assert (result["total"], result.get("memories")) == (0, [])
    assert "start_date is after end_date" in result["note"]


async def test_every_facet_combined_with_and(memory_server, memories) -> None:
    tags, first, last = {"sqlite", "storage", "wal"}, date(2025, 7, 1), date(2025, 9, 30)
    result = await search(
        memory_server,
        tags=sorted(tags),
        memory_type="configuration",
        start_date=first.isoformat(),
        end_date=last.isoformat(),
        **FACETED,
    )
    want = expected(
        memories,
        lambda m: (
            bool(tags & set(m.tags))
            and m.memory_type == "configuration"
            and first <= day_of(m) <= last
        ),
    )
    assert hashes(result["memories"]) == want and len(want) == 2


async def test_without_a_query_the_newest_come_first(memory_server, memories) -> None:
    rows = await every_page(memory_server, page_size=100, mode="faceted", tags="devbench")
    stamps = [row["created_at"] for row in rows]
    newest_first = sorted(
        (m for m in memories if "devbench" in m.tags), key=lambda m: -m.created_at_ts
    )
    assert rows and stamps == [m.created_at for m in newest_first]
    assert all("score" not in row for row in rows)


async def test_with_a_query_faceted_results_are_ranked_and_filtered(
    memory_server, memories
) -> None:
    result = await search(
        memory_server,
        query="database locked errors",
        memory_type="bug-fix",
        min_similarity=0.2,
        **FACETED,
    )
    similarities = [row["similarity"] for row in result["memories"]]
    assert result["order"] == "relevance" and min(similarities) >= 0.2
    assert hashes(result["memories"]) <= expected(memories, lambda m: m.memory_type == "bug-fix")
    assert "bench:bugfix-5" in result["memories"][0]["tags"]


async def test_min_similarity_cuts_the_ranked_list_and_says_what_it_hid(memory_server) -> None:
    """Regression: the floor hid results without a word; now the note counts them."""
    loose = await search(
        memory_server, query="database locked errors", min_similarity=-1.0, page_size=100
    )
    strict = await search(
        memory_server, query="database locked errors", min_similarity=0.4, page_size=100
    )
    above = [row for row in loose["memories"] if row["similarity"] >= 0.4]
    below = [row["similarity"] for row in loose["memories"] if row["similarity"] < 0.4]
    assert 0 < strict["total"] == len(above) < loose["total"] == len(loose["memories"])
    assert hashes(strict["memories"]) == hashes(above)
    assert f"hid {len(below)} more matching memories" in strict["note"]
    assert f"best similarity {max(below):.3f}" in strict["note"]
    assert loose.get("note") is None


async def test_similarity_is_the_cosine_similarity(memory_server, embedder) -> None:
    """A row's similarity and min_similarity are cosine similarities, as in every profile."""
    result = await search(memory_server, query="Why do I get database locked errors?")
    top = result["memories"][0]
    query, text = embedder.embed_query("Why do I get database locked errors?"), top["content"]
    cosine = sum(a * b for a, b in zip(query, embedder.embed_texts([text])[0], strict=True))
    assert top["similarity"] == pytest.approx(cosine, abs=1e-3)
    assert min(row["similarity"] for row in result["memories"]) >= 0.2


@pytest.mark.parametrize(
    "query", ["Why do I get database locked errors?", "bugfix", "release checklist", "qdrant"]
)
async def test_ranked_memories_come_in_the_order_of_their_scores(memory_server, query) -> None:
    rows = (await search(memory_server, query=query, min_similarity=-1.0, page_size=50))["memories"]
    assert len(rows) > 5
    scores = [row["score"] for row in rows]
    assert scores == sorted(scores, reverse=True)


async def test_keywords_lift_an_exact_term_match_into_the_top_five(memory_server) -> None:
    """Regression: dense-only search ranked the exact-term memory 6th (devbench)."""
    result = await search(
        memory_server, query="What embedding model does the service use?", page_size=5
    )
    assert any("bench:decision-3" in row["tags"] for row in result["memories"])


async def test_hybrid_applies_tags_and_type_and_names_what_it_ignores(
    memory_server, memories
) -> None:
    result = await search(
        memory_server,
        query="storage backend",
        tags="storage",
        memory_type="decision",
        start_date="2026-01-01",
        min_similarity=-1.0,
        page_size=100,
    )
    want = expected(memories, lambda m: "storage" in m.tags and m.memory_type == "decision")
    assert result["mode"] == "hybrid" and hashes(result["memories"]) == want
    assert "start_date" in result["note"]


async def test_tag_mode_applies_tags_and_dates_newest_first(memory_server, memories) -> None:
    result = await search(
        memory_server,
        mode="tag",
        tags="storage",
        end_date="2025-07-31",
        query="ignored",
        page_size=100,
    )
    want = expected(memories, lambda m: "storage" in m.tags and day_of(m) <= date(2025, 7, 31))
    assert hashes(result["memories"]) == want and result["order"] == "newest"
    stamps = [row["created_at"] for row in result["memories"]]
    assert stamps == sorted(stamps, reverse=True)
    assert "query" in result["note"]


async def test_faceted_without_a_facet_falls_back_to_hybrid(memory_server) -> None:
    faceted = await search(
        memory_server, mode="faceted", query="Codex timeout", min_similarity=-0.4
    )
    hybrid = await search(memory_server, mode="hybrid", query="Codex timeout", min_similarity=-0.4)
    assert faceted["mode"] == "hybrid" and "no facet" in faceted["note"]
    assert faceted["memories"] == hybrid["memories"] and faceted["total"] > 0


async def test_pages_of_the_newest_cover_everything_once(memory_server, memories) -> None:
    rows = await every_page(memory_server, page_size=7)
    assert len(rows) == len(hashes(rows)) == len(memories)
    assert hashes(rows) == {m.content_hash for m in memories}


async def test_pages_of_a_ranked_search_match_one_long_page(memory_server) -> None:
    query = {"query": "storage configuration", "min_similarity": -0.8}
    rows = await every_page(memory_server, page_size=4, **query)
    whole = await search(memory_server, page_size=100, **query)
    assert rows == whole["memories"] and len(rows) == len(hashes(rows)) > 8


async def test_a_page_past_the_end_is_empty(memory_server, memories) -> None:
    result = await search(memory_server, page=9, page_size=10)
    pages = -(-len(memories) // 10)
    assert (result["total"], result["total_pages"], result["has_more"]) == (
        len(memories),
        pages,
        False,
    )
    assert result.get("memories") == []


async def test_an_empty_tag_list_matches_nothing_and_says_why(memory_server) -> None:
    result = await search(memory_server, tags=[], mode="faceted")
    assert result["total"] == 0 and "'tags' is an empty list" in result["note"]


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"tags": ["nosuchtag"], "mode": "tag"}, "Unknown value [\"nosuchtag\"] in 'tags'"),
        ({"memory_type": "bogus", "mode": "faceted"}, "Unknown value \"bogus\" in 'memory_type'"),
        ({"query": "locks", "memory_type": "bogus"}, "in 'memory_type'; stored: "),
    ],
)
async def test_a_value_no_memory_has_is_named_with_the_stored_ones(
    memory_server, memories, arguments, named
) -> None:
    result = await search(memory_server, **arguments)
    assert result["total"] == 0 and named in result["note"]
    stored = sorted({m.memory_type for m in memories} if "memory_type" in arguments else set())
    assert all(kind in result["note"] for kind in stored[:3])


async def test_a_stored_tag_that_matches_nothing_here_adds_no_note(memory_server) -> None:
    real = await search(memory_server, tags=["bench:bugfix-5"], end_date="1990-01-01", mode="tag")
    assert real["total"] == 0 and "Unknown value" not in (real.get("note") or "")


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({"start_date": "2026/03/01"}, ["'start_date'", '"2026/03/01"', "YYYY-MM-DD"]),
        ({"end_date": "March 1"}, ["'end_date'", '"March 1"', "YYYY-MM-DD"]),
        ({"mode": "semantic"}, ["'mode'", '"semantic"', "'hybrid'", "'tag'", "'faceted'"]),
        ({"page": 0}, ["'page'", "0", "greater than or equal to 1"]),
        ({"page_size": 0}, ["'page_size'", "0", "greater than or equal to 1"]),
        ({"page_size": 101}, ["'page_size'", "101", "less than or equal to 100"]),
        ({"mode": "tag"}, ["'tags'", "mode='tag'"]),
        ({"min_similarity": 1.5}, ["'min_similarity'", "1.5"]),
    ],
)
async def test_bad_parameters_are_clear_errors(memory_server, arguments, words) -> None:
    with pytest.raises(ToolError) as error:
        await search(memory_server, **arguments)
    assert all(word in str(error.value) for word in words), str(error.value)


async def test_schema_types_and_read_only_hint(memory_server) -> None:
    async with Client(memory_server) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
    assert {"store_memory", "delete_memory", "search"} <= set(tools)
    props = tools["search"].input_schema["properties"]
    assert set(props) == {
        "query",
        "mode",
        "tags",
        "match_all",
        "start_date",
        "end_date",
        "memory_type",
        "page",
        "page_size",
        "min_similarity",
        "include_superseded",
        "include_expired",
        "date_boost",
        "explain",
    }
    assert props["mode"]["enum"] == ["hybrid", "tag", "faceted"]
    assert (props["page_size"]["minimum"], props["page_size"]["maximum"]) == (1, 100)
    assert props["min_similarity"]["default"] == 0.2
    assert tools["search"].annotations.readOnlyHint is True
    assert (
        not tools["store_memory"].annotations or not tools["store_memory"].annotations.readOnlyHint
    )


async def test_the_ranked_total_is_every_hit_above_the_floor(memory_server, memories) -> None:
    """The total comes from an ids-only count above the floor, not from the page's length."""
    query = {"query": "storage configuration", "min_similarity": 0.1}
    whole = await search(memory_server, page_size=100, **query)
    first = await search(memory_server, page_size=3, **query)
    assert first["total"] == whole["total"] == len(whole["memories"]) > 3
    assert len(first["memories"]) == 3 and first["has_more"]


async def test_a_floor_at_minus_one_counts_every_match(memory_server, memories) -> None:
    """At min_similarity -1 the total came from ranking up to 1,000 points and
    converting each; every cosine is at least -1, so it is the count of the filter's matches."""
    result = await search(memory_server, query="storage", min_similarity=-1.0, page_size=5)
    assert result["total"] == len(memories) and len(result["memories"]) == 5
    probes = await search(memory_server, query="storage", tags="probe", min_similarity=-1.0)
    stored_probes = [m for m in memories if "probe" in m.tags]
    assert stored_probes and probes["total"] == len(stored_probes) and "note" not in probes


def test_a_counted_search_is_the_search_page_and_the_hits_above_the_floor(
    memory_runtime, embedder, memories
) -> None:
    """A search with a count cap gives the page the search without gives (dense and hybrid,
    any offset) and counts the hits a search returns above that floor, stopping at the cap,
    with the filter applied."""
    backend, query = memory_runtime.backend, "database storage settings"
    dense = embedder.embed_query(query)
    base = SearchRequest(collection=COLLECTION, dense=dense, limit=4, score_threshold=-1.0)

    def seen(points):
        return [(point.id, round(point.score, 6), point.payload) for point in points]

    for floor in (-0.5, 0.1, 0.25, 0.4):
        every = backend.search(
            base.model_copy(update={"limit": 100, "score_threshold": floor, "with_payload": False})
        ).hits
        for text, offset in ((None, 0), (None, 3), (query, 0), (query, 3)):
            request = base.model_copy(
                update={"text": text, "offset": offset, "score_threshold": floor}
            )
            counted = backend.search(request.model_copy(update={"count_cap": 100}))
            assert counted.count == len(every)
            searched = backend.search(request).hits
            assert seen(counted.hits) == seen(searched) and all(p.payload for p in counted.hits)
    assert backend.search(base.model_copy(update={"count_cap": 7})).count == 7
    probes = build_filter([TAGS_ANY], {"tags": ["probe"]})
    counted = backend.search(
        base.model_copy(update={"text": query, "filter": probes, "count_cap": 100})
    )
    assert counted.count == sum("probe" in m.tags for m in memories) > 0
    assert {point.payload["memory_type"] for point in counted.hits} == {"probe"}
