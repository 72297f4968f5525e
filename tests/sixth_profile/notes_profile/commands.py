"""`scoperag ingest notes FILE`."""

from __future__ import annotations

from pathlib import Path

import click

from scoperag.server.cli.support import load_settings


def register(cli: click.Group, ingest: click.Group) -> None:
    """Add `scoperag ingest notes`."""

    @ingest.command("notes")
    @click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
    def ingest_notes_command(path: Path) -> None:
        """Ingest a notes file (`topic: text` a line)."""
        from notes_profile.pipeline import ingest_notes
        from scoperag.server.runtime import Runtime

        runtime = Runtime(load_settings())
        try:
            written = ingest_notes(path, runtime.backend, runtime.embedder)
        finally:
            runtime.close()
        click.echo(f"{written} notes ingested")
