"""What one ingestion may read and when it stops: caps on a source's bytes, PDF pages and items,
and on text that is not prose (NUL runs, a stretch with no sentence end), checked before the
expensive work, and the checkpoints where a cancelled or late call stops.

An MCP ingest call runs its pipeline inside `ingest_limits(...)`, which names the allowed
folders (files are opened below them without following links) and the call's stop check.
Pipelines open sources with `open_source`, call `check_count` once a source's pages or items
are known and `checkpoint()` between pages, chunks and embedding batches. Elsewhere (the CLI,
a notebook) the caps come from the settings and `checkpoint` does nothing.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal, TypeVar

from scoperag.core.config.open_beneath import SourceRefusedError, open_beneath
from scoperag.core.config.settings import Settings

T = TypeVar("T")
MAX_PROBLEMS = 100  # problems an ingest report lists (their count is given beside them)
MIB = 1 << 20
Counted = Literal["pages", "items"]
_SETTING = {"pages": "SCOPERAG_MAX_PDF_PAGES", "items": "SCOPERAG_MAX_ITEMS"}


class SourceCapError(SourceRefusedError):
    """A source over one of the ingestion caps, refused before it is parsed or embedded."""


@dataclass(frozen=True)
class IngestLimits:
    """The caps of one ingestion, the folders it may read below, and its stop check."""

    max_source_mb: float
    max_pdf_pages: int
    max_items: int
    roots: tuple[Path, ...] | None = None  # None: any path, opened as given
    stop: Callable[[], None] | None = None  # raises when the work must stop
    max_sentence_chars: int = 100_000

    @classmethod
    def of(
        cls,
        settings: Settings,
        roots: Sequence[Path] | None = None,
        stop: Callable[[], None] | None = None,
    ) -> IngestLimits:
        return cls(
            settings.max_source_mb,
            settings.max_pdf_pages,
            settings.max_items,
            None if roots is None else tuple(Path(r).expanduser().resolve() for r in roots),
            stop,
            settings.max_sentence_chars,
        )


_CURRENT: ContextVar[IngestLimits | None] = ContextVar("scoperag_ingest_limits", default=None)


@contextlib.contextmanager
def ingest_limits(limits: IngestLimits) -> Iterator[None]:
    """Run the ingestion inside (in this thread) under `limits`."""
    token = _CURRENT.set(limits)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current_limits() -> IngestLimits:
    """The running ingestion's limits, else the settings' caps."""
    return _CURRENT.get() or IngestLimits.of(Settings())


def checkpoint() -> None:
    """Stop here (raising the call's stop error) if the call was cancelled or is past its
    deadline; pipelines call it between units of work, before anything is written."""
    limits = _CURRENT.get()
    if limits is not None and limits.stop is not None:
        limits.stop()


def open_source(path: Path) -> BinaryIO:
    """`path` opened for reading: a regular file within the byte cap, below the allowed folders
    without following links when the ingestion names them. Raises `SourceRefusedError` (over
    the cap, not a regular file, reached through a link), or `OSError` if it cannot be opened."""
    limits = current_limits()
    if limits.roots is not None:
        fd = open_beneath(path, limits.roots)
    else:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    file = os.fdopen(fd, "rb")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise SourceRefusedError(f"it is {kind}")
        if info.st_size > limits.max_source_mb * MIB:
            raise SourceCapError(
                f"it is {info.st_size / MIB:,.1f} MiB, over the cap of "
                f"{limits.max_source_mb:g} MiB a source may be (SCOPERAG_MAX_SOURCE_MB); raise "
                "that setting to read it"
            )
    except BaseException:
        file.close()
        raise
    return file


def check_count(count: int, what: Counted) -> None:
    """Refuse a source with more pages (PDF) or items than its cap allows."""
    limits = current_limits()
    cap = limits.max_pdf_pages if what == "pages" else limits.max_items
    if count > cap:
        raise SourceCapError(
            f"it has {count:,} {what}, over the cap of {cap:,} ({_SETTING[what]}); raise that "
            "setting or split the source"
        )


def first_problems(problems: list[T]) -> list[T]:
    """The first `MAX_PROBLEMS` of a report's problems (the report gives their count)."""
    return problems[:MAX_PROBLEMS]


_SENTENCE_END = re.compile(r"[.!?\u3002\uff01\uff1f]|\n[ \t]*\n")  # ., !, ?, CJK ends, blank line
NUL_RUN = 4  # NUL characters in a row that make a source "not text"
NUL_SHARE = 0.01  # ... or this share of its characters (UTF-16 read as UTF-8: every other one)


def check_text(text: str) -> None:
    """Refuse a source whose decoded text is not prose: runs of NUL characters (a binary file,
    or UTF-16 read as UTF-8), or a stretch with no sentence end longer than the cap
    (`SCOPERAG_MAX_SENTENCE_CHARS`), before it is split or embedded."""
    nuls = text.count("\x00")
    if nuls and ("\x00" * NUL_RUN in text or nuls > len(text) * NUL_SHARE):
        raise SourceCapError(
            f"it holds {nuls:,} NUL characters: it is not text (a binary file, or UTF-16); "
            "convert it to UTF-8 text"
        )
    cap = current_limits().max_sentence_chars
    start = longest = 0
    for end in _SENTENCE_END.finditer(text):
        longest = max(longest, end.start() - start)
        start = end.end()
    longest = max(longest, len(text) - start)
    if longest > cap:
        raise SourceCapError(
            f"it has a stretch of {longest:,} characters with no sentence end, over the cap of "
            f"{cap:,} (SCOPERAG_MAX_SENTENCE_CHARS): it is not prose; raise that setting to "
            "read it"
        )
