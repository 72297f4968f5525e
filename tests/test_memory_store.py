"""Storing, de-duplicating, deleting and importing memories (MCP tools and the CLI)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastmcp import Client
from fastmcp.exceptions import ToolError

from scoperag.core.contracts.memory import COLLECTION, content_hash
from scoperag.server.cli.main import cli
from scoperag.server.mcp.app import build_server
from scoperag.server.runtime import Runtime


async def call(runtime: Runtime, tool: str, **arguments: Any) -> dict[str, Any]:
    async with Client(build_server(runtime)) as client:
        result = await client.call_tool(tool, arguments)
    return result.structured_content


def stored(runtime: Runtime) -> list[dict[str, Any]]:
    """Every payload in the collection (a small test store)."""
    return [record.payload for record in runtime.backend.scroll(COLLECTION, None, limit=1000)]


async def test_storing_the_same_content_twice_keeps_one(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(profiles=["memory"])
    first = await call(
        runtime,
        "store_memory",
        content="Qdrant Edge needs a range index for order_by.",
        tags="qdrant, edge",
        memory_type="learning",
        metadata={"ticket": 4, "links": ["a", "b"]},
    )
    again = await call(
        runtime, "store_memory", content="  Qdrant Edge needs a range index for order_by. "
    )
    assert first["stored"] is True and again["stored"] is False
    assert first["content_hash"] == again["content_hash"]
    assert first["content_hash"] == content_hash("Qdrant Edge needs a range index for order_by.")
    [payload] = stored(runtime)
    assert payload["tags"] == ["qdrant", "edge"] and payload["memory_type"] == "learning"
    assert payload["metadata"] == {"ticket": 4, "links": ["a", "b"]}
    assert payload["created_at"].endswith("Z") and payload["created_at_ts"] > 1.7e9
    found = await call(runtime, "search", mode="tag", tags=["edge"])
    assert [row["content_hash"] for row in found["memories"]] == [first["content_hash"]]


async def test_delete_removes_only_that_memory(make_runtime: Callable[..., Runtime]) -> None:
    runtime = make_runtime(profiles=["memory"])
    keep = await call(runtime, "store_memory", content="Keep this memory.", tags=["t"])
    drop = await call(runtime, "store_memory", content="Delete this memory.", tags=["t"])
    deleted = await call(runtime, "delete_memory", content_hash=drop["content_hash"].upper())
    assert deleted["deleted"] is True
    assert [p["content_hash"] for p in stored(runtime)] == [keep["content_hash"]]
    again = await call(runtime, "delete_memory", content_hash=drop["content_hash"])
    assert again["deleted"] is False and "nothing deleted" in again["message"]
    restored = await call(runtime, "store_memory", content="Delete this memory.")
    assert restored["stored"] is True


async def test_tools_on_an_empty_store_say_how_to_fill_it(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(profiles=["memory"])
    result = await call(runtime, "search", query="anything")
    assert result["total"] == 0 and "store_memory" in result["note"]
    gone = await call(runtime, "delete_memory", content_hash="0" * 64)
    assert gone["deleted"] is False


@pytest.mark.parametrize(
    ("tool", "arguments", "words"),
    [
        ("delete_memory", {"content_hash": "abc"}, ["'content_hash'", '"abc"', "sha256"]),
        ("store_memory", {"content": ""}, ["'content'", "at least 1 character"]),
        ("store_memory", {"content": "   "}, ["'content'", "non-empty"]),
        ("store_memory", {"content": "x", "tags": 5}, ["'tags", "5"]),
    ],
)
async def test_bad_store_and_delete_parameters_are_clear_errors(
    make_runtime: Callable[..., Runtime], tool: str, arguments: dict, words: list[str]
) -> None:
    runtime = make_runtime(profiles=["memory"])
    with pytest.raises(ToolError) as error:
        await call(runtime, tool, **arguments)
    assert all(word in str(error.value) for word in words), str(error.value)


def test_cli_import_reports_bad_items_and_never_duplicates(
    cli_with_shared_model: CliRunner, tmp_path: Path
) -> None:
    items = [
        {"content": "Import one.", "tags": ["cli"], "created_at": "2026-01-02T03:04:05Z"},
        {"content": "Import two.", "tags": "cli, second", "type": "decision"},
        {"content": "Import one."},
        {"tags": ["no content"]},
        {"content": "Bad time.", "created_at": "soon"},
    ]
    path = tmp_path / "memories.json"
    path.write_text(json.dumps(items))
    first = cli_with_shared_model.invoke(cli, ["ingest", "memories", str(path), "--json"])
    assert first.exit_code == 0, first.output
    report = json.loads(first.output)
    assert len(report["stored"]) == 2 and report["duplicates"] == [content_hash("Import one.")]
    assert [line.split(":")[0] for line in report["skipped"]] == ["item 3", "item 4"]
    second = cli_with_shared_model.invoke(cli, ["ingest", "memories", str(path)])
    assert second.exit_code == 0, second.output
    assert "stored 0, already stored 3, skipped 2" in second.output
    assert "item 4: skipped" in second.output


def test_cli_import_of_the_devbench_file(
    cli_with_shared_model: CliRunner, shared_data: Path
) -> None:
    path = shared_data / "memories" / "devbench_dataset.json"
    result = cli_with_shared_model.invoke(cli, ["ingest", "memories", str(path)])
    assert result.exit_code == 0, result.output
    assert "stored 30, already stored 0, skipped 0" in result.output


def test_cli_refuses_a_file_that_is_not_memories(
    cli_with_shared_model: CliRunner, tmp_path: Path
) -> None:
    path = tmp_path / "notes.json"
    path.write_text('{"notes": []}')
    result = cli_with_shared_model.invoke(cli, ["ingest", "memories", str(path)])
    assert result.exit_code == 1 and "'memories' list" in result.output
    missing = cli_with_shared_model.invoke(cli, ["ingest", "memories", str(tmp_path / "no.json")])
    assert missing.exit_code == 2 and "does not exist" in missing.output
