"""Why a search came back empty when a filter names a value nothing stores: one note per such
parameter listing the values that are stored (asked of the engine only for an empty result)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scoperag.core.errors import as_json

if TYPE_CHECKING:
    from scoperag.core.engine.backend import VectorBackend

_MANY = 10_000  # facet limit meaning "every value"
_LISTED = 20  # stored values a note names


def unknown_value_notes(
    backend: VectorBackend, collection: str, given: dict[str, tuple[str, Any]]
) -> list[str]:
    """For each parameter -> (payload key, value or list of values) given, a note when some
    value is stored on no point: `Unknown value ["x"] in 'tags'; stored: a, b.`"""
    notes = []
    for parameter, (key, value) in given.items():
        if value is None:
            continue
        wanted = value if isinstance(value, list) else [value]
        stored = {str(v) for v, n in backend.facet(collection, key, None, _MANY).items() if n}
        unknown = [v for v in wanted if str(v) not in stored]
        if not unknown:
            continue
        listed = ", ".join(sorted(stored)[:_LISTED]) or "none"
        if len(stored) > _LISTED:
            listed += f" ... ({len(stored)} in all)"
        shown = as_json(unknown if isinstance(value, list) else unknown[0])
        notes.append(f"Unknown value {shown} in '{parameter}'; stored: {listed}.")
    return notes
