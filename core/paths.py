"""Paths an MCP client may make the server read: only below SCOPERAG_ALLOWED_DIRS."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from scoperag.core.errors import InvalidParameterError, ScoperagError


def allowed_path(raw: str, allowed_dirs: Sequence[Path], parameter: str = "paths") -> Path:
    """The resolved path (symlinks and `..` followed) if it lies below an allowed directory."""
    if not allowed_dirs:
        raise ScoperagError(
            "Ingesting through MCP is off: set SCOPERAG_ALLOWED_DIRS to the directories the "
            "server may read (comma-separated), or use `scoperag ingest` on the command line."
        )
    resolved = Path(raw).expanduser().resolve()
    roots = [Path(root).expanduser().resolve() for root in allowed_dirs]
    if not any(resolved == root or resolved.is_relative_to(root) for root in roots):
        raise InvalidParameterError(
            parameter, raw, "paths below " + ", ".join(str(root) for root in roots)
        )
    if not resolved.exists():
        raise InvalidParameterError(parameter, raw, "an existing file or directory")
    return resolved


def expand_files(paths: Sequence[Path], suffix: str) -> list[Path]:
    """Files as given, and the files with `suffix` inside given directories (sorted)."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(p for p in path.rglob(f"*{suffix}") if p.is_file())
        else:
            files.append(path)
    return files
