"""What the `scoperag` subcommands share: settings from the environment and options, errors
as one line, progress bars and ingest reports."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from pydantic import ValidationError

from scoperag.core.config.settings import Settings, describe_config_error
from scoperag.core.errors import ScoperagError

# settings field -> the command-line option that overrides it, where the names differ
OPTION_NAMES = {"pdf_collection": "--collection"}


def load_settings(**overrides: Any) -> Settings:
    """Settings from the environment plus command-line overrides, or a one-line exit with why."""
    given = {k: v for k, v in overrides.items() if v is not None}
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


def run_friendly(action: Callable[[], Any]) -> Any:
    """Run `action`; errors meant for people end the command with their message, no traceback."""
    try:
        return action()
    except (ScoperagError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None


def progress_bar(label: str, unit: str = "file") -> Callable[[int, int, str], None]:
    """A tqdm bar on a terminal (silent elsewhere) driven by (done, total, note) callbacks."""
    from tqdm import tqdm

    bar: dict[str, Any] = {}

    def update(done: int, total: int, note: str) -> None:
        if "bar" not in bar:
            bar["bar"] = tqdm(total=total, desc=label, unit=unit, disable=not sys.stderr.isatty())
        bar["bar"].total = total  # a total may grow as files are read (a PDF's pages)
        bar["bar"].n = done
        bar["bar"].set_postfix_str(note, refresh=False)
        bar["bar"].refresh()
        if done >= total:
            bar["bar"].close()

    return update


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


# The chunking options of `scoperag ingest pdf|docs|books` (`scoperag.core.config.chunking`)
KEPT = "default: the collection's setting, else"


def chunk_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """`--chunk-size` and `--chunk-overlap` (tokens), for the sentence splitter."""
    command = click.option(
        "--chunk-overlap",
        type=int,
        default=None,
        help=f"Tokens neighbouring chunks share ({KEPT} 32).",
    )(command)
    return click.option(
        "--chunk-size", type=int, default=None, help=f"Tokens per chunk, 64-8192 ({KEPT} 256)."
    )(command)


def window_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """`--window` and `--window-overlap` (sentences), for books."""
    command = click.option(
        "--window-overlap",
        type=int,
        default=None,
        help=f"Sentences neighbouring chunks share ({KEPT} 2).",
    )(command)
    return click.option(
        "--window", type=int, default=None, help=f"Sentences per chunk, 1-200 ({KEPT} 6)."
    )(command)
