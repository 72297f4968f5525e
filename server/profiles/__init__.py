"""The profiles, each declared once as `PROFILE` in its own module of this package.

The list of profiles is `scoperag.core.config.settings.PROFILES`, which the settings check
SCOPERAG_PROFILES against (core cannot import the server); profile `x` is declared in
`scoperag.server.profiles.x`. Adding a profile adds its module here and its name there.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable

from scoperag.core.config.settings import PROFILES
from scoperag.server.profiles.declaration import Profile


def declaration(name: str) -> Profile:
    """The declaration of profile `name` (one of `PROFILES`)."""
    return importlib.import_module(f"{__name__}.{name}").PROFILE


def declarations(names: Iterable[str] = PROFILES) -> list[Profile]:
    """The declarations of `names` (default: every profile), in that order."""
    return [declaration(name) for name in names]


def resolve_profile(given: str, collections: dict[str, str]) -> str | None:
    """The profile `given` names: its name, one of its aliases or its collection, else None.

    `collections` maps each profile to the collection it writes.
    """
    if given in PROFILES:
        return given
    aliased = (profile.name for profile in declarations() if given in profile.aliases)
    return next(aliased, None) or next((p for p, c in collections.items() if c == given), None)
