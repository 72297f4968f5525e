"""Chapter headings ("Chapter 1", "CHAPTER I.", "Chapter XII: The Ball") and the text they head."""

from __future__ import annotations

import re
from dataclasses import dataclass

from scoperag.pipelines.page_labels import roman

_HEADING = re.compile(
    r"^[ \t]*chapter[ \t]+(?P<number>\d+|[ivxlcdm]+)\b[ \t]*[.:\-—]?[ \t]*(?P<title>[^\n]*)$",
    re.I | re.M,
)
_ROMAN_VALUES = {roman(number): number for number in range(1, 400)}
_TITLE_MAX = 80
FRONT_MATTER = "Front matter"


@dataclass
class Chapter:
    """A chapter's number, its title (the heading itself when it has none) and its text."""

    number: int
    title: str
    text: str


def _number(token: str) -> int | None:
    return int(token) if token.isdigit() else _ROMAN_VALUES.get(token.lower())


def _title_paragraph(text: str) -> tuple[str, str] | None:
    """(title, rest): a one-line first paragraph without end punctuation is the title."""
    parts = text.strip().split("\n\n", 1)
    first = parts[0].strip()
    one_line = len(parts) == 2 and "\n" not in first and len(first) <= _TITLE_MAX
    if one_line and first[-1] not in ".!?\"”’'":
        return first, parts[1]
    return None


def _headings(body: str) -> list[re.Match[str]]:
    """Heading lines that open a paragraph (a blank line or the start before them)."""
    found = []
    for match in _HEADING.finditer(body):
        opens_paragraph = match.start() == 0 or body[: match.start()].endswith("\n\n")
        if opens_paragraph and _number(match["number"]) is not None:
            found.append(match)
    return found


def split_chapters(body: str, book_title: str) -> list[Chapter]:
    """Chapters in reading order; text before the first heading is chapter 0 ("Front matter").

    A heading whose chapter has no text (a table of contents) is not a chapter. A book without
    headings is one chapter 1 named after the book.
    """
    headings = _headings(body)
    if not headings:
        return [Chapter(1, book_title, body.strip())]
    chapters = []
    if front := body[: headings[0].start()].strip():
        chapters.append(Chapter(0, FRONT_MATTER, front))
    ends = [match.start() for match in headings[1:]] + [len(body)]
    for match, end in zip(headings, ends, strict=True):
        text = body[match.end() : end]
        title = match["title"].strip()
        if not title and (split := _title_paragraph(text)):
            title, text = split
        if text.strip():
            number = _number(match["number"]) or 0
            chapters.append(Chapter(number, title or match[0].strip(), text.strip()))
    return chapters
