"""Plain-text books as Project Gutenberg ships them: encoding, line ends, header and licence."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from scoperag.core.config.ingest_limits import check_text, open_source
from scoperag.core.config.open_beneath import SourceRefusedError
from scoperag.core.errors import ScoperagError

_START = re.compile(r"^\*{3}\s*START OF (?:THE|THIS) PROJECT GUTENBERG.*$", re.M | re.I)
_END = re.compile(r"^\*{3}\s*END OF (?:THE|THIS) PROJECT GUTENBERG.*$", re.M | re.I)
_END_LINE = re.compile(r"^End of (?:the )?Project Gutenberg.*$", re.M | re.I)
_TITLE = re.compile(r"^Title:[ \t]*(.+)$", re.M)
_CREDITS = re.compile(r"^(?:Produced by|E-text prepared by|Transcribed from)\b", re.I)


class BookRejectedError(ScoperagError):
    """A text file that cannot be ingested as a book, with the reason in words."""


@dataclass
class BookText:
    """The book's own text, without Project Gutenberg's header and licence."""

    body: str
    title: str | None
    gutenberg: bool


def read_text(path: Path) -> str:
    """The file as UTF-8 (a byte-order mark dropped) with every line ending turned into \\n."""
    try:
        with open_source(path) as file:
            raw = file.read()
    except SourceRefusedError as exc:
        raise BookRejectedError(str(exc)) from None
    except FileNotFoundError:
        raise BookRejectedError("the file does not exist") from None
    except IsADirectoryError:
        raise BookRejectedError("it is a directory, not a text file") from None
    except OSError as exc:
        raise BookRejectedError(f"it cannot be read ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BookRejectedError(
            f"it is not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    try:
        check_text(text)
    except SourceRefusedError as exc:
        raise BookRejectedError(str(exc)) from None
    return text


def _without_credits(body: str) -> str:
    """Drop a leading 'Produced by ...' paragraph: PG's credit line, not the author's text."""
    paragraphs = body.strip().split("\n\n", 1)
    if len(paragraphs) == 2 and _CREDITS.match(paragraphs[0]):
        return paragraphs[1]
    return body


def strip_gutenberg(text: str) -> BookText:
    """The text between the START and END markers, else all of it."""
    title_match = _TITLE.search(text)
    start, end = _START.search(text), _END.search(text)
    if not start:
        return BookText(body=text.strip(), title=None, gutenberg=False)
    body = text[start.end() : end.start() if end else len(text)]
    if closing := list(_END_LINE.finditer(body)):
        body = body[: closing[-1].start()]
    title = title_match[1].strip() if title_match and title_match.start() < start.start() else None
    return BookText(body=_without_credits(body).strip(), title=title, gutenberg=True)
