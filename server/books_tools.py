"""books profile tools: set_reading_position, get_reading_position, list_books, search_book."""

from __future__ import annotations

from datetime import datetime

from fastmcp import FastMCP
from pydantic import BaseModel, Field

from core.contracts.books import BOOK_ID, DEFAULT_READER
from core.errors import InvalidParameterError, ScoperagError
from core.reading_state import ReadingState
from postprocessors.sentence_dedup import SentenceDedup
from postprocessors.spoiler_truncation import SpoilerTruncation
from retrievers.book_lookup import BookLookup, BookSummary, SentenceRef, words
from retrievers.spoiler_safe import SpoilerSafeRetriever
from server.runtime import Runtime
from server.tooling import ModelTool, params_model

NO_BOOKS = "none yet: ingest one with `scoperag ingest book PATH --book-id ID`"
_SHOWN_CANDIDATES = 5
_READER = Field(
    default=None,
    min_length=1,
    description=f"Who is reading; each reader has their own position. Default '{DEFAULT_READER}'.",
)

BookParams = params_model("BookParams", BaseModel, [BOOK_ID])


class SetPositionParams(BookParams):  # type: ignore[misc,valid-type]
    sentence: int | None = Field(
        default=None, ge=0, description="Sentence id (sid, 0-based) of the last sentence read."
    )
    chapter: int | None = Field(
        default=None,
        ge=0,
        description="'I finished chapter N': the position becomes the last sentence of chapter N.",
    )
    quote: str | None = Field(
        default=None,
        min_length=1,
        description="The last sentence read, quoted (case and spacing need not match; part of "
        "the sentence is enough when that part occurs only once in the book).",
    )
    reader: str | None = _READER


class GetPositionParams(BookParams):  # type: ignore[misc,valid-type]
    reader: str | None = _READER


class SearchBookParams(BookParams):  # type: ignore[misc,valid-type]
    query: str = Field(min_length=1, description="The question or topic, in natural language.")
    top_k: int = Field(
        default=20, ge=1, le=100, description="How many chunks to retrieve before truncation."
    )
    reader: str | None = _READER


class NoParams(BaseModel):
    """A tool without parameters."""


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


class Passage(BaseModel):
    """Consecutive sentences from one chapter, each once, none past the reader's position."""

    pos_start: int = Field(description="Sentence id of the passage's first sentence.")
    pos_end: int = Field(description="Sentence id of the passage's last sentence.")
    chapter: int
    chapter_title: str
    text: str
    score: float | None = Field(description="Best similarity among the chunks it came from.")


class SearchBookResult(BaseModel):
    book_id: str
    reader: str
    user_pos: int = Field(description="The reader's position used: nothing after it is returned.")
    passages: list[Passage] = Field(description="In reading order.")
    chunks_retrieved: int = Field(description="Chunks found (all start at or before user_pos).")
    chunks_kept: int = Field(description="Chunks with sentences left after truncation.")
    chunks_cut: int = Field(description="Retrieved chunks that ran past user_pos and were cut.")
    sentences_cut: int = Field(description="Sentences past user_pos cut from retrieved chunks.")
    message: str | None = None


def _ranges(numbers: list[int]) -> str:
    """[0, 1, 2, 5] -> '0-2, 5'."""
    runs: list[list[int]] = []
    for number in numbers:
        if runs and number == runs[-1][1] + 1:
            runs[-1][1] = number
        else:
            runs.append([number, number])
    return ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in runs)


def _shortened(text: str, limit: int = 100) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _listed(refs: list[SentenceRef], more: bool = False) -> str:
    """The first few sentences as 'sid N (chapter C): “...”', and how many are left out."""
    shown = [
        f"sid {ref.sid} (chapter {ref.chapter}): “{_shortened(ref.sentence)}”"
        for ref in refs[:_SHOWN_CANDIDATES]
    ]
    left = len(refs) - len(shown)
    if left > 0 or more:
        shown.append(f"and {left}{'+' if more else ''} more")
    return "; ".join(shown)


def _where(metadata: dict[str, object]) -> dict[str, object]:
    return {key: metadata[key] for key in ("pos_start", "pos_end", "chapter", "chapter_title")}


