"""books profile tools: set_reading_position, get_reading_position, list_books, search_book,
ingest_book."""

from __future__ import annotations

from typing import Any

from fastmcp.server.providers import LocalProvider

from scoperag.server.mcp.ingest_calls import (
    Progress,
    allowed_file,
)
from scoperag.server.mcp.service_locator import deferred_service
from scoperag.server.mcp.tooling import DESTRUCTIVE, ModelTool, NoParams, ProgressTool
from scoperag.server.profiles.books.models import (
    BookList,
    GetPositionParams,
    IngestBookParams,
    ReadingPosition,
    SearchBookParams,
    SearchBookResult,
    SetPositionParams,
)
from scoperag.server.runtime import Runtime


def _add_ingest(tools: LocalProvider, runtime: Runtime) -> None:
    """`ingest_book`: a plain-text book, replacing the book stored under the same id."""

    def ingest(params: IngestBookParams, progress: Progress) -> dict[str, Any]:
        from scoperag.core.config.chunking import chunking_of
        from scoperag.pipelines.book import ingest_book

        file = allowed_file(runtime.settings, params.path)

        def chunks(done: int, total: int) -> None:
            progress(done, total, "chunks embedded")

        report = ingest_book(
            file,
            runtime.backend,
            runtime.embedder,
            params.book_id,
            params.title,
            None,
            chunks,
            chunking_of(params),
        )
        return report.model_dump()

    tools.add_tool(
        ProgressTool.build(
            "ingest_book",
            "Ingest a plain-text book (Project Gutenberg headers are removed) for spoiler-safe "
            "search_book; re-ingesting a book id replaces that book.",
            IngestBookParams,
            ingest,
            None,
            annotations=DESTRUCTIVE,
            settings=runtime.settings,
        )
    )


def build(runtime: Runtime) -> LocalProvider:
    """The books tools; its handlers (and their heavy imports) load on the first call."""
    service = deferred_service("scoperag.server.profiles.books.service:BookService", runtime)
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
            "set_reading_position). Returns passages best score first (order='reading': in the "
            "book's order), each with its sentence ids, chapter and score, and the position "
            "used.",
            SearchBookParams,
            lambda params: service().search(params),
            SearchBookResult,
        )
    )
    _add_ingest(tools, runtime)
    return tools
