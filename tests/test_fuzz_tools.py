"""Property-based: every MCP tool and the docs HTTP API, called with generated arguments (right
and wrong types, unknown keys, huge and odd strings, extreme numbers), answer or refuse; never an
unhandled exception, and every refusal of an argument names it.

Bounded: a fixed number of derandomised examples per tool, on one small edge store.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from scoperag.core.config.settings import Settings
from scoperag.core.embedding.embedders import Embedder
from scoperag.server.http.app import build_http_app
from scoperag.server.mcp.app import build_server
from scoperag.server.profiles.docs.filters import DocsSearchRequest
from scoperag.server.profiles.docs.tools import SEARCH_PATH
from scoperag.server.runtime import Runtime

EXAMPLES = 25
ODD_STRINGS = [
    "",
    " \t",
    "\x00",
    "a\x00b",
    "\ud800",
    "fox",
    "org_shared",
    "9999-12-31",
    "0001-01-01",
    "2025-06-01T12:00:00Z",
    "1e400",
    "NaN",
    "1/8",
    "x" * 3_000,
    "y" * 2**20,
]
ODD_NUMBERS = [0, -1, 1, 9, 10, 100, 101, 2**63 - 1, 2**63, -(2**63) - 1, 1e308, -0.0, 0.5]
UNKNOWN_KEYS = ["doc_id", "page_lable", "reader_id", "scpe", "x"]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from(ODD_NUMBERS),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(ODD_STRINGS),
    st.text(max_size=30),
)
values = st.one_of(
    scalars,
    st.lists(scalars, max_size=4),
    st.dictionaries(
        st.sampled_from(["k", "document_id", "\x00", "chunk_index"]), scalars, max_size=3
    ),
)
NAMED = re.compile(r"'([^']+)'")


def arguments(declared: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Some declared parameters with any values, sometimes an undeclared one too."""
    known = st.fixed_dictionaries({}, optional={name: values for name in declared})
    unknown = st.dictionaries(st.sampled_from(UNKNOWN_KEYS), values, max_size=1)
    return st.tuples(known, unknown).map(lambda pair: {**pair[1], **pair[0]})


@pytest.fixture(scope="module")
def session(embedder: Embedder, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple]:
    """One connected in-memory client on an edge store holding a note and a memory."""
    data_dir: Path = tmp_path_factory.mktemp("fuzz")
    allowed = data_dir / "allowed"
    allowed.mkdir()
    settings_ = Settings(data_dir=data_dir / "store", backend="edge", allowed_dirs=[allowed])
    runtime = Runtime(settings_, embedder=embedder)
    runner = asyncio.Runner()
    client = Client(build_server(runtime))
    runner.run(client.__aenter__())
    runner.run(client.call_tool("qdrant-store", {"information": "a fox", "metadata": {"k": 1}}))
    runner.run(client.call_tool("store_memory", {"content": "fox memory", "tags": ["t"]}))
    tools = {tool.name: tool for tool in runner.run(client.list_tools())}
    yield runner, client, tools
    runner.run(client.__aexit__(None, None, None))
    runner.close()
    runtime.close()


TOOLS = [
    "qdrant-find",
    "qdrant-store",
    "qdrant-list-documents",
    "qdrant-delete-document",
    "qdrant-ingest-pdf",
    "set_reading_position",
    "get_reading_position",
    "list_books",
    "search_book",
    "ingest_book",
    "store_memory",
    "delete_memory",
    "search",
    "ingest_memories",
    "update_memory",
    "memory_history",
    "merge_memories",
    "find_duplicates",
    "search_dnd_content",
    "lookup_spell",
    "lookup_creature",
    "lookup_equipment",
    "lookup_character_option",
    "lookup_rule",
    "list_documents",
    "ingest_dnd",
    "elf_docs_search_l0",
    "ingest_docs",
]


