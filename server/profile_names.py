"""One spelling per profile: its name (pdf, books, memory, dnd, docs), the name of the
collection it writes, or an older spelling (`book`, `memories`) all name it."""

from __future__ import annotations

from scoperag.core.settings import PROFILES

# other spellings a profile is known by (accepted, never listed in help)
ALIASES = {"book": "books", "memories": "memory"}


def resolve_profile(given: str, collections: dict[str, str]) -> str | None:
    """The profile `given` names (its name, an alias or its collection), or None.

    `collections` maps each profile to the collection it writes.
    """
    if given in PROFILES:
        return given
    if given in ALIASES:
        return ALIASES[given]
    return next((p for p, name in collections.items() if name == given), None)
