"""MCP ingestion within its caps: a source over the byte, page or item cap is refused before it
is parsed, naming the cap, the value and the setting; a cancelled or late call stops inside a
file and writes nothing of it; a report lists the first 100 problems and their count."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from pdf_ingest_calls import documents, ingest_and_give_up
from text_pdf import text_pdf

from scoperag.server.mcp.app import build_server
from scoperag.server.runtime import Runtime


@pytest.fixture
def allowed(tmp_path: Path) -> Path:
    folder = tmp_path / "allowed"
    folder.mkdir()
    return folder


@pytest.fixture(scope="module")
def long_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """100 pages of 2,000 words: reading, splitting and embedding it takes many seconds."""
    return text_pdf(tmp_path_factory.mktemp("pdf") / "long.pdf", 100, 2000)


async def _call(runtime: Runtime, tool: str, arguments: dict) -> dict:
    async with Client(build_server(runtime)) as client:
        return (await client.call_tool(tool, arguments)).structured_content


async def test_a_pdf_over_the_byte_cap_is_refused_by_its_size(
    make_runtime: Callable[..., Runtime], allowed: Path
) -> None:
    """Regression: a 2 GiB sparse PDF was parsed for 77 s (6.5 GB of memory) before being
    skipped."""
    with (allowed / "huge.pdf").open("wb") as file:
        file.truncate(2 << 30)
    runtime = make_runtime(profiles=["pdf"], allowed_dirs=[allowed])
    result = await _call(runtime, "qdrant-ingest-pdf", {"paths": [str(allowed)]})
    [file] = result["files"]
    assert "huge.pdf: skipped, it is 2,048.0 MiB, over the cap of 256 MiB" in file["error"]
    assert "SCOPERAG_MAX_SOURCE_MB" in file["error"]
    assert result["skipped"] == 1


async def test_a_pdf_over_the_page_cap_is_refused(
    make_runtime: Callable[..., Runtime], allowed: Path
) -> None:
    text_pdf(allowed / "six.pdf", 6, 20)
    runtime = make_runtime(profiles=["pdf"], allowed_dirs=[allowed], max_pdf_pages=5)
    result = await _call(runtime, "qdrant-ingest-pdf", {"paths": [str(allowed / "six.pdf")]})
    assert (
        "it has 6 pages, over the cap of 5 (SCOPERAG_MAX_PDF_PAGES)"
        in (result["files"][0]["error"])
    )
    assert await documents(runtime) == []


async def test_files_over_the_item_cap_are_refused_before_any_is_embedded(
    make_runtime: Callable[..., Runtime], allowed: Path
) -> None:
    memories = [{"content": f"Memory {n}."} for n in range(11)]
    (allowed / "memories.json").write_text(json.dumps(memories))
    lines = [json.dumps({"doc_id": f"d{n}", "title": "t", "text": "x"}) for n in range(11)]
    (allowed / "docs.jsonl").write_text("\n".join(lines))
    runtime = make_runtime(profiles=["memory", "docs"], allowed_dirs=[allowed], max_items=10)
    for tool, name in (("ingest_memories", "memories.json"), ("ingest_docs", "docs.jsonl")):
        with pytest.raises(ToolError, match=r"it has 11 items, over the cap of 10 \(SCOPERAG"):
            await _call(runtime, tool, {"path": str(allowed / name)})
    found = await _call(runtime, "search", {"query": ""})
    assert found["total"] == 0


async def test_a_report_lists_the_first_hundred_problems_and_their_count(
    make_runtime: Callable[..., Runtime], allowed: Path
) -> None:
    """Regression: a memories file of 1e6 bad items gave a 44 MB tool result."""
    items = [{"no content": n} for n in range(250)] + [{"content": "The one good memory."}]
    (allowed / "memories.json").write_text(json.dumps(items))
    runtime = make_runtime(profiles=["memory"], allowed_dirs=[allowed])
    report = await _call(runtime, "ingest_memories", {"path": str(allowed / "memories.json")})
    assert report["skipped_count"] == 250 and len(report["skipped"]) == 100
    assert report["skipped"][99].startswith("item 99:")
    assert len(report["stored"]) == 1


async def test_a_call_past_its_deadline_stops_inside_a_file_and_writes_none_of_it(
    make_runtime: Callable[..., Runtime], allowed: Path, long_pdf: Path
) -> None:
    """Regression: a long PDF went on for minutes past the deadline, then was committed."""
    (allowed / long_pdf.name).symlink_to(long_pdf)
    runtime = make_runtime(
        profiles=["pdf"], allowed_dirs=[allowed, long_pdf.parent], ingest_deadline_seconds=2
    )
    with pytest.raises(ToolError, match=r"stopped: the call's deadline of 2 s passed"):
        await _call(runtime, "qdrant-ingest-pdf", {"paths": [str(allowed / long_pdf.name)]})
    assert await documents(runtime) == []


async def test_a_cancelled_call_stops_inside_a_file_and_writes_none_of_it(
    make_runtime: Callable[..., Runtime], allowed: Path, long_pdf: Path
) -> None:
    """Regression: a long PDF kept two cores busy for 150 s after its client cancelled, then
    was committed."""
    runtime = make_runtime(profiles=["pdf"], allowed_dirs=[long_pdf.parent])
    await ingest_and_give_up(runtime, long_pdf)  # as the file starts
    # The next call waits for the cancelled one to wind down (calls are serialised).
    assert await documents(runtime) == []


async def test_a_call_over_many_bad_files_lists_the_first_hundred(
    make_runtime: Callable[..., Runtime], allowed: Path
) -> None:
    for n in range(105):
        (allowed / f"bad-{n:03}.pdf").write_bytes(b"not a PDF")
    runtime = make_runtime(profiles=["pdf"], allowed_dirs=[allowed])
    result = await _call(runtime, "qdrant-ingest-pdf", {"paths": [str(allowed)]})
    assert result["skipped"] == 105 and len(result["files"]) == 100
    assert Path(result["files"][-1]["path"]).name == "bad-099.pdf"
