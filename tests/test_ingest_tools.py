"""MCP ingest tools of every profile: gated by SCOPERAG_ALLOWED_DIRS, with progress, bad items
reported and skipped (only PDFs could be ingested through MCP)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client

from scoperag.server.mcp.app import build_server
from scoperag.server.runtime import Runtime

INGEST_TOOLS = ["qdrant-ingest-pdf", "ingest_book", "ingest_memories", "ingest_dnd", "ingest_docs"]
BOOK = (
    "Chapter 1\n\nAlice sat by her sister on the bank. She had nothing to do.\n\n"
    "Chapter 2\n\nA white rabbit ran close by her. It took a watch out of its pocket.\n"
)
MEMORIES = [
    {"content": "The deploy key lives in the vault.", "tags": ["ops"]},
    {"content": ""},  # bad: empty content
    {"content": "Backups run nightly at two.", "tags": ["ops", "backup"]},
]
DOC = {
    "doc_id": "runbook-1",
    "title": "Billing runbook",
    "text": "Restart the billing worker when invoices stop flowing.",
    "scope": "project_shared",
    "status": "active",
    "doc_type": "runbook",
    "agent_id": "agent-atlas",
    "updated_at": "2025-06-01T12:00:00+02:00",
}


@pytest.fixture
def sources(tmp_path: Path, shared_data: Path) -> Path:
    """Small real sources of each kind in one allowed directory."""
    folder = tmp_path / "allowed"
    folder.mkdir()
    (folder / "alice.txt").write_text(BOOK)
    (folder / "memories.json").write_text(json.dumps(MEMORIES))
    (folder / "docs.jsonl").write_text(json.dumps(DOC) + "\n{broken\n")
    srd = shared_data / "dnd" / "wotc-srd"
    dnd = folder / "srd-sample"
    dnd.mkdir()
    (dnd / "Document.json").write_text((srd / "Document.json").read_text())
    (dnd / "Spell.json").write_text(json.dumps(json.loads((srd / "Spell.json").read_text())[:3]))
    return folder


async def _ingest(runtime: Runtime, tool: str, **arguments: Any) -> tuple[Any, list[float]]:
    seen: list[float] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append(done)

    async with Client(build_server(runtime), progress_handler=progress) as client:
        result = await client.call_tool(tool, arguments, raise_on_error=False)
    return result, seen


async def test_every_profile_ingests_through_mcp(
    make_runtime: Callable[..., Runtime], sources: Path, backend_name: str
) -> None:
    runtime = make_runtime(allowed_dirs=[sources])
    book, progress = await _ingest(
        runtime, "ingest_book", path=str(sources / "alice.txt"), book_id="alice"
    )
    assert not book.is_error, book.content
    assert book.structured_content["chapters"] == 2 and progress
    memories, progress = await _ingest(
        runtime, "ingest_memories", path=str(sources / "memories.json")
    )
    report = memories.structured_content
    assert len(report["stored"]) == 2 and len(report["skipped"]) == 1 and progress
    assert report["skipped"][0].startswith("item 1:")  # the bad item, by its position
    docs, progress = await _ingest(runtime, "ingest_docs", path=str(sources / "docs.jsonl"))
    report = docs.structured_content
    assert report["documents"] == 1 and [s["line"] for s in report["skipped"]] == [2]
    assert progress
    dnd, progress = await _ingest(runtime, "ingest_dnd", paths=[str(sources / "srd-sample")])
    assert dnd.structured_content["items"] == 3 and progress
    search, _ = await _ingest(runtime, "search", query="backups")
    assert "Backups run nightly" in search.content[0].text
    async with Client(build_server(runtime)) as client:
        tools = {t.name: t.annotations for t in await client.list_tools()}
    assert all(tools[name] and tools[name].readOnlyHint is False for name in INGEST_TOOLS)


async def test_ingest_tools_refuse_paths_outside_the_allowed_dirs(
    make_runtime: Callable[..., Runtime], sources: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text("[]")
    runtime = make_runtime(allowed_dirs=[sources])
    result, _ = await _ingest(runtime, "ingest_memories", path=str(outside))
    assert result.is_error
    message = result.content[0].text
    assert "'path'" in message and str(outside) in message and str(sources) in message
    closed = make_runtime()  # no SCOPERAG_ALLOWED_DIRS: MCP ingestion is off
    result, _ = await _ingest(closed, "ingest_book", path=str(sources / "alice.txt"), book_id="a")
    assert result.is_error and "SCOPERAG_ALLOWED_DIRS" in result.content[0].text
