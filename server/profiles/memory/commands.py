"""`scoperag ingest memory FILE.json`: import a JSON list of memories (devbench format too)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from scoperag.server.cli.support import load_settings, progress_bar, run_friendly


def register(cli: click.Group, ingest: click.Group) -> None:
    """Add the memory profile's commands."""

    @ingest.command("memory")
    @click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
    @click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
    def ingest_memories(file: Path, as_json: bool) -> None:
        """Import memories from FILE.json: a list of {content, tags, memory_type, created_at,
        metadata} objects, or an object with a `memories` list. Content already stored is kept
        once; a bad item is reported and skipped."""
        from scoperag.pipelines.memories import import_memories
        from scoperag.server.runtime import Runtime

        runtime = Runtime(load_settings())
        bar = progress_bar("memories")
        try:
            report = run_friendly(
                lambda: import_memories(
                    file,
                    runtime.backend,
                    runtime.embedder,
                    lambda d, t: bar(d, t, file.name),
                    runtime.settings.data_dir,
                )
            )
        finally:
            runtime.close()
        if as_json:
            click.echo(json.dumps(report.model_dump(), indent=2))
        else:
            for line in report.skipped:
                click.secho(f"{file.name}: {line}", fg="yellow", err=True)
            click.echo(
                f"{file.name}: stored {len(report.stored)}, already stored "
                f"{len(report.duplicates)}, skipped {len(report.skipped)}"
            )
        if report.skipped and not (report.stored or report.duplicates):
            sys.exit(1)
