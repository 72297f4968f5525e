"""Query-less lookups in the books collection: books, chapters, the sentence at a position, quotes.

Every lookup is a filtered scroll, count or facet in Qdrant; a quote is found with a phrase
match on the `sentences` key (case and punctuation ignored, as Qdrant's word tokenizer does).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel
from qdrant_client import models
from rapidfuzz import fuzz

from scoperag.core.contracts.books import (
    BOOK_ID,
    CHAPTER,
    COLLECTION,
    REACHES,
    READ_UP_TO,
    BookSummary,
)
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.engine.backend import VectorBackend
from scoperag.core.filters.fields import FilterableField, build_filter
from scoperag.retrievers.searches import FilteredSearch, TextQuery

_MAX_BOOKS = 10_000
_MAX_QUOTE_CHUNKS = 64
_LETTER = re.compile(r"[^\W\d_]")


class SentenceRef(BaseModel):
    """One sentence of a book and where it is."""

    sid: int
    chapter: int
    chapter_title: str
    sentence: str


def words(text: str) -> list[str]:
    """Lower-case word tokens, split on anything not a letter or digit (Qdrant's tokenizer)."""
    return [token.lower() for token in re.findall(r"[^\W_]+", text)]


def _contains(sentence: list[str], phrase: list[str]) -> bool:
    size = len(phrase)
    return any(sentence[i : i + size] == phrase for i in range(len(sentence) - size + 1))


def _refs(payload: dict[str, Any]) -> list[SentenceRef]:
    return [
        SentenceRef(
            sid=payload["pos_start"] + k,
            chapter=payload["chapter"],
            chapter_title=payload["chapter_title"],
            sentence=sentence,
        )
        for k, sentence in enumerate(payload["sentences"])
    ]


class BookLookup:
    """Lookups over the chunks of the books collection."""

    def __init__(self, backend: VectorBackend, collection: str = COLLECTION) -> None:
        self.backend = backend
        self.collection = collection

    def _filter(
        self,
        book_id: str,
        fields: Sequence[FilterableField] = (),
        extra: Sequence[models.Condition] = (),
        **values: Any,
    ) -> models.Filter:
        """`book_id == book_id` AND the given fields' conditions AND `extra`."""
        values["book_id"] = book_id
        return build_filter([BOOK_ID, *fields], values, extra) or models.Filter()

    def _last_chunk(self, flt: models.Filter) -> dict[str, Any] | None:
        order = models.OrderBy(key="pos_start", direction=models.Direction.DESC)
        records = self.backend.scroll(self.collection, flt, limit=1, order_by=order)
        return records[0].payload if records else None

    def book_ids(self) -> dict[str, int]:
        """Book id -> number of chunks, for every ingested book."""
        if not self.backend.collection_exists(self.collection):
            return {}
        counts = self.backend.facet(self.collection, BOOK_ID.payload_key, None, _MAX_BOOKS)
        return dict(sorted(counts.items()))

    def has_book(self, book_id: str) -> bool:
        """Whether any chunk of the book is stored (one point read, not a count)."""
        if not self.backend.collection_exists(self.collection):
            return False
        return bool(self.backend.scroll(self.collection, self._filter(book_id), limit=1))

    def sentence_count(self, book_id: str) -> int:
        """Sentences in the book (0 if it is not ingested)."""
        last = self._last_chunk(self._filter(book_id))
        return last["pos_end"] + 1 if last else 0

    def summary(self, book_id: str) -> BookSummary | None:
        last = self._last_chunk(self._filter(book_id))
        if last is None:
            return None
        return BookSummary(
            book_id=book_id,
            title=last["title"],
            sentences=last["pos_end"] + 1,
            chapters=len([number for number in self.chapters(book_id) if number > 0]),
            chunks=self.backend.count(self.collection, self._filter(book_id)),
        )

    def chapters(self, book_id: str) -> list[int]:
        """The chapter numbers of a book (0 is the text before chapter 1, if any)."""
        flt = self._filter(book_id)
        return sorted(self.backend.facet(self.collection, CHAPTER.payload_key, flt, _MAX_BOOKS))

    def chapter_end(self, book_id: str, chapter: int) -> int | None:
        """Sentence id of the chapter's last real sentence (one with a letter in it).

        Separator lines such as `* * *` or `***` close many chapters; a reader who finished
        the chapter has read its last words, not the ornament after them.
        """
        last = self._last_chunk(self._filter(book_id, [CHAPTER], chapter=chapter))
        if last is None:
            return None
        real = [ref.sid for ref in _refs(last) if _LETTER.search(ref.sentence)]
        return real[-1] if real else last["pos_end"]

    def sentence(self, book_id: str, sid: int) -> SentenceRef | None:
        """The sentence with id `sid`, from a chunk with pos_start <= sid <= pos_end."""
        flt = self._filter(book_id, [READ_UP_TO, REACHES], user_pos=sid, reaches=sid)
        records = self.backend.scroll(self.collection, flt, limit=1)
        if not records:
            return None
        return next(ref for ref in _refs(records[0].payload or {}) if ref.sid == sid)

    def find_quote(self, book_id: str, quote: str) -> tuple[list[SentenceRef], bool]:
        """Sentences containing the quote's words in order (case and punctuation ignored).

        Reads the first 64 matching chunks; the flag says whether more chunks match.
        """
        phrase = words(quote)
        match = models.FieldCondition(key="sentences", match=models.MatchPhrase(phrase=quote))
        flt = self._filter(book_id, extra=[match])
        first = models.OrderBy(key="pos_start", direction=models.Direction.ASC)
        records = self.backend.scroll(
            self.collection, flt, limit=_MAX_QUOTE_CHUNKS + 1, order_by=first
        )
        found: dict[int, SentenceRef] = {}
        for record in records[:_MAX_QUOTE_CHUNKS]:
            for ref in _refs(record.payload or {}):
                if _contains(words(ref.sentence), phrase):
                    found[ref.sid] = ref
        return [found[sid] for sid in sorted(found)], len(records) > _MAX_QUOTE_CHUNKS

    def near_quote(
        self, embedder: Embedder, book_id: str, quote: str, limit: int = 3
    ) -> list[SentenceRef]:
        """Sentences closest to a quote that is not in the book: dense search, then fuzzy."""
        search = FilteredSearch(
            self.backend, embedder, self.collection, self._filter(book_id), top_k=8
        )
        seen: dict[int, SentenceRef] = {}
        for point in search.points(TextQuery(quote)):
            for ref in _refs(point.payload or {}):
                seen[ref.sid] = ref
        wanted = " ".join(words(quote))
        ranked = sorted(
            seen.values(),
            key=lambda ref: fuzz.partial_ratio(wanted, " ".join(words(ref.sentence))),
            reverse=True,
        )
        return ranked[:limit]
