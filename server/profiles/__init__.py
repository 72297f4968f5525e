"""The profiles, found rather than listed: each folder of this package declares one as
`PROFILE` in its `__init__.py`, and another installed package may add one with a
`scoperag.profiles` entry point (`<name> = "package.module"`, a module declaring `PROFILE`).

A profile's folder holds its declaration, tools, models, service, commands and routes; its
payload contract is found beside the others (`scoperag.core.contracts`).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable
from functools import cache
from importlib.metadata import entry_points

from scoperag.core.errors import InvalidParameterError
from scoperag.server.profiles.declaration import Profile

ENTRY_POINTS = "scoperag.profiles"


@cache
def _found() -> dict[str, Profile]:
    """Every profile installed, in its declared order (`Profile.order`, then name)."""
    modules = [f"{__name__}.{info.name}" for info in pkgutil.iter_modules(__path__) if info.ispkg]
    modules += [point.value for point in entry_points(group=ENTRY_POINTS)]
    found: dict[str, Profile] = {}
    for module in modules:
        profile = importlib.import_module(module).PROFILE
        found.setdefault(profile.name, profile)
    return dict(sorted(found.items(), key=lambda item: (item[1].order, item[0])))


def names() -> list[str]:
    """Every profile's name, in the declared order."""
    return list(_found())


def declaration(name: str) -> Profile:
    """The declaration of profile `name`."""
    found = _found()
    if name not in found:
        raise InvalidParameterError("profile", name, ", ".join(found))
    return found[name]


def declarations(chosen: Iterable[str] | None = None) -> list[Profile]:
    """The declarations of the profiles `chosen` (default: every one), in the declared order."""
    found = _found()
    wanted = set(found) if chosen is None else {declaration(name).name for name in chosen}
    return [profile for name, profile in found.items() if name in wanted]


def resolve_profile(given: str, collections: dict[str, str]) -> str | None:
    """The profile `given` names: its name, one of its aliases or its collection, else None.

    `collections` maps each profile to the collection it writes.
    """
    if given in _found():
        return given
    aliased = (profile.name for profile in declarations() if given in profile.aliases)
    return next(aliased, None) or next((p for p, c in collections.items() if c == given), None)
