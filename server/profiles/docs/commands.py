"""`scoperag ingest docs FILE.jsonl` and `scoperag indexes check|ensure`."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from scoperag.server.cli.support import chunk_options, load_settings, progress_bar

if TYPE_CHECKING:
    from scoperag.core.engine.index_status import CollectionIndexes, IndexReport


def _status_line(status: CollectionIndexes, engine_indexes: bool) -> str:
    if not status.exists:
        return f"{status.collection}: not created yet (its indexes are created with it)"
    if not engine_indexes:
        return f"{status.collection}: exists (this engine keeps no payload indexes)"
    marks = []
    for key, kind in status.required.items():
        if key in status.missing:
            marks.append(f"{key} ({kind}) MISSING")
        elif key in status.wrong_type:
            marks.append(f"{key} ({kind}) WRONG TYPE {status.wrong_type[key]}")
        else:
            marks.append(f"{key} ({kind}) " + ("created" if key in status.created else "ok"))
    return f"{status.collection}: " + ", ".join(marks)


def _print_indexes(report: IndexReport, as_json: bool) -> None:
    if as_json:
        click.echo(report.model_dump_json(indent=2))
        return
    click.echo(f"backend: {report.backend}")
    if not report.payload_indexes:
        click.echo("Payload indexes do not apply: this engine scans every point on each query.")
    for status in report.collections:
        click.echo(_status_line(status, report.payload_indexes))
    if not report.ready:
        click.secho(
            "Required payload indexes are missing or of the wrong type: run `scoperag indexes "
            "ensure` (an index of the wrong type must be deleted on the server first).",
            fg="red",
            err=True,
        )


def _index_command(action: Callable[..., IndexReport], as_json: bool) -> None:
    """Run `action(backend, settings)` on the configured engine; exit 1 unless ready."""
    from scoperag.server.runtime import Runtime

    runtime = Runtime(load_settings())
    try:
        report = action(runtime.backend, runtime.settings)
    finally:
        runtime.close()
    _print_indexes(report, as_json)
    if not report.ready:
        sys.exit(1)


def register(cli: click.Group, ingest: click.Group) -> None:
    """Add the docs profile's commands to the `scoperag` CLI."""

    @ingest.command("docs")
    @click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
    @chunk_options
    @click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
    def ingest_docs(
        file: Path, chunk_size: int | None, chunk_overlap: int | None, as_json: bool
    ) -> None:
        """Ingest a JSONL file, one document a line (doc_id, title, text, scope, status,
        doc_type, agent_id, updated_at); a bad line is reported with its number and skipped.
        The chunking given is recorded with the collection and kept until changed."""
        from scoperag.pipelines.docs import ingest_docs_jsonl
        from scoperag.server.runtime import Runtime

        runtime = Runtime(load_settings())
        try:
            report = ingest_docs_jsonl(
                file,
                runtime.backend,
                runtime.embedder,
                progress_bar("docs", unit="line"),
                {"chunk_size": chunk_size, "chunk_overlap": chunk_overlap},
            )
        finally:
            runtime.close()
        if as_json:
            click.echo(report.model_dump_json(indent=2))
        else:
            for skipped in report.skipped:
                click.secho(f"line {skipped.line}: skipped, {skipped.error}", fg="yellow", err=True)
            for note in report.notes:
                click.echo(note, err=True)
            click.echo(
                f"{file.name}: {report.documents} documents, {report.chunks} chunks written, "
                f"{len(report.skipped)} lines skipped"
            )
        if report.skipped and not report.documents:
            sys.exit(1)

    @cli.group()
    def indexes() -> None:
        """Required payload indexes of every enabled profile's collection."""

    @indexes.command("check")
    @click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
    def check(as_json: bool) -> None:
        """Report which required indexes exist; exit 1 if one is missing."""
        from scoperag.core.engine.index_status import index_report

        _index_command(index_report, as_json)

    @indexes.command("ensure")
    @click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
    def ensure(as_json: bool) -> None:
        """Create the required indexes that are missing (on every existing collection)."""
        from scoperag.core.engine.index_status import ensure_required

        _index_command(ensure_required, as_json)
