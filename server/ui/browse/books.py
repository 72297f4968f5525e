"""A book as its reader sees it: its chapters, one chapter's sentences in order with the
reader's saved position marked, and what lies past it withheld (titles included)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scoperag.core.contracts.books import BOOK_ID, CHAPTER, DEFAULT_READER, READ_UP_TO
from scoperag.core.errors import InvalidParameterError, ScoperagError
from scoperag.server.profiles.declaration import Profile
from scoperag.server.ui.browse.common import match, ordered
from scoperag.server.ui.context import UiContext

TEMPLATE = "browse_books.html"
MAX_CHUNKS = 5000  # chunks read for one chapter at most


def _position(ctx: UiContext, profile: Profile, book: str, reader: str) -> dict | None:
    """The reader's saved position in `book`, or None where none is saved."""
    try:
        return ctx.call(profile.methods["position"], {"book_id": book, "reader": reader})
    except ScoperagError:
        return None


def _chapters(ctx: UiContext, collection: str, book: str, read_up_to: int) -> list[dict]:
    """Each chapter's number and, up to the reader's position, its title."""
    backend = ctx.runtime.backend
    flt = match(backend, collection, {BOOK_ID.payload_key: book})
    counts = backend.facet(collection, CHAPTER.payload_key, flt, 10_000)
    chapters = []
    for number in sorted(counts):
        first = ordered(
            ctx,
            collection,
            match(
                backend, collection, {BOOK_ID.payload_key: book, CHAPTER.payload_key: str(number)}
            ),
            READ_UP_TO.payload_key,
            1,
        )
        start = first[0]["pos_start"] if first else 0
        reached = start <= read_up_to
        title = first[0].get("chapter_title", "") if first and reached else ""
        chapters.append({"number": number, "title": title, "reached": reached})
    return chapters


def _sentences(chunks: list[dict[str, Any]]) -> list[tuple[int, str]]:
    """The chapter's sentences in order, each once (chunks may overlap)."""
    found: dict[int, str] = {}
    for chunk in chunks:
        for k, sentence in enumerate(chunk.get("sentences") or []):
            found.setdefault(chunk["pos_start"] + k, sentence)
    return sorted(found.items())


def _chapter(raw: str | None, default: int) -> int:
    if not raw:
        return default
    if not raw.isascii() or not raw.isdigit():
        raise InvalidParameterError("chapter", raw, "a chapter number from 0")
    return int(raw)


def page(
    ctx: UiContext, profile: Profile, collection: str, query: Mapping[str, str]
) -> dict[str, Any]:
    """The books (list_books' answer) or, with `book`, one chapter up to the reader's position."""
    backend = ctx.runtime.backend
    books = ctx.call(profile.methods["books"], {})["books"]
    book = query.get("book")
    if not book:
        return {"books": books, "book": None}
    reader = query.get("reader") or DEFAULT_READER
    position = _position(ctx, profile, book, reader)
    read_up_to = position["sid"] if position else -1
    chapters = _chapters(ctx, collection, book, read_up_to)
    default = position["chapter"] if position else (chapters[0]["number"] if chapters else 0)
    chapter = _chapter(query.get("chapter"), default)
    flt = match(backend, collection, {BOOK_ID.payload_key: book, CHAPTER.payload_key: str(chapter)})
    sentences = _sentences(ordered(ctx, collection, flt, READ_UP_TO.payload_key, MAX_CHUNKS))
    shown = [(sid, text) for sid, text in sentences if sid <= read_up_to]
    numbers = [c["number"] for c in chapters]
    at = numbers.index(chapter) if chapter in numbers else 0
    return {
        "books": books,
        "book": next((b for b in books if b["book_id"] == book), {"book_id": book, "title": book}),
        "reader": reader,
        "position": position,
        "chapters": chapters,
        "chapter": next((c for c in chapters if c["number"] == chapter), None),
        "sentences": shown,
        "withheld": len(sentences) - len(shown),
        "previous": numbers[at - 1] if at > 0 else None,
        "next": numbers[at + 1] if at + 1 < len(numbers) else None,
    }
