"""A date named in a memory question lifts memories of that date: a boost, never a filter."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastmcp import Client, FastMCP

from scoperag.core.contracts.memory import TIME_KEY
from scoperag.pipelines.memories import make_memory, store_memories
from scoperag.retrievers.named_dates import named_date
from scoperag.server.mcp.app import build_server
from scoperag.server.runtime import Runtime

PLANNING = {  # created_at -> content: the same decision, worded alike, at three dates
    "2024-03-12T10:00:00Z": "Planning meeting: we decided to move the launch to the first Friday.",
    "2023-03-14T10:00:00Z": "Planning meeting: we decided to move the launch to the first Friday!",
    "2025-09-02T10:00:00Z": "Planning meeting: we decided to move the launch to a first Friday.",
}
QUESTION = "What did we decide at the planning meeting in March 2024?"


@pytest.fixture(scope="module")
def dated_server(make_runtime: Callable[..., Runtime]) -> FastMCP:
    runtime = make_runtime(profiles=["memory"])
    memories = [
        make_memory(content, [f"at:{created[:10]}"], "decision", created)
        for created, content in PLANNING.items()
    ]
    assert len(store_memories(runtime.backend, runtime.embedder, memories).stored) == 3
    return build_server(runtime)


async def _search(server: FastMCP, **arguments: Any) -> list[dict[str, Any]]:
    async with Client(server) as client:
        result = await client.call_tool("search", {"query": QUESTION, **arguments})
    return result.structured_content


def _days(rows: list[dict[str, Any]]) -> list[str]:
    return [row["created_at"][:10] for row in rows]


async def test_a_month_named_ranks_that_months_memory_first_and_keeps_the_others(
    dated_server: FastMCP,
) -> None:
    plain = (await _search(dated_server, date_boost=False))["memories"]
    assert len(plain) == 3
    similarities = [row["similarity"] for row in plain]
    assert max(similarities) - min(similarities) < 0.02  # equally similar by meaning
    boosted = (await _search(dated_server))["memories"]
    assert _days(boosted)[0] == "2024-03-12"  # above the same words a year away
    assert sorted(_days(boosted)) == sorted(_days(plain))  # a boost: nothing is dropped


async def test_explain_shows_the_date_read_and_the_boost(dated_server: FastMCP) -> None:
    found = await _search(dated_server, explain=True)
    assert found["explain"]["date"]["text"] == "March 2024"
    assert found["explain"]["date"]["start"] == "2024-03-01T00:00:00Z"
    assert found["explain"]["date"]["end"] == "2024-04-01T00:00:00Z"
    boosts = {row["created_at"][:10]: row["explain"]["date_boost"] for row in found["memories"]}
    assert boosts["2024-03-12"] > boosts["2023-03-14"] >= 0
    assert "date" not in (await _search(dated_server, explain=True, date_boost=False))["explain"]


@pytest.mark.parametrize(
    ("query", "text", "unit", "start"),
    [
        ("what happened on 14 June 2022?", "14 June 2022", "day", "2022-06-14"),
        ("notes from June 14th, 2022", "June 14th, 2022", "day", "2022-06-14"),
        ("the 3rd of May 2023 call", "3rd of May 2023", "day", "2023-05-03"),
        ("incident 2022-06-14 report", "2022-06-14", "day", "2022-06-14"),
        ("decisions in Sept 2021 and in 2020", "Sept 2021", "month", "2021-09-01"),
        ("the review during 2023", "during 2023", "year", "2023-01-01"),
        ("on 31 February 2024", "February 2024", "month", "2024-02-01"),  # no such day
    ],
)
def test_dates_in_the_forms_people_write_them(query: str, text: str, unit: str, start: str) -> None:
    boost = named_date(query, TIME_KEY)
    assert boost is not None and (boost.text, boost.unit) == (text, unit)
    from datetime import UTC, datetime

    assert datetime.fromtimestamp(boost.start, UTC).date().isoformat() == start


@pytest.mark.parametrize("query", ["invoice 2023 from Acme", "in March", "ticket 2024-991"])
def test_numbers_and_dates_without_a_year_are_not_dates(query: str) -> None:
    assert named_date(query, TIME_KEY) is None
