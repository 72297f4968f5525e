"""books profile handlers: reading positions in SQLite, spoiler-safe search over Qdrant."""

from __future__ import annotations

from pydantic import BaseModel

from scoperag.core.contracts.books import DEFAULT_READER, BookChunkPayload
from scoperag.core.errors import InvalidParameterError, ScoperagError, as_json
from scoperag.postprocessors.sentence_runs import deduplicated, spoiler_free
from scoperag.retrievers.book_lookup import BookLookup, SentenceRef, words
from scoperag.retrievers.spoiler_search import SpoilerSafeSearch
from scoperag.server.profiles.books.models import (
    BookList,
    GetPositionParams,
    Passage,
    ReadingPosition,
    SearchBookParams,
    SearchBookResult,
    SetPositionParams,
)
from scoperag.server.profiles.books.reading_state import ReadingState
from scoperag.server.runtime import Runtime

NO_BOOKS = "none yet: ingest one with `scoperag ingest books PATH --book-id ID`"
_SHOWN_CANDIDATES = 5


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


def _listed(refs: list[SentenceRef], read_up_to: int, more: bool = False) -> str:
    """The first few sentences as 'sid N (chapter C): “...”', and how many are left out.

    A sentence past `read_up_to` (the reader's saved position, -1 for none) is named by its
    sid and chapter only: an error message must not spoil what the reader has not read.
    """
    shown = [
        f"sid {ref.sid} (chapter {ref.chapter})"
        + (f": “{_shortened(ref.sentence)}”" if ref.sid <= read_up_to else ", not read yet")
        for ref in refs[:_SHOWN_CANDIDATES]
    ]
    left = len(refs) - len(shown)
    if left > 0 or more:
        shown.append(f"and {left}{'+' if more else ''} more")
    return "; ".join(shown)


class BookService:
    """The books profile's handlers over one runtime."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.state = ReadingState(runtime.settings.state_path)

    @property
    def lookup(self) -> BookLookup:
        return BookLookup(self.runtime.backend)  # the runtime may have reopened its engine

    def _known_book(self, book_id: str) -> None:
        if not self.lookup.has_book(book_id):
            books = self.lookup.book_ids()
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
            got = ", ".join(f"{name}={as_json(value)}" for name, value in given.items()) or "none"
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
        saved = self.state.get(book_id, params.reader or DEFAULT_READER)
        return self._quoted(book_id, params.quote or "", saved.sid if saved else -1)

    def _quoted(self, book_id: str, quote: str, read_up_to: int) -> int:
        if not words(quote):
            raise InvalidParameterError("quote", quote, "a sentence with at least one word")
        found, more = self.lookup.find_quote(book_id, quote)
        if len(found) == 1 and not more:
            return found[0].sid
        if found:
            count = f"{len(found)}{' or more' if more else ''}"
            raise ScoperagError(
                f"The quote {as_json(quote)} occurs in {count} sentences of '{book_id}': "
                f"{_listed(found, read_up_to, more)}. Quote more of the sentence, or give "
                "sentence= its sid."
            )
        near = self.lookup.near_quote(self.runtime.embedder, book_id, quote)
        raise ScoperagError(
            f"The quote {as_json(quote)} is not in '{book_id}' (case and spacing are ignored, "
            f"words and their order are not). Closest sentences: {_listed(near, read_up_to)}. "
            "Quote the sentence as printed, or give sentence= one of these sids."
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
        """One engine operation when the search finds the book: a hit shows that it exists, so
        the check that names the known books runs only when nothing or an error comes back."""
        reader = params.reader or DEFAULT_READER
        saved = self.state.get(params.book_id, reader)
        if saved is None:
            self._known_book(params.book_id)
            raise ScoperagError(
                f"No reading position is saved for reader '{reader}' in '{params.book_id}', so "
                "every sentence could be a spoiler. Set one first with set_reading_position "
                "(sentence=, chapter= for 'I finished chapter N', or quote= the last sentence "
                "read)."
            )
        runtime = self.runtime
        search = SpoilerSafeSearch(
            runtime.backend,
            runtime.embedder,
            params.book_id,
            saved.sid,
            top_k=params.top_k,
            with_payload=list(BookChunkPayload.model_fields),  # not LlamaIndex's copy of the node
            explain=params.explain,
        )
        try:
            hits = search.chunk_runs(params.query)
        except ScoperagError:
            self._known_book(params.book_id)  # an unknown book is the error to report
            raise
        if not hits:
            self._known_book(params.book_id)
        kept = [run for hit in hits if (run := spoiler_free(hit, saved.sid)) is not None]
        # the merge walks reading order; best first unless the caller asks for the book's order
        merged = deduplicated(kept)
        if params.order == "relevance":
            merged = sorted(merged, key=lambda run: -(run.score or 0.0))
        result = SearchBookResult(
            book_id=params.book_id,
            reader=reader,
            user_pos=saved.sid,
            passages=[
                Passage(
                    text=" ".join(run.sentences),
                    score=run.score,
                    fusion="dense",
                    similarity=run.score,
                    pos_start=run.first_sid,
                    pos_end=run.last_sid,
                    chapter=run.metadata["chapter"],
                    chapter_title=run.metadata["chapter_title"],
                )
                for run in merged
            ],
            chunks_retrieved=len(hits),
            chunks_kept=len(kept),
            chunks_cut=sum(1 for hit in hits if hit.last_sid > saved.sid),
            sentences_cut=sum(len(hit.sentences) for hit in hits)
            - sum(len(run.sentences) for run in kept),
            message=None if merged else "Nothing read so far matches this query.",
        )
        if not params.explain or search.last is None:
            return result
        from scoperag.server.profiles.books.explain import explain_book_search
        from scoperag.server.results.hits import drop_names

        flt, pos = search.qdrant_filter, saved.sid
        names = drop_names("search_book", search.backend, search.collection)
        return explain_book_search(result, search.last, flt, hits, kept, pos, names)
