"""One model of a result, checked on every search tool over the in-process MCP client, on every
engine: each hit's figures are its explanation's, on one scale; explain changes nothing else;
what an explanation dropped is ranked by the fusion the hits used and named as they are; each
declared hit shape is the one the tool's output schema states."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from test_docs_search import corpus  # noqa: F401

from scoperag.core.config.settings import Settings
from scoperag.server.mcp.app import build_server
from scoperag.server.profiles import declarations
from scoperag.server.results.hits import hits_of, shape_of, without_explain
from scoperag.server.runtime import Runtime

READER = "result-model"
# (the fixture holding the store, tool, arguments): every search and lookup tool's kind
CASES = [
    ("pdf_runtime", "qdrant-find", {"query": "page labels and the number tree", "limit": 5}),
    ("books_runtime", "search_book", {"book_id": "pride", "query": "a single man", "top_k": 5}),
    ("memory_runtime", "search", {"query": "database locked errors", "page_size": 5}),
    ("dnd_ingest", "search_dnd_content", {"query": "fireball", "limit": 3}),
    ("dnd_ingest", "lookup_spell", {"name": "fire", "limit": 1}),
    ("dnd_ingest", "lookup_creature", {"limit": 3}),
    ("corpus", "elf_docs_search_l0", {"query": "what failed and how was it fixed", "top_k": 3}),
]
IDS = [case[1] for case in CASES]
Answered = tuple[str, dict[str, Any], dict[str, Any]]


def _runtime(request: pytest.FixtureRequest, fixture: str) -> Runtime:
    """The store `fixture` holds, on the engine under test (the test asks for `backend_name`)."""
    value = request.getfixturevalue(fixture)
    return value[0] if isinstance(value, tuple) else value


@pytest.fixture(params=CASES, ids=IDS)
async def answered(request: pytest.FixtureRequest, backend_name: str) -> Answered:
    """(tool, its answer without explain, with explain) for each case, on each engine."""
    fixture, tool, arguments = request.param
    return tool, *await _answers(_runtime(request, fixture), tool, arguments)


async def _answers(runtime: Runtime, tool: str, arguments: dict[str, Any]) -> tuple[dict, dict]:
    """The tool's answer without and with explain (a book's reader placed first)."""
    if tool == "search_book":
        arguments = {**arguments, "reader": READER}
    async with Client(build_server(runtime)) as client:
        if tool == "search_book":
            where = {"book_id": "pride", "reader": READER, "sentence": 60}
            await client.call_tool("set_reading_position", where)
        plain = await client.call_tool(tool, arguments)
        explained = await client.call_tool(tool, {**arguments, "explain": True})
    return plain.structured_content, explained.structured_content


async def test_every_hit_carries_its_explanations_figures_on_one_scale(answered: Answered) -> None:
    """A hit's similarity, score and fusion are its explanation's (one computation, copied),
    and the similarity is a cosine, -1 to 1, or null for a hit found by name alone."""
    tool, _, explained = answered
    hits = hits_of(tool, explained)
    assert hits and all(hit.explain for hit in hits)
    for hit in hits:
        why = hit.explain
        assert hit.fields["similarity"] == why["similarity"]
        assert hit.fields["score"] == why["fused"]["score"]
        assert hit.fields["fusion"] == why["fused"]["method"]
        if hit.fields["similarity"] is None:
            assert tool.startswith("lookup_") or hit.fields["name_similarity"] is not None
        else:
            assert -1.0 <= hit.fields["similarity"] <= 1.0
    if not tool.startswith("lookup_"):
        assert any(hit.fields["similarity"] is not None for hit in hits)


async def test_explain_on_or_off_gives_the_same_answer(answered: Answered) -> None:
    """The same hits and the same figures, to the last digit: a search is one computation
    whether or not it is explained (ties broken by a stable key), on every engine."""
    tool, plain, explained = answered
    assert hits_of(tool, plain) and "explain" in explained
    assert without_explain(tool, explained) == plain


async def test_dropped_candidates_are_ranked_as_the_hits_and_named_as_they_are(
    answered: Answered,
) -> None:
    """Regression: dnd's hits were ranked by RRF and its drops by "dbsf rank", and every drop
    was named by a point id only."""
    tool, _, explained = answered
    hits = hits_of(tool, explained)
    dropped = explained["explain"]["dropped"]
    assert hits and dropped
    identity = set(shape_of(tool).identity)
    for drop in dropped:
        assert drop["identity"] and set(drop["identity"]) <= identity, drop
    fusion = hits[0].fields["fusion"]
    limit = [drop for drop in dropped if drop["stage"] == "limit"]
    ranks = []
    for drop in limit:
        ranked = re.match(r"(\w+) rank (\d+)", drop["reason"])
        assert ranked, drop["reason"]
        word = {"name_order": "alphabetical"}.get(fusion, fusion)
        assert ranked[1] == word, (drop["reason"], fusion)
        ranks.append(int(ranked[2]))
    assert ranks == sorted(ranks) and all(rank > len(hits) for rank in ranks)


def test_each_declared_hit_shape_is_the_output_schemas(tmp_path: Path) -> None:
    """`hits_of` reads what each tool's output schema says: the list and its items' text and
    identity fields (and, for a search, the figures)."""
    profiles = [profile.name for profile in declarations()]
    server = build_server(Runtime(Settings(data_dir=tmp_path, profiles=profiles)))
    tools = {tool.name: tool for tool in _tools(server)}
    declared = {tool: shape for p in declarations() for tool, shape in p.hits.items()}
    assert {"qdrant-find", "search", "search_book", "lookup_rule", "elf_docs_search_l0"} <= set(
        declared
    )
    for tool, shape in declared.items():
        schema = tools[tool].output_schema
        hits = _resolved(schema, schema["properties"][shape.hits])
        assert hits["type"] == "array", tool
        item = _resolved(schema, hits["items"])["properties"]
        searches = "explain" in tools[tool].parameters["properties"]
        figures = {"score", "fusion", "similarity"} if searches else set()
        assert {shape.text, *shape.identity, *figures} <= set(item), tool


def _tools(server: Any) -> list[Any]:
    import asyncio

    return asyncio.run(server.list_tools(run_middleware=False))


def _resolved(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """`node`, or the definition its `$ref` names."""
    ref = node.get("$ref")
    return schema["$defs"][ref.removeprefix("#/$defs/")] if ref else node
