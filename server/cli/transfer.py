"""`scoperag export PROFILE FILE` and `scoperag import FILE`: move a profile's collections
through a file, or bring in another memory server's export."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from pydantic import BaseModel

from scoperag.core.progress import Progress
from scoperag.server.cli.profile_args import ProfileName
from scoperag.server.cli.support import load_settings, progress_bar

if TYPE_CHECKING:
    from scoperag.server.runtime import Runtime


def _run(label: str, action: Callable[[Runtime, Progress], Any]) -> Any:
    """`action(runtime, progress)` on this data dir's store, with a progress bar in points."""
    from scoperag.server.runtime import Runtime

    runtime = Runtime(load_settings())
    bar = progress_bar(label, unit="point")
    try:
        return action(runtime, bar)
    finally:
        runtime.close()


def _printed_as_json(report: BaseModel, as_json: bool) -> bool:
    if as_json:
        click.echo(json.dumps(report.model_dump(), indent=2))
    return as_json


def register(cli: click.Group, ingest: click.Group) -> None:
    """Add `export` and `import`."""

    @cli.command("export")
    @click.argument("profile", type=ProfileName())
    @click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
    @click.option(
        "--format",
        "format_",
        default=None,
        help="scoperag-export (default), or another server's format the profile writes "
        "(memory: mcp-memory-service).",
    )
    @click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
    def export_command(profile: str, file: Path, format_: str | None, as_json: bool) -> None:
        """Write PROFILE's collection to FILE: JSON Lines, a header line (format, profile,
        collection, embedder, point count, time) then one point per line with its payload and
        vectors; gzip when FILE ends in .gz. Works beside running servers."""
        from scoperag.server.transfer.exporting import export_profile

        report = _run(
            f"export {profile}",
            lambda runtime, step: export_profile(runtime, profile, file, format_, step),
        )
        if _printed_as_json(report, as_json):
            return
        points = ", ".join(f"{name}: {count} points" for name, count in report.collections.items())
        click.echo(f"exported {points} to {report.file} ({report.format}, {report.seconds} s)")

    @cli.command("import")
    @click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
    @click.option(
        "--into",
        type=ProfileName(),
        default=None,
        help="The profile to import into (default: the one the file names; memory for "
        "other memory servers' exports).",
    )
    @click.option(
        "--reembed",
        is_flag=True,
        help="Embed the text again with this store's embedder (for a file exported with "
        "another one, which is otherwise refused).",
    )
    @click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
    def import_command(file: Path, into: str | None, reembed: bool, as_json: bool) -> None:
        """Import FILE: a `scoperag export` file (same ids, payloads and vectors, so every tool
        answers as where it was exported; a point already stored is replaced), or, detected
        from the content, an export of mcp-memory-service, mem0 or the MCP reference memory
        server (memory.json) into the memory profile. Malformed lines are reported by number
        and skipped. Works beside running servers."""
        from scoperag.server.transfer.importing import import_file

        report = _run(
            "import", lambda runtime, step: import_file(runtime, file, into, reembed, step)
        )
        if _printed_as_json(report, as_json):
            return
        for reason in report.refused:
            click.secho(reason, fg="yellow", err=True)
        if report.resumed:
            click.echo(report.resumed)
        for field, why in report.dropped.items():
            click.echo(f"field '{field}' not kept: {why}")
        click.echo(
            f"imported {report.imported} into {report.profile} from {report.file} "
            f"({report.format}{', re-embedded' if report.reembedded else ''}): "
            f"{report.duplicates} skipped as exact duplicates, {report.refused_count} refused"
            + (f"; {report.state} items of the profile's state restored" if report.state else "")
        )
