"""Open a file below an allowed folder without following links, so what was checked is read.

A path checked against the allowed folders and opened later by name can meet a folder swapped
for a link in between. `open_beneath` opens the allowed folder, then each part of the path
relative to it through the previous part's descriptor with `O_NOFOLLOW`: a link anywhere below
the folder is refused, and what it returns is the file the path named when it was opened.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from pathlib import Path

from scoperag.core.errors import InvalidParameterError, ScoperagError

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused once open)
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class SourceRefusedError(ScoperagError):
    """A source file not read: reached through a link, or over an ingestion cap."""


class LinkRefusedError(SourceRefusedError):
    """A part of a path below an allowed folder is a link (swapped in after the path's check)."""

    def __init__(self, root: Path, part: str) -> None:
        super().__init__(
            f"its part {part!r} below {root} is a link or not a folder now (replaced after the "
            "path was checked), and links below the allowed folders are not followed while "
            "reading; give the path again once it is a plain file or folder"
        )


def open_beneath(path: Path, roots: Sequence[Path], parameter: str = "path") -> int:
    """A read-only descriptor of `path` (resolved), opened part by part from the allowed folder
    it lies below (`roots`, resolved) without following any link."""
    root = next((r for r in roots if path == r or path.is_relative_to(r)), None)
    parts = path.relative_to(root).parts if root is not None else ()
    if not parts:
        raise InvalidParameterError(
            parameter, str(path), "files below " + ", ".join(str(r) for r in roots)
        )
    current = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for depth, part in enumerate(parts):
            last = depth == len(parts) - 1
            try:
                opened = os.open(part, _FILE if last else _DIRECTORY, dir_fd=current)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise LinkRefusedError(root, str(Path(*parts[: depth + 1]))) from None
                raise
            os.close(current)
            current = opened
        return current
    except BaseException:
        os.close(current)
        raise
