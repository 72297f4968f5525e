"""books profile: the tools' parameters and results, shared by `tools` (the
declarations) and `service` (the handlers)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from scoperag.core.config.chunking import Window, WindowOverlap
from scoperag.core.contracts.books import BOOK_ID, DEFAULT_READER, BookSummary
from scoperag.core.filters.params import Explain, FilePath, Index, Name, Query, StrictParams
from scoperag.retrievers.explain import HitExplanation, ResultExplanation
from scoperag.server.mcp.ingest_calls import BELOW_ALLOWED
from scoperag.server.mcp.tooling import params_model
from scoperag.server.results.shape import Scored

_READER = Field(
    default=None,
    description=f"Who is reading; each reader has their own position. Default '{DEFAULT_READER}'.",
)

BookParams = params_model("BookParams", StrictParams, [BOOK_ID])


class SetPositionParams(BookParams):  # type: ignore[misc,valid-type]
    sentence: Index | None = Field(
        default=None, description="Sentence id (sid, 0-based) of the last sentence read."
    )
    chapter: Index | None = Field(
        default=None,
        description="'I finished chapter N': the position becomes the last sentence of chapter N.",
    )
    quote: Query | None = Field(
        default=None,
        description="The last sentence read, quoted (case and spacing need not match; part of "
        "the sentence is enough when that part occurs only once in the book).",
    )
    reader: Name | None = _READER


class GetPositionParams(BookParams):  # type: ignore[misc,valid-type]
    reader: Name | None = _READER


class SearchBookParams(BookParams):  # type: ignore[misc,valid-type]
    query: Query = Field(description="The question or topic, in natural language.")
    top_k: int = Field(
        default=20, ge=1, le=100, description="How many chunks to retrieve before truncation."
    )
    reader: Name | None = _READER
    order: Literal["relevance", "reading"] = Field(
        default="relevance",
        description="How passages are listed: relevance = best score first; reading = in the "
        "book's order (by sentence id).",
    )
    explain: Explain = False


class ReadingPosition(BaseModel):
    """Where a reader is: the sentence id, its chapter and the sentence itself."""

    book_id: str
    reader: str
    sid: int | None = Field(description="Sentence id of the last sentence read; None if unset.")
    chapter: int | None = None
    chapter_title: str | None = None
    sentence: str | None = None
    book_sentences: int | None = Field(default=None, description="Sentences in the whole book.")
    updated_at: datetime | None = None
    message: str | None = None


class BookList(BaseModel):
    books: list[BookSummary]
    message: str | None = None


class Passage(Scored):
    """Consecutive sentences from one chapter, each once, none past the reader's position."""

    pos_start: int = Field(description="Sentence id of the passage's first sentence.")
    pos_end: int = Field(description="Sentence id of the passage's last sentence.")
    chapter: int
    chapter_title: str
    text: str
    explain: HitExplanation = None


class SearchBookResult(BaseModel):
    book_id: str
    reader: str
    user_pos: int = Field(description="The reader's position used: nothing after it is returned.")
    passages: list[Passage] = Field(
        description="Best score first, or in the book's order with order='reading'."
    )
    chunks_retrieved: int = Field(description="Chunks found (all start at or before user_pos).")
    chunks_kept: int = Field(description="Chunks with sentences left after truncation.")
    chunks_cut: int = Field(description="Retrieved chunks that ran past user_pos and were cut.")
    sentences_cut: int = Field(description="Sentences past user_pos cut from retrieved chunks.")
    message: str | None = None
    explain: ResultExplanation = None


class IngestBookParams(StrictParams):
    path: FilePath = Field(description=f"A UTF-8 text file {BELOW_ALLOWED}.")
    book_id: Name = Field(description="Id the book tools will know the book by.")
    title: Name | None = Field(
        default=None, description="Title (default: the Gutenberg title or file name)."
    )
    window: Window = None
    window_overlap: WindowOverlap = None
