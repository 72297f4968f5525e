"""What the `scoperag` subcommands share: settings from the environment and options, errors
as one line, progress bars and ingest reports."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_args

import click
from pydantic import ValidationError

from scoperag.core.config.settings import Settings, describe_config_error
from scoperag.core.errors import ScoperagError
from scoperag.core.progress import ProgressBar

# settings field -> the command-line option that overrides it, where the names differ
OPTION_NAMES = {"pdf_collection": "--collection"}


# the settings of the door a command runs for in the resident engine (`server/daemon/cli_host.py`)
# that are its own, not the engine's: its SCOPERAG_PROFILES
DOOR = threading.local()


def load_settings(**overrides: Any) -> Settings:
    """Settings from the environment plus command-line overrides, or a one-line exit with why."""
    given = {
        k: v for k, v in {**getattr(DOOR, "settings", {}), **overrides}.items() if v is not None
    }
    try:
        return Settings(**given)
    except ValidationError as exc:
        options = {
            field: (OPTION_NAMES.get(field, "--" + field.replace("_", "-")), value)
            for field, value in given.items()
        }
        raise click.ClickException(
            f"Invalid configuration: {describe_config_error(exc, options)}"
        ) from None


class FriendlyGroup(click.Group):
    """The CLI's one error boundary: an error meant for people (a `ScoperagError`, or arguments
    a parameters model refused), raised while a command sets up or runs, ends it with one line
    on stderr and exit status 1, no traceback."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().main(*args, **kwargs)
        except (ScoperagError, ValidationError) as exc:
            error = click.ClickException(_message(exc))
            if kwargs.get("standalone_mode", True) is False:
                raise error from None
            error.show()
            sys.exit(error.exit_code)


def _message(exc: ScoperagError | ValidationError) -> str:
    if isinstance(exc, ValidationError):
        from scoperag.server.mcp.tooling import describe_validation_error

        return describe_validation_error(exc)
    return str(exc)


def progress_bar(label: str, unit: str = "file") -> ProgressBar:
    """The terminal's bar of a command's progress (`scoperag.core.progress`)."""
    return ProgressBar(label, unit)


def print_report(result: Any, as_json: bool, unit: str = "chunks") -> None:
    """An ingest result as JSON, or one line per file and a total in points (what `list`
    counts), read from each file's `unit` field."""
    data = result.model_dump()
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    for item in data["files"]:
        if item.get("error"):
            click.secho(item["error"], fg="yellow", err=True)
        else:
            shown = {k: v for k, v in item.items() if k != "path"}
            click.echo(
                f"{Path(item['path']).name}: " + ", ".join(f"{k}={v}" for k, v in shown.items())
            )
    points = sum(item.get(unit) or 0 for item in data["files"] if not item.get("error"))
    files = f"{data['ingested']} file" + ("" if data["ingested"] == 1 else "s")
    click.echo(f"ingested {points} points ({unit}) from {files}, skipped {data['skipped']}")


def _chunking_option(name: str, parameter: Any) -> Callable[..., Any]:
    """`--NAME` taking an integer, its help the ingestion parameter's own description
    (`scoperag.core.config.chunking`), so tools and CLI state one default."""
    return click.option(
        f"--{name}", type=int, default=None, help=get_args(parameter)[1].description
    )


def chunk_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """`--chunk-size` and `--chunk-overlap` (tokens), for the sentence splitter."""
    from scoperag.core.config.chunking import ChunkOverlap, ChunkSize

    command = _chunking_option("chunk-overlap", ChunkOverlap)(command)
    return _chunking_option("chunk-size", ChunkSize)(command)


def window_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """`--window` and `--window-overlap` (sentences), for books."""
    from scoperag.core.config.chunking import Window, WindowOverlap

    command = _chunking_option("window-overlap", WindowOverlap)(command)
    return _chunking_option("window", Window)(command)
