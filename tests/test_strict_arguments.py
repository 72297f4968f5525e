"""Every MCP tool refuses what it cannot honour exactly, naming the parameter.

Refusals come before any store work, so most tests need no data; the date bound runs on each
engine.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from pydantic import ValidationError

from scoperag.core.config.settings import Settings
from scoperag.server.mcp.app import build_server
from scoperag.server.mcp.tooling import describe_validation_error, params_model
from scoperag.server.profiles.dnd.models import LOOKUPS, LookupParams
from scoperag.server.runtime import Runtime


@pytest.fixture()
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    runtime = Runtime(Settings(data_dir=tmp_path, backend="edge"))
    async with Client(build_server(runtime)) as connected:
        yield connected
    runtime.close()


async def refusal(client: Client, tool: str, arguments: dict[str, Any]) -> str:
    with pytest.raises(ToolError) as caught:
        await client.call_tool(tool, arguments)
    return str(caught.value)


async def test_every_input_schema_forbids_unknown_keys(client: Client) -> None:
    """Defect: no tool said `additionalProperties: false`, qdrant-ingest-pdf included."""
    tools = await client.list_tools()
    assert len(tools) >= 17
    open_schemas = [
        t.name for t in tools if t.input_schema.get("additionalProperties") is not False
    ]
    assert open_schemas == []


# The tools that change the store, and whether they may replace or delete what is stored.
WRITE_TOOLS = {
    "store_memory": False,  # content-addressed: only adds
    "update_memory": False,  # a new version; the old one is kept
    "merge_memories": False,  # a new memory; the members are kept
    "ingest_memories": False,
    "qdrant-store": False,
    "delete_memory": True,
    "qdrant-delete-document": True,
    "set_reading_position": True,  # replaces the saved position
    "ingest_book": True,  # a re-ingest replaces the book's old version
    "qdrant-ingest-pdf": True,
    "ingest_dnd": True,
    "ingest_docs": True,
}


async def test_every_tool_says_what_it_changes(client: Client) -> None:
    """Defect: store_memory and delete_memory had no annotations, which MCP reads as
    destructive, not idempotent and open-world alike; every tool now states its hints."""
    hints = {tool.name: tool.annotations for tool in await client.list_tools()}
    for name, hint in hints.items():
        assert hint is not None and hint.openWorldHint is False, name
        assert hint.readOnlyHint is (name not in WRITE_TOOLS), name
    writes = {name: hints[name] for name in WRITE_TOOLS}
    assert {name: hint.destructiveHint for name, hint in writes.items()} == WRITE_TOOLS
    once = {"update_memory", "merge_memories"}  # a second call finds the memory replaced
    assert {name for name, hint in writes.items() if not hint.idempotentHint} == once


@pytest.mark.parametrize(
    ("tool", "arguments", "unknown", "meant"),
    [
        ("qdrant-find", {"query": "q", "doc_id": "a"}, "doc_id", "document_id"),
        ("qdrant-find", {"query": "q", "page_lable": "iv"}, "page_lable", "page_label"),
        ("search_book", {"book_id": "b", "query": "q", "reader_id": "x"}, "reader_id", "reader"),
        ("qdrant-ingest-pdf", {"paths": ["/x"], "path": "/x"}, "path", "paths"),
        ("lookup_spell", {"levle": 3}, "levle", "level"),
        ("elf_docs_search_l0", {"query": "q", "scpe": "org_shared"}, "scpe", "scope"),
        ("list_books", {"book": "x"}, "book", None),
    ],
)
async def test_unknown_arguments_are_named_with_the_close_declared_name(
    client: Client, tool: str, arguments: dict, unknown: str, meant: str | None
) -> None:
    """Defect: `qdrant-find(doc_id=...)`, `page_lable=...` and `search_book(reader_id=...)` ran
    unfiltered or as another reader and reported success."""
    message = await refusal(client, tool, arguments)
    assert f"Unknown parameter '{unknown}'" in message
    if meant:
        assert f"Did you mean '{meant}'?" in message
    else:
        assert "Did you mean" not in message


async def test_an_unknown_argument_is_refused_after_good_calls_of_the_same_tool(
    client: Client,
) -> None:
    """The middleware remembers each tool's parameters after its first lookup; an
    argument outside them must still be refused on every later call. qdrant-ingest-pdf is a
    plain FastMCP function tool, which would ignore the argument if the middleware let it by."""
    declared = {"paths": ["/nowhere/at/all.pdf"]}
    for _ in range(2):
        try:
            await client.call_tool("qdrant-ingest-pdf", declared)
        except ToolError as exc:  # the path is refused, never an argument
            assert "Unknown parameter" not in str(exc)
        message = await refusal(client, "qdrant-ingest-pdf", {**declared, "path": "/x"})
        assert "Unknown parameter 'path'" in message


BIG = 2**63
REFUSED = [
    ("set_reading_position", {"book_id": "b", "sentence": BIG}, "sentence"),
    ("set_reading_position", {"book_id": "b", "chapter": -1}, "chapter"),
    ("set_reading_position", {"book_id": "b", "quote": "   "}, "quote"),
    ("qdrant-find", {"query": "q", "physical_page_index": BIG}, "physical_page_index"),
    ("qdrant-find", {"query": " \t\n"}, "query"),
    ("qdrant-find", {"query": "a\x00b"}, "query"),
    ("qdrant-find", {"query": "a\ud800b"}, "query"),
    ("qdrant-find", {"query": "q", "limit": 0}, "limit"),
    ("qdrant-find", {"query": "q", "document_id": ""}, "document_id"),
    ("qdrant-store", {"information": "x", "metadata": {"k": "v" * 70_000}}, "metadata"),
    ("qdrant-store", {"information": "x", "metadata": {"k\x00": 1}}, "metadata"),
    ("qdrant-store", {"information": "x", "metadata": {"n": BIG}}, "metadata"),
    ("lookup_spell", {"level": BIG}, "level"),
    ("lookup_creature", {"challenge_rating": "1e400"}, "challenge_rating"),
    ("search", {"query": "q", "page_size": 101}, "page_size"),
    ("search", {"tags": ["ok"] * 1001}, "tags"),
    ("store_memory", {"content": "x" * 100_001}, "content"),
    ("get_reading_position", {"book_id": "b", "reader": " "}, "reader"),
    ("elf_docs_search_l0", {"query": "q", "top_k": BIG}, "top_k"),
]


@pytest.mark.parametrize(("tool", "arguments", "parameter"), REFUSED)
async def test_out_of_bounds_values_are_refused_naming_the_parameter(
    client: Client, tool: str, arguments: dict, parameter: str
) -> None:
    """Defect: huge ints, NaN/1e400, NUL bytes, lone surrogates and blank values reached the
    engines (crashes, or silently different results)."""
    message = await refusal(client, tool, arguments)
    assert f"'{parameter}" in message
    assert len(message) < 2_000


async def test_a_1_mb_quote_is_refused_fast_and_not_echoed(client: Client) -> None:
    """Defect: a 1 MB quote cost 6 s under the global lock and was echoed back twice."""
    started = time.monotonic()
    message = await refusal(client, "set_reading_position", {"book_id": "b", "quote": "x" * 2**20})
    assert "'quote'" in message and "2000" in message
    assert len(message) < 1_000
    print(f"1 MB quote refused in {time.monotonic() - started:.3f} s")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "inf", "1e400"])
def test_float_filters_are_finite(value: object) -> None:
    """NaN cannot cross JSON-RPC (the client sends null), so the model is checked directly."""
    model = next(tool for tool in LOOKUPS if tool.tool == "lookup_creature")
    params = params_model("P", LookupParams, model.fields)
    with pytest.raises(ValidationError) as caught:
        params.model_validate({"challenge_rating": value})
    assert "challenge_rating" in describe_validation_error(caught.value)


async def test_level_is_a_spell_level(client: Client) -> None:
    message = await refusal(client, "lookup_spell", {"level": 10})
    assert "'level'" in message and "9" in message


async def test_the_last_day_python_can_hold_is_a_valid_end_date(
    make_runtime: Callable[..., Runtime],
) -> None:
    """Defect: `end_date=9999-12-31` crashed (the next day overflows Python's date)."""
    runtime = make_runtime(profiles=["memory"])
    async with Client(build_server(runtime)) as connected:
        await connected.call_tool("store_memory", {"content": "dated note", "tags": ["t"]})
        for mode in ("faceted", "tag"):
            result = await connected.call_tool(
                "search",
                {"mode": mode, "tags": ["t"], "start_date": "0001-01-01", "end_date": "9999-12-31"},
            )
            assert "dated note" in result.content[0].text


async def test_an_unknown_tool_name_suggests_the_close_one(client: Client) -> None:
    message = await refusal(client, "qdrant_find", {"query": "q"})
    assert message.startswith("Unknown tool 'qdrant_find'; did you mean 'qdrant-find'?")
    assert "search_dnd_content" in message  # the tools there are


async def test_a_missing_argument_is_named_as_missing(client: Client) -> None:
    message = await refusal(client, "qdrant-find", {"document_id": "qpdf-manual-5.1.3"})
    assert message == "Missing required argument 'query'."


@pytest.mark.parametrize(
    ("arguments", "shown"),
    [
        ({"query": None}, "Invalid value for 'query': null."),
        ({"query": "q", "limit": "many"}, "Invalid value for 'limit': \"many\"."),
        ({"query": "q", "document_id": ["a"]}, "Invalid value for 'document_id': [\"a\"]."),
    ],
)
async def test_a_refused_value_is_shown_as_json(
    client: Client, arguments: dict, shown: str
) -> None:
    assert (await refusal(client, "qdrant-find", arguments)).startswith(shown)
