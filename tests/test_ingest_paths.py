"""MCP ingest reads only regular files below SCOPERAG_ALLOWED_DIRS, within a file cap and a
deadline, stops when its client abandons the call, and reads what it checked: a folder swapped
for a link after the check is refused."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from pdf_ingest_calls import documents, ingest_and_give_up

from scoperag.core.config.ingest_limits import IngestLimits, ingest_limits
from scoperag.core.config.paths import files_to_ingest, regular_file
from scoperag.core.errors import ScoperagError
from scoperag.pipelines.memories import import_memories
from scoperag.pipelines.pdf import ingest_pdfs
from scoperag.server.mcp.app import build_server
from scoperag.server.runtime import Runtime

PDF = "data-in-brief-22-sanni-page4.pdf"


@pytest.fixture
def allowed(tmp_path: Path, shared_data: Path) -> Path:
    folder = tmp_path / "allowed"
    folder.mkdir()
    shutil.copy(shared_data / "pdf" / PDF, folder / PDF)
    return folder


async def _ingest(runtime: Runtime, paths: list[str]) -> dict:
    async with Client(build_server(runtime)) as client:
        result = await client.call_tool("qdrant-ingest-pdf", {"paths": paths})
    return result.structured_content


async def test_a_symlink_out_of_the_allowed_folder_is_refused(
    make_runtime: Callable[..., Runtime], allowed: Path
) -> None:
    """Regression: a folder scan followed a symlink inside an allowed folder to /etc/passwd."""
    (allowed / "passwd.pdf").symlink_to("/etc/passwd")
    runtime = make_runtime(profiles=["pdf"], allowed_dirs=[allowed])
    with pytest.raises(ToolError, match=r"passwd\.pdf.*resolves to /etc/passwd"):
        await _ingest(runtime, [str(allowed)])
    assert await documents(runtime) == []


async def test_fifos_are_skipped_unopened_and_duplicates_collapse(
    make_runtime: Callable[..., Runtime], allowed: Path
) -> None:
    """Regression: a FIFO named *.pdf blocked the ingest forever; one file given three ways was
    ingested three times."""
    os.mkfifo(allowed / "pipe.pdf")
    (allowed / "again.pdf").symlink_to(allowed / PDF)
    runtime = make_runtime(profiles=["pdf"], allowed_dirs=[allowed])
    with anyio.fail_after(120):
        result = await _ingest(runtime, [str(allowed), str(allowed / PDF), str(allowed / ".")])
    assert [Path(file["path"]).name for file in result["files"]] == [PDF]
    with pytest.raises(ToolError, match="a regular file or a directory"):
        await _ingest(runtime, [str(allowed / "pipe.pdf")])


async def test_a_call_over_the_file_cap_is_refused(
    make_runtime: Callable[..., Runtime], allowed: Path
) -> None:
    shutil.copy(allowed / PDF, allowed / "copy.pdf")
    runtime = make_runtime(profiles=["pdf"], allowed_dirs=[allowed], ingest_max_files=1)
    with pytest.raises(ToolError, match="at most 1 files.*SCOPERAG_INGEST_MAX_FILES"):
        await _ingest(runtime, [str(allowed)])


async def test_a_call_past_its_deadline_stops_and_says_so(
    make_runtime: Callable[..., Runtime], allowed: Path
) -> None:
    shutil.copy(allowed / PDF, allowed / "copy.pdf")
    runtime = make_runtime(profiles=["pdf"], allowed_dirs=[allowed], ingest_deadline_seconds=1e-6)
    with pytest.raises(ToolError, match=r"stopped: .*SCOPERAG_INGEST_DEADLINE_SECONDS"):
        await _ingest(runtime, [str(allowed)])
    assert await documents(runtime) == []


async def test_an_abandoned_call_stops_before_its_next_file(
    make_runtime: Callable[..., Runtime], allowed: Path
) -> None:
    for n in range(7):
        shutil.copy(allowed / PDF, allowed / f"copy-{n}.pdf")
    runtime = make_runtime(profiles=["pdf"], allowed_dirs=[allowed])
    await ingest_and_give_up(runtime, allowed)  # at the first file
    # The next call waits for the abandoned one to wind down (calls are serialised).
    assert len(await documents(runtime)) <= 2


def _swap_for_link(folder: Path, target: Path) -> None:
    """Replace `folder` by a link to `target` (as another process could between two steps)."""
    folder.rename(folder.with_name(folder.name + "-old"))
    folder.symlink_to(target, target_is_directory=True)


def test_a_folder_swapped_for_a_link_after_the_check_is_refused(
    make_runtime: Callable[..., Runtime], allowed: Path, tmp_path: Path
) -> None:
    """Regression: paths were checked once and opened later by name, so a folder replaced by
    a link to a folder outside was read and reported under the allowed path."""
    (allowed / "swap").mkdir()
    shutil.copy(allowed / PDF, allowed / "swap" / "doc.pdf")
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(allowed / PDF, outside / "doc.pdf")
    runtime = make_runtime(profiles=["pdf"], allowed_dirs=[allowed])
    files = files_to_ingest([str(allowed / "swap")], [allowed], ".pdf", 10)
    _swap_for_link(allowed / "swap", outside)
    backend, embedder = runtime.backend, runtime.embedder
    with ingest_limits(IngestLimits.of(runtime.settings, [allowed])):
        [report] = ingest_pdfs(files, backend, embedder, runtime.settings.pdf_collection)
    assert report.path == str(allowed / "swap" / "doc.pdf")
    assert report.error and f"doc.pdf: skipped, its part 'swap' below {allowed} is a link" in (
        report.error
    )
    assert not backend.collection_exists(runtime.settings.pdf_collection)


def test_a_file_whose_folder_became_a_link_is_not_imported(
    make_runtime: Callable[..., Runtime], allowed: Path, tmp_path: Path
) -> None:
    (allowed / "notes").mkdir()
    (allowed / "notes" / "memories.json").write_text('[{"content": "inside"}]')
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "memories.json").write_text('[{"content": "outside"}]')
    runtime = make_runtime(profiles=["memory"], allowed_dirs=[allowed])
    file = regular_file(str(allowed / "notes" / "memories.json"), [allowed])
    _swap_for_link(allowed / "notes", outside)
    with (
        ingest_limits(IngestLimits.of(runtime.settings, [allowed])),
        pytest.raises(
            ScoperagError, match=r"notes/memories\.json: not read, its part 'notes' below"
        ),
    ):
        import_memories(file, runtime.backend, runtime.embedder)
