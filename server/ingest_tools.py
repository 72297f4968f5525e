"""MCP ingest tools of the books, memory, dnd and docs profiles (pdf has `qdrant-ingest-pdf`).

Each reads only below SCOPERAG_ALLOWED_DIRS (`scoperag.core.paths`), runs in a worker thread,
and sends its progress to the client as MCP progress notifications. The pipelines (and their
heavy imports) load on the first call, so listing the tools stays quick.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import anyio
from fastmcp import Context
from fastmcp.exceptions import ToolError
from fastmcp.server.providers import LocalProvider
from pydantic import Field

from scoperag.core.errors import ScoperagError
from scoperag.core.ingest_limits import IngestLimits, ingest_limits
from scoperag.core.param_types import FilePath, FilePaths, Name
from scoperag.core.paths import allowed_path, files_to_ingest, regular_file
from scoperag.core.settings import Settings
from scoperag.server.ingest_calls import StopSignal, run_stoppable
from scoperag.server.runtime import Runtime
from scoperag.server.tooling import DESTRUCTIVE, WRITES

Progress = Callable[[int, int, str], None]
T = TypeVar("T")
_BELOW = "below SCOPERAG_ALLOWED_DIRS"


async def run_with_progress(ctx: Context, work: Callable[[Progress], T], settings: Settings) -> T:
    """`work(progress)` in a worker thread, under the settings' ingestion caps, opening files
    only below the allowed folders; each progress call is a notification to the client. The
    work stops at its next progress call or pipeline checkpoint (between pages, chunks and
    batches) once the deadline passed or the client cancelled."""

    def run(signal: StopSignal) -> T:
        def progress(done: int, total: int, note: str = "") -> None:
            signal.check()
            anyio.from_thread.run(ctx.report_progress, done, total, note or None)

        with ingest_limits(IngestLimits.of(settings, settings.allowed_dirs, signal.check)):
            return work(progress)

    try:
        return await run_stoppable(run, settings.ingest_deadline_seconds)
    except ScoperagError as exc:  # not prefixed by the parent server
        raise ToolError(str(exc)) from None


def _file(runtime: Runtime, raw: str, parameter: str = "path") -> Path:
    try:
        return regular_file(raw, runtime.settings.allowed_dirs, parameter)
    except ScoperagError as exc:  # raised outside the worker: not prefixed by the parent server
        raise ToolError(str(exc)) from None


def _folders(runtime: Runtime, raws: list[str]) -> list[Path]:
    """Folders below the allowed directories whose `*.json` files all are too (links checked)."""
    settings = runtime.settings
    try:
        files_to_ingest(raws, settings.allowed_dirs, ".json", settings.ingest_max_files)
        return [allowed_path(raw, settings.allowed_dirs, "paths") for raw in raws]
    except ScoperagError as exc:
        raise ToolError(str(exc)) from None


def add_book_ingest(tools: LocalProvider, runtime: Runtime) -> None:
    """`ingest_book`: a plain-text book, replacing the book stored under the same id."""

    @tools.tool(
        name="ingest_book",
        annotations=DESTRUCTIVE,
        description=(
            "Ingest a plain-text book (Project Gutenberg headers are removed) for spoiler-safe "
            "search_book; re-ingesting a book id replaces that book."
        ),
    )
    async def ingest_book(
        path: Annotated[FilePath, Field(description=f"A UTF-8 text file {_BELOW}.")],
        book_id: Annotated[Name, Field(description="Id the book tools will know the book by.")],
        ctx: Context,
        title: Annotated[
            Name | None, Field(description="Title (default: the Gutenberg title or file name).")
        ] = None,
    ) -> dict[str, Any]:
        from scoperag.pipelines.book import BookRejectedError
        from scoperag.pipelines.book import ingest_book as ingest

        file = _file(runtime, path)

        def work(progress: Progress) -> Any:
            def chunks(done: int, total: int) -> None:
                progress(done, total, "chunks embedded")

            return ingest(file, runtime.backend, runtime.embedder, book_id, title, None, chunks)

        try:
            return (await run_with_progress(ctx, work, runtime.settings)).model_dump()
        except BookRejectedError as exc:
            raise ToolError(f"{file.name}: not ingested, {exc}.") from None


def add_memory_ingest(tools: LocalProvider, runtime: Runtime) -> None:
    """`ingest_memories`: a JSON file of memories."""

    @tools.tool(
        name="ingest_memories",
        annotations=WRITES,
        description=(
            "Import memories from a JSON file: a list of {content, tags, memory_type, created_at, "
            "metadata} objects, or an object with a `memories` list. Content already stored is "
            "kept once; a bad item is reported with its position and skipped."
        ),
    )
    async def ingest_memories(
        path: Annotated[FilePath, Field(description=f"A JSON file {_BELOW}.")],
        ctx: Context,
    ) -> dict[str, Any]:
        from scoperag.pipelines.memories import import_memories

        file = _file(runtime, path)

        def work(progress: Progress) -> Any:
            def memories(done: int, total: int) -> None:
                progress(done, total, file.name)

            return import_memories(
                file, runtime.backend, runtime.embedder, memories, runtime.settings.data_dir
            )

        return (await run_with_progress(ctx, work, runtime.settings)).model_dump()


def add_dnd_ingest(tools: LocalProvider, runtime: Runtime) -> None:
    """`ingest_dnd`: Open5e fixture folders."""

    @tools.tool(
        name="ingest_dnd",
        annotations=DESTRUCTIVE,
        description=(
            "Ingest Open5e (API v1) folders: one item per spell, creature, equipment, character "
            "option or rule; re-ingesting a file replaces its items; other files are skipped with "
            "a note."
        ),
    )
    async def ingest_dnd(
        paths: Annotated[
            FilePaths,
            Field(
                description=f"Open5e folders (each with a Document.json), or folders of them, "
                f"{_BELOW}.",
            ),
        ],
        ctx: Context,
    ) -> dict[str, Any]:
        from scoperag.server.dnd_service import ingest_paths

        folders = _folders(runtime, paths)
        result = await run_with_progress(
            ctx,
            lambda p: ingest_paths(runtime, folders, p),
            runtime.settings,
        )
        return result.model_dump()


def add_docs_ingest(tools: LocalProvider, runtime: Runtime) -> None:
    """`ingest_docs`: a JSONL file of documents."""

    @tools.tool(
        name="ingest_docs",
        annotations=DESTRUCTIVE,
        description=(
            "Ingest a JSONL file, one document a line (doc_id, title, text, scope, status, "
            "doc_type, agent_id, updated_at); re-ingesting a doc_id replaces it; a bad line is "
            "reported with its number and skipped."
        ),
    )
    async def ingest_docs(
        path: Annotated[FilePath, Field(description=f"A JSONL file {_BELOW}.")],
        ctx: Context,
    ) -> dict[str, Any]:
        from scoperag.pipelines.docs import ingest_docs_jsonl

        file = _file(runtime, path)
        report = await run_with_progress(
            ctx,
            lambda p: ingest_docs_jsonl(file, runtime.backend, runtime.embedder, p),
            runtime.settings,
        )
        return report.model_dump(mode="json")
