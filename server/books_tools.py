"""books profile tools: set_reading_position, get_reading_position, list_books, search_book,
ingest_book."""

from __future__ import annotations

from typing import Annotated, Any

from fastmcp import Context
from fastmcp.exceptions import ToolError
from fastmcp.server.providers import LocalProvider
from pydantic import Field

from scoperag.core.tool_params import FilePath, Name
from scoperag.server.books_models import (
    BookList,
    GetPositionParams,
    ReadingPosition,
    SearchBookParams,
    SearchBookResult,
    SetPositionParams,
)
from scoperag.server.ingest_calls import BELOW_ALLOWED, Progress, allowed_file, run_with_progress
from scoperag.server.runtime import Runtime
from scoperag.server.service_locator import deferred_service
from scoperag.server.tooling import DESTRUCTIVE, ModelTool, NoParams


def _add_ingest(tools: LocalProvider, runtime: Runtime) -> None:
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
        path: Annotated[FilePath, Field(description=f"A UTF-8 text file {BELOW_ALLOWED}.")],
        book_id: Annotated[Name, Field(description="Id the book tools will know the book by.")],
        ctx: Context,
        title: Annotated[
            Name | None, Field(description="Title (default: the Gutenberg title or file name).")
        ] = None,
    ) -> dict[str, Any]:
        from scoperag.pipelines.book import BookRejectedError
        from scoperag.pipelines.book import ingest_book as ingest

        file = allowed_file(runtime.settings, path)

        def work(progress: Progress) -> Any:
            def chunks(done: int, total: int) -> None:
                progress(done, total, "chunks embedded")

            return ingest(file, runtime.backend, runtime.embedder, book_id, title, None, chunks)

        try:
            return (await run_with_progress(ctx, work, runtime.settings)).model_dump()
        except BookRejectedError as exc:
            raise ToolError(f"{file.name}: not ingested, {exc}.") from None


def build(runtime: Runtime) -> LocalProvider:
    """The books tools; its handlers (and their heavy imports) load on the first call."""
    service = deferred_service("scoperag.server.books_service:BookService", runtime)
    tools = LocalProvider()
    tools.add_tool(
        ModelTool.build(
            "set_reading_position",
            "Save where a reader is in a book, so search_book never shows what comes later. "
            "Give exactly one of: sentence (a sentence id), chapter (the reader finished "
            "chapter N), or quote (the last sentence read). Returns the sentence at the "
            "position.",
            SetPositionParams,
            lambda params: service().set_position(params),
            ReadingPosition,
            annotations=DESTRUCTIVE,
        )
    )
    tools.add_tool(
        ModelTool.build(
            "get_reading_position",
            "The reader's saved position in a book: sentence id, chapter and the sentence.",
            GetPositionParams,
            lambda params: service().get_position(params),
            ReadingPosition,
        )
    )
    tools.add_tool(
        ModelTool.build(
            "list_books",
            "List the ingested books with their sentence and chapter counts.",
            NoParams,
            lambda params: service().list_books(params),
            BookList,
        )
    )
    tools.add_tool(
        ModelTool.build(
            "search_book",
            "Answer-context for a question about a book without spoilers: searches only what "
            "the reader has read (up to their saved reading position; set it first with "
            "set_reading_position). Returns passages in reading order, each with its sentence "
            "ids and chapter, and the position used.",
            SearchBookParams,
            lambda params: service().search(params),
            SearchBookResult,
        )
    )
    _add_ingest(tools, runtime)
    return tools
