"""The error for a tool name no tool has, naming the close one (for MCP calls and the CLI)."""

from __future__ import annotations

from collections.abc import Iterable

from rapidfuzz import fuzz, process


def close_names(name: str, names: Iterable[str], most: int = 3) -> list[str]:
    """The names most like `name` (`qdrant_find` -> `qdrant-find`), best first."""
    found = process.extract(name, list(names), scorer=fuzz.ratio, limit=most, score_cutoff=60)
    return [match for match, _score, _index in found]


def unknown_tool(name: str, names: Iterable[str]) -> str:
    """ "Unknown tool 'x'; did you mean 'y'?" and the tools there are."""
    names = sorted(names)
    close = close_names(name, names, most=1)
    hint = f"; did you mean '{close[0]}'?" if close else "."
    shown = name if len(name) <= 80 else f"{name[:80]}..."
    shown = shown.encode("utf-8", errors="backslashreplace").decode("utf-8")
    return f"Unknown tool '{shown}'{hint} Tools: {', '.join(names) or 'none'}."
