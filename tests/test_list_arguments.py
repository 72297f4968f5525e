"""List parameters as clients send them: the MCP Inspector and some LLM clients send a list as
the text of a JSON array (`tags='["deploy","staging"]'`). That text is the array, for every list
parameter of every tool; an item holding `[`, `]` or `"` (a piece of such an array split on its
commas) is refused with an error that says why. Over FastMCP's real in-process client."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from fastmcp.exceptions import ToolError

from scoperag.core.contracts.memory import normalise_tags
from scoperag.core.errors import InvalidParameterError
from scoperag.server.mcp.app import build_server
from scoperag.server.runtime import Runtime
from scoperag.server.samples import SAMPLES


@pytest.fixture
def runtime(make_runtime: Callable[..., Runtime]) -> Runtime:
    return make_runtime(profiles=["memory", "dnd", "pdf"], allowed_dirs=[str(SAMPLES)])


async def _call(runtime: Runtime, tool: str, **arguments: Any) -> dict[str, Any]:
    async with Client(build_server(runtime)) as client:
        result = await client.call_tool(tool, arguments)
    return result.structured_content


async def test_tags_sent_as_a_json_array_text_are_that_array(runtime: Runtime) -> None:
    stored = await _call(
        runtime, "store_memory", content="Deploys moved to Thursdays.", tags='["deploy","staging"]'
    )
    assert stored["stored"] is True
    found = await _call(runtime, "search", mode="tag", tags='["staging"]')
    assert [row["tags"] for row in found["memories"]] == [["deploy", "staging"]]
    both = await _call(runtime, "search", mode="tag", tags='["deploy", "staging"]', match_all=True)
    assert [row["content_hash"] for row in both["memories"]] == [stored["content_hash"]]


@pytest.mark.parametrize(
    ("tags", "mark"),
    [('["deploy","staging"', "["), (["deploy", 'staging"'], '"'), ("deploy, ]", "]")],
)
async def test_a_tag_holding_array_marks_is_refused_saying_why(
    runtime: Runtime, tags: Any, mark: str
) -> None:
    await _call(runtime, "store_memory", content="Another note.", tags="other")
    with pytest.raises(ToolError) as refused:
        await _call(runtime, "store_memory", content="A note.", tags=tags)
    message = str(refused.value)
    assert "tags" in message and f"holds {mark}" in message
    assert "piece of a JSON array read as text" in message
    found = await _call(runtime, "search", mode="tag", tags="deploy")
    assert found["memories"] == []  # nothing stored


async def test_a_filter_list_sent_as_json_text_is_that_list(runtime: Runtime) -> None:
    ingested = await _call(runtime, "ingest_dnd", paths=f'["{SAMPLES / "dnd"}"]')
    assert ingested
    found = await _call(runtime, "search_dnd_content", query="fire", documents='["wotc-srd"]')
    assert found["results"] and {hit["document"] for hit in found["results"]} == {"wotc-srd"}
    none = await _call(runtime, "search_dnd_content", query="fire", documents="[]")
    assert none["results"] == []
    with pytest.raises(ToolError, match=r"'documents\.0'.*holds \["):
        await _call(runtime, "search_dnd_content", query="fire", documents=['["wotc-srd"'])


async def test_a_path_list_sent_as_json_text_is_that_list(runtime: Runtime) -> None:
    pdf = SAMPLES / "qpdf-page-labels-num-tree.pdf"
    report = await _call(runtime, "qdrant-ingest-pdf", paths=f'["{pdf}"]')
    assert report
    listed = await _call(runtime, "qdrant-list-documents")
    assert [d["document_id"] for d in listed["documents"]] == [Path(pdf).stem]


def test_normalise_tags_reads_a_json_array_and_refuses_its_pieces() -> None:
    assert normalise_tags('["deploy", "staging"]') == ["deploy", "staging"]
    assert normalise_tags("deploy, staging") == ["deploy", "staging"]
    with pytest.raises(InvalidParameterError, match=r"this tag holds \["):
        normalise_tags('["deploy", "staging"')


async def test_over_stdio_as_a_launched_server_gets_them(tmp_path: Path) -> None:
    """The real `scoperag serve` over stdio, as the MCP Inspector reaches it."""
    script = shutil.which("scoperag", path=str(Path(sys.executable).parent))
    assert script, "the scoperag console script is not installed"
    env = {**os.environ, "SCOPERAG_DATA_DIR": str(tmp_path), "SCOPERAG_PROFILES": "memory"}
    transport = StdioTransport(command=script, args=["serve"], env=env, keep_alive=False)
    async with Client(transport) as client:
        stored = await client.call_tool(
            "store_memory", {"content": "Deploys on Thursdays.", "tags": '["deploy","staging"]'}
        )
        assert stored.structured_content["stored"] is True
        found = await client.call_tool("search", {"mode": "tag", "tags": '["staging"]'})
        assert [row["tags"] for row in found.structured_content["memories"]] == [
            ["deploy", "staging"]
        ]
        refused = await client.call_tool(
            "store_memory", {"content": "x", "tags": '["a","b"'}, raise_on_error=False
        )
        assert refused.is_error and "piece of a JSON array" in refused.content[0].text
