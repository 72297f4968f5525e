"""Paths an MCP client may make the server read: only regular files below SCOPERAG_ALLOWED_DIRS.

`files_to_ingest` is the one gate every MCP ingest tool passes its `paths` through: each path
given and each file a folder scan finds is resolved (symlinks and `..` followed) and must lie
below an allowed directory; FIFOs, sockets and devices are never opened; duplicates collapse;
a call reads at most `SCOPERAG_INGEST_MAX_FILES` files.
"""

from __future__ import annotations

import stat
from collections.abc import Sequence
from pathlib import Path

from scoperag.core.errors import InvalidParameterError, ScoperagError


def _roots(allowed_dirs: Sequence[Path]) -> list[Path]:
    if not allowed_dirs:
        raise ScoperagError(
            "Ingesting through MCP is off: set SCOPERAG_ALLOWED_DIRS to the directories the "
            "server may read (comma-separated), or use `scoperag ingest` on the command line."
        )
    return [Path(root).expanduser().resolve() for root in allowed_dirs]


def _inside(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def allowed_path(raw: str, allowed_dirs: Sequence[Path], parameter: str = "paths") -> Path:
    """The resolved path (symlinks and `..` followed) if it lies below an allowed directory."""
    roots = _roots(allowed_dirs)
    resolved = Path(raw).expanduser().resolve()
    if not _inside(resolved, roots):
        raise InvalidParameterError(
            parameter, raw, "paths below " + ", ".join(str(root) for root in roots)
        )
    if not resolved.exists():
        raise InvalidParameterError(parameter, raw, "an existing file or directory")
    return resolved


def _is_regular(path: Path) -> bool:
    """A regular file (never opened: a FIFO would block the reader forever)."""
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return False


def regular_file(raw: str, allowed_dirs: Sequence[Path], parameter: str = "path") -> Path:
    """`allowed_path` for a parameter that names one file: a regular file (never a FIFO)."""
    path = allowed_path(raw, allowed_dirs, parameter)
    if not _is_regular(path):
        raise InvalidParameterError(parameter, raw, "a regular file")
    return path


def files_to_ingest(
    raw_paths: Sequence[str],
    allowed_dirs: Sequence[Path],
    suffix: str,
    max_files: int,
    parameter: str = "paths",
) -> list[Path]:
    """The regular files the paths name, folders scanned for `suffix`, each resolved and
    checked against the allowed directories, duplicates collapsed, at most `max_files`."""
    roots = _roots(allowed_dirs)
    files: dict[Path, None] = {}
    for raw in raw_paths:
        given = allowed_path(raw, allowed_dirs, parameter)
        if given.is_dir():
            found = sorted(given.rglob(f"*{suffix}"))
        elif _is_regular(given):
            found = [given]
        else:
            raise InvalidParameterError(parameter, raw, "a regular file or a directory")
        for path in found:
            resolved = path.resolve()
            if not _inside(resolved, roots):
                raise InvalidParameterError(
                    parameter,
                    str(path),
                    f"files below the allowed directories (it resolves to {resolved}); "
                    "remove the link or move its target below SCOPERAG_ALLOWED_DIRS",
                )
            if _is_regular(resolved):
                files[resolved] = None
        if len(files) > max_files:
            raise InvalidParameterError(
                parameter,
                list(raw_paths),
                f"at most {max_files} files in one call (SCOPERAG_INGEST_MAX_FILES); "
                "ingest fewer folders at a time",
            )
    return list(files)


def expand_files(paths: Sequence[Path], suffix: str) -> list[Path]:
    """Files as given, and the files with `suffix` inside given directories (sorted)."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(p for p in path.rglob(f"*{suffix}") if _is_regular(p))
        else:
            files.append(path)
    return files