# Arguments each tool accepts, so that a swept value is checked with the rest valid.
BASE: dict[str, dict[str, Any]] = {
    "qdrant-find": {"query": "fox"},
    "qdrant-store": {"information": "a note"},
    "qdrant-ingest-pdf": {"paths": ["/nonexistent.pdf"]},
    "qdrant-delete-document": {"document_id": "nothing"},
    "ingest_book": {"path": "book.txt", "book_id": "b"},
    "ingest_memories": {"path": "memories.json"},
    "ingest_dnd": {"paths": ["dnd"]},
    "ingest_docs": {"path": "docs.jsonl"},
    "set_reading_position": {"book_id": "b", "sentence": 0},
    "get_reading_position": {"book_id": "b"},
    "search_book": {"book_id": "b", "query": "fox"},
    "store_memory": {"content": "swept memory"},
    "delete_memory": {"content_hash": "0" * 64},
    "update_memory": {"content_hash": "0" * 64, "content": "swept update"},
    "memory_history": {"content_hash": "0" * 64},
    "merge_memories": {"content_hashes": ["0" * 64, "1" * 64]},
    "search_dnd_content": {"query": "fox"},
    "elf_docs_search_l0": {"query": "fox"},
}
# The values every parameter of every tool is tried with, one parameter at a time.
SWEEP = [
    "",
    " \t",
    "a\x00b",
    "\ud800",
    "y" * 2**20,
    "1e400",
    2**63,
    -(2**63) - 1,
    1e308,
    -1,
    True,
    [],
    {},
]


def _named(message: str) -> set[str]:
    """The parameters a refusal names: each one itself, or an item of it (`paths.0`)."""
    return {found.split(".")[0] for found in NAMED.findall(message)}


@pytest.mark.parametrize("name", TOOLS)
def test_each_parameter_with_each_odd_value(session: tuple, name: str) -> None:
    """Each declared parameter, alone odd among valid arguments: answered or refused by name."""
    runner, client, tools = session
    declared = list(tools[name].input_schema.get("properties", {}))
    for parameter in declared:
        for value in SWEEP:
            given_arguments = {**BASE.get(name, {}), parameter: value}
            try:
                runner.run(client.call_tool(name, given_arguments))
            except ToolError as exc:
                message = str(exc)
                assert not message.startswith("Error calling tool"), (parameter, value, message)
                assert len(message) < 4_000, message[:300]
                if message.startswith(("Invalid value for", "Unknown parameter")):
                    assert _named(message) & set(given_arguments), message[:300]


def test_the_fuzzed_tools_are_all_the_tools(session: tuple) -> None:
    _, _, tools = session
    assert set(TOOLS) == set(tools)


@pytest.mark.parametrize("name", TOOLS)
def test_generated_arguments_get_a_result_or_a_named_refusal(session: tuple, name: str) -> None:
    runner, client, tools = session
    declared = list(tools[name].input_schema.get("properties", {}))

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(arguments(declared))
    def call(given_arguments: dict[str, Any]) -> None:
        try:
            runner.run(client.call_tool(name, given_arguments))
        except ToolError as exc:
            message = str(exc)
            assert not message.startswith("Error calling tool"), (given_arguments, message)
            assert len(message) < 4_000, message[:300]
            if message.startswith(("Invalid value for", "Unknown parameter")):
                assert _named(message) & {*declared, *given_arguments}, (given_arguments, message)

    call()


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    settings_ = Settings(
        data_dir=tmp_path_factory.mktemp("http"), backend="edge", profiles=["docs"]
    )
    runtime = Runtime(settings_)
    with TestClient(build_http_app(runtime, build_server(runtime))) as client:
        yield client
    runtime.close()


DOCS_PARAMETERS = list(DocsSearchRequest.model_fields)
bodies = st.one_of(
    arguments(DOCS_PARAMETERS),
    values,
    st.binary(max_size=64),
    st.sampled_from([b"{", b"[" * 50_000, b'{"query": "\xff"}', b"null", b'"x"']),
)


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(body=bodies, json_type=st.booleans())
def test_the_docs_api_answers_or_refuses_with_4xx(
    http: TestClient, body: Any, json_type: bool
) -> None:
    headers = {"content-type": "application/json" if json_type else "text/plain"}
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    response = http.post(SEARCH_PATH, content=content, headers=headers)
    assert response.status_code in (200, 400, 415), response.text[:300]
    if response.status_code == 400:
        refused = response.json()
        assert refused["field"] in {
            *DOCS_PARAMETERS,
            "body",
            *(body if isinstance(body, dict) else ()),
        }
        assert len(response.content) < 4_000
