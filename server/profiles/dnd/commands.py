"""`scoperag ingest dnd DIR...`: Open5e (API v1) fixture folders into the dnd collection."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from scoperag.server.cli.support import load_settings, print_report, progress_bar


def register(cli: click.Group, ingest: click.Group) -> None:
    """Add the dnd commands."""

    @ingest.command("dnd")
    @click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
    @click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
    def ingest_dnd(paths: tuple[Path, ...], as_json: bool) -> None:
        """Ingest Open5e folders (each with a Document.json), or a folder holding several.

        One item per spell, creature, equipment, character option or rule; files of other
        kinds are skipped with a note; re-ingesting a file replaces its items.
        """
        from scoperag.server.profiles.dnd.service import ingest_paths
        from scoperag.server.runtime import Runtime

        runtime = Runtime(load_settings())
        try:
            result = ingest_paths(runtime, list(paths), progress_bar("dnd"))
        finally:
            runtime.close()
        print_report(result, as_json, unit="items")
        if not result.ingested:
            sys.exit(1)
