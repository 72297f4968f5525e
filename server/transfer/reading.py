"""Reading an import file as a bounded stream of numbered lines.

The file is read in binary (gzip recognised by its first bytes, whatever its name), a line at a
time and never more than `max_import_line_mb` of one line in memory; each line is decoded as
UTF-8 on its own, so a byte that is not UTF-8 refuses that line by its number and the rest is
read. A UTF-8 byte-order mark before the first line is accepted. Past `max_import_mb`
decompressed bytes, or where a gzip stream is cut short or damaged, reading stops with an
`ImportFileError` naming the file and the line.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from scoperag.core.config.settings import Settings
from scoperag.core.errors import ScoperagError

GZIP_MAGIC = b"\x1f\x8b"
BOM = b"\xef\xbb\xbf"
MIB = 1 << 20
CHUNK = 1 << 20  # bytes of an over-long line skipped at a time


class ImportFileError(ScoperagError):
    """A file an import cannot read on from `line` (over a cap, cut short, not gzip)."""

    def __init__(self, path: Path, line: int, reason: str) -> None:
        self.path, self.line, self.reason = path, line, reason
        super().__init__(f"{path}: line {line}: {reason}")


@dataclass(frozen=True)
class Line:
    """A line of the file: its number from 1, and its text or why it cannot be read."""

    number: int
    text: str | None
    problem: str | None = None


@dataclass(frozen=True)
class ReadLimits:
    """How much of a file an import reads: decompressed bytes in all, bytes of one line."""

    total_bytes: int
    line_bytes: int

    @classmethod
    def of(cls, settings: Settings) -> ReadLimits:
        return cls(int(settings.max_import_mb * MIB), int(settings.max_import_line_mb * MIB))


def open_binary(path: Path) -> IO[bytes]:
    """`path` for reading, decompressed when it is gzip (by its first bytes, not its name)."""
    try:
        raw = path.open("rb")
    except OSError as exc:
        raise ImportFileError(path, 1, f"the file cannot be read ({exc.strerror})") from None
    compressed = raw.read(2) == GZIP_MAGIC
    raw.seek(0)
    return gzip.GzipFile(fileobj=raw) if compressed else raw


def _fail(path: Path, number: int, exc: Exception) -> ImportFileError:
    if isinstance(exc, EOFError):
        reason = "the gzip stream ends here: the file is cut short (a truncated download?)"
    else:
        reason = f"the file cannot be decompressed from here ({type(exc).__name__}: {exc})"
    return ImportFileError(path, number, reason)


def read_lines(path: Path, limits: ReadLimits) -> Iterator[Line]:
    """Each line of `path` that is not blank, decoded (see the module's docstring)."""
    total, number = 0, 0
    with open_binary(path) as file:
        while True:
            number += 1
            try:
                data = file.readline(limits.line_bytes + 1)
                skipped = 0
                if len(data) > limits.line_bytes and not data.endswith(b"\n"):
                    while (chunk := file.readline(CHUNK)) and not chunk.endswith(b"\n"):
                        skipped += len(chunk)
                    skipped += len(chunk)
            except (EOFError, OSError, zlib.error) as exc:
                raise _fail(path, number, exc) from None
            if not data:
                return
            total += len(data) + skipped
            if total > limits.total_bytes:
                raise ImportFileError(
                    path,
                    number,
                    f"the file is over {limits.total_bytes / MIB:g} MiB once decompressed "
                    "(SCOPERAG_MAX_IMPORT_MB); raise that setting to read it whole",
                )
            if skipped:
                yield Line(
                    number,
                    None,
                    f"the line is over {limits.line_bytes / MIB:g} MiB "
                    "(SCOPERAG_MAX_IMPORT_LINE_MB); it was skipped unread",
                )
                continue
            if number == 1 and data.startswith(BOM):
                data = data[len(BOM) :]
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                byte = data[exc.start : exc.start + 1].hex()
                problem = f"not UTF-8 text (byte 0x{byte} at column {exc.start + 1})"
                yield Line(number, None, problem)
                continue
            if text.strip():
                yield Line(number, text)


def read_text(path: Path, settings: Settings) -> str:
    """The whole of a small file (another server's export) as text, decompressed and decoded,
    within `max_source_mb`; `ImportFileError` (with the line) if it cannot be read."""
    cap = int(settings.max_source_mb * MIB)
    with open_binary(path) as file:
        try:
            data = file.read(cap + 1)
        except (EOFError, OSError, zlib.error) as exc:
            raise _fail(path, 1, exc) from None
    if len(data) > cap:
        raise ImportFileError(
            path,
            1,
            f"another server's export is read whole, and this one is over "
            f"{settings.max_source_mb:g} MiB (SCOPERAG_MAX_SOURCE_MB); raise that setting to "
            "read it",
        )
    data = data.removeprefix(BOM)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        byte = data[exc.start : exc.start + 1].hex()
        raise ImportFileError(path, line, f"not UTF-8 text (byte 0x{byte})") from None
