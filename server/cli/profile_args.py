"""Command-line arguments and groups that take a profile by any of its spellings, while help
lists only the profile names."""

from __future__ import annotations

from typing import Any

import click

from scoperag.server.profiles import declarations, names, resolve_profile


def profile_collections() -> dict[str, str]:
    """Profile -> the collection it writes, under the current settings."""
    from scoperag.server.cli.support import load_settings

    settings = load_settings()
    return {profile.name: profile.collection(settings) for profile in declarations()}


class ProfileName(click.ParamType):
    """A profile by any spelling (or one of `extra`, e.g. `tag` for `delete`)."""

    name = "profile"

    def __init__(self, extra: tuple[str, ...] = ()) -> None:
        self.extra = extra

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str:
        return "{" + "|".join((*names(), *self.extra)) + "}"

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> Any:
        from click.shell_completion import CompletionItem

        accepted = (*names(), *self.extra)
        return [CompletionItem(name) for name in accepted if name.startswith(incomplete)]

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        if value in self.extra:
            return value
        collections = profile_collections()
        profile = resolve_profile(value, collections)
        if profile is None:
            self.fail(
                f"{value!r} is not a profile. Accepted: {', '.join((*names(), *self.extra))} "
                f"(or a profile's collection: {', '.join(collections.values())}).",
                param,
                ctx,
            )
        return profile


class ProfileGroup(click.Group):
    """A group of one subcommand per profile, reached by any spelling of the profile."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            return command
        profile = resolve_profile(cmd_name, profile_collections())
        return super().get_command(ctx, profile) if profile else None
