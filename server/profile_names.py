"""One spelling per profile on the command line: its name (pdf, books, memory, dnd, docs),
or the name of the collection it writes, or an older spelling (`book`, `memories`)."""

from __future__ import annotations

from typing import Any

import click

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


def profile_collections() -> dict[str, str]:
    """Profile -> the collection it writes, under the current settings."""
    from scoperag.server.cli import load_settings
    from scoperag.server.data_admin import profile_collection

    settings = load_settings()
    return {profile: profile_collection(settings, profile) for profile in PROFILES}


class ProfileName(click.ParamType):
    """A click argument taking a profile by any of its spellings; help lists the profile names."""

    name = "profile"

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str:
        return "{" + "|".join(PROFILES) + "}"

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> Any:
        from click.shell_completion import CompletionItem

        return [CompletionItem(p) for p in PROFILES if p.startswith(incomplete)]

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        collections = profile_collections()
        profile = resolve_profile(value, collections)
        if profile is None:
            self.fail(
                f"{value!r} is not a profile. Accepted: {', '.join(PROFILES)} "
                f"(or a profile's collection: {', '.join(collections.values())}).",
                param,
                ctx,
            )
        return profile