class BookTools:
    """The books profile's handlers over one runtime."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.state = ReadingState(runtime.settings.state_path)

    @property
    def lookup(self) -> BookLookup:
        return BookLookup(self.runtime.backend)  # the runtime may have reopened its engine

    def _known_book(self, book_id: str) -> None:
        books = self.lookup.book_ids()
        if book_id not in books:
            raise InvalidParameterError("book_id", book_id, ", ".join(books) or NO_BOOKS)

    def _position(
        self, book_id: str, reader: str, sid: int | None, **extra: object
    ) -> ReadingPosition:
        ref = self.lookup.sentence(book_id, sid) if sid is not None else None
        return ReadingPosition(
            book_id=book_id,
            reader=reader,
            sid=sid,
            chapter=ref.chapter if ref else None,
            chapter_title=ref.chapter_title if ref else None,
            sentence=ref.sentence if ref else None,
            book_sentences=self.lookup.sentence_count(book_id),
            **extra,
        )

    def _resolve(self, params: SetPositionParams) -> int:
        """The sid a sentence, a finished chapter or a quote stands for."""
        given = {
            name: value
            for name in ("sentence", "chapter", "quote")
            if (value := getattr(params, name)) is not None
        }
        if len(given) != 1:
            got = ", ".join(f"{name}={value!r}" for name, value in given.items()) or "none"
            raise ScoperagError(
                f"Give exactly one of 'sentence', 'chapter' or 'quote' (got {got})."
            )
        book_id = params.book_id
        if params.sentence is not None:
            last = self.lookup.sentence_count(book_id) - 1
            if params.sentence > last:
                raise InvalidParameterError(
                    "sentence", params.sentence, f"0 to {last} (the book's sentence ids)"
                )
            return params.sentence
        if params.chapter is not None:
            end = self.lookup.chapter_end(book_id, params.chapter)
            if end is None:
                chapters = _ranges(self.lookup.chapters(book_id))
                raise InvalidParameterError("chapter", params.chapter, f"chapters {chapters}")
            return end
        return self._quoted(book_id, params.quote or "")

    def _quoted(self, book_id: str, quote: str) -> int:
        if not words(quote):
            raise InvalidParameterError("quote", quote, "a sentence with at least one word")
        found, more = self.lookup.find_quote(book_id, quote)
        if len(found) == 1 and not more:
            return found[0].sid
        if found:
            count = f"{len(found)}{' or more' if more else ''}"
            raise ScoperagError(
                f"The quote {quote!r} occurs in {count} sentences of '{book_id}': "
                f"{_listed(found, more)}. Quote more of the sentence, or give sentence= its sid."
            )
        near = self.lookup.near_quote(self.runtime.embedder, book_id, quote)
        raise ScoperagError(
            f"The quote {quote!r} is not in '{book_id}' (case and spacing are ignored, words and "
            f"their order are not). Closest sentences: {_listed(near)}. Quote the sentence as "
            "printed, or give sentence= one of these sids."
        )

    def set_position(self, params: SetPositionParams) -> ReadingPosition:
        self._known_book(params.book_id)
        reader = params.reader or DEFAULT_READER
        sid = self._resolve(params)
        saved = self.state.set(params.book_id, reader, sid)
        return self._position(params.book_id, reader, sid, updated_at=saved.updated_at)

    def get_position(self, params: GetPositionParams) -> ReadingPosition:
        self._known_book(params.book_id)
        reader = params.reader or DEFAULT_READER
        saved = self.state.get(params.book_id, reader)
        if saved is None:
            return self._position(
                params.book_id,
                reader,
                None,
                message=f"No position saved for reader '{reader}'; set one with "
                "set_reading_position.",
            )
        return self._position(params.book_id, reader, saved.sid, updated_at=saved.updated_at)

    def list_books(self, _params: BaseModel) -> BookList:
        books = [
            summary
            for book_id in self.lookup.book_ids()
            if (summary := self.lookup.summary(book_id)) is not None
        ]
        return BookList(books=books, message=None if books else f"No books: {NO_BOOKS}.")

    def search(self, params: SearchBookParams) -> SearchBookResult:
        self._known_book(params.book_id)
        reader = params.reader or DEFAULT_READER
        saved = self.state.get(params.book_id, reader)
        if saved is None:
            raise ScoperagError(
                f"No reading position is saved for reader '{reader}' in '{params.book_id}', so "
                "every sentence could be a spoiler. Set one first with set_reading_position "
                "(sentence=, chapter= for 'I finished chapter N', or quote= the last sentence "
                "read)."
            )
        runtime = self.runtime
        hits = SpoilerSafeRetriever(
            runtime.backend, runtime.embedder, params.book_id, saved.sid, top_k=params.top_k
        ).retrieve(params.query)
        kept = SpoilerTruncation(user_pos=saved.sid).postprocess_nodes(hits)
        merged = SentenceDedup().postprocess_nodes(kept)
        sentences = [len(found.node.metadata["sentences"]) for found in hits]
        kept_sentences = [len(found.node.metadata["sentences"]) for found in kept]
        return SearchBookResult(
            book_id=params.book_id,
            reader=reader,
            user_pos=saved.sid,
            passages=[
                Passage(
                    text=found.node.get_content(), score=found.score, **_where(found.node.metadata)
                )
                for found in merged
            ],
            chunks_retrieved=len(hits),
            chunks_kept=len(kept),
            chunks_cut=sum(1 for hit in hits if hit.node.metadata["pos_end"] > saved.sid),
            sentences_cut=sum(sentences) - sum(kept_sentences),
            message=None if merged else "Nothing read so far matches this query.",
        )


def build(runtime: Runtime) -> FastMCP:
    """The books sub-server."""
    tools = BookTools(runtime)
    mcp = FastMCP("scoperag-books")
    mcp.add_tool(
        ModelTool.build(
            "set_reading_position",
            "Save where a reader is in a book, so search_book never shows what comes later. "
            "Give exactly one of: sentence (a sentence id), chapter (the reader finished "
            "chapter N), or quote (the last sentence read). Returns the sentence at the "
            "position.",
            SetPositionParams,
            tools.set_position,
            ReadingPosition,
            read_only=False,
        )
    )
    mcp.add_tool(
        ModelTool.build(
            "get_reading_position",
            "The reader's saved position in a book: sentence id, chapter and the sentence.",
            GetPositionParams,
            tools.get_position,
            ReadingPosition,
        )
    )
    mcp.add_tool(
        ModelTool.build(
            "list_books",
            "List the ingested books with their sentence and chapter counts.",
            NoParams,
            tools.list_books,
            BookList,
        )
    )
    mcp.add_tool(
        ModelTool.build(
            "search_book",
            "Answer-context for a question about a book without spoilers: searches only what "
            "the reader has read (up to their saved reading position; set it first with "
            "set_reading_position). Returns passages in reading order, each with its sentence "
            "ids and chapter, and the position used.",
            SearchBookParams,
            tools.search,
            SearchBookResult,
        )
    )
    return mcp
