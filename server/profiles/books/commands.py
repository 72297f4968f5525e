"""`scoperag ingest books PATH --book-id ID [--title T]`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from scoperag.server.cli.support import window_options


def register(cli: click.Group, ingest: click.Group) -> None:
    """Add the books profile's commands."""

    @ingest.command("books")
    @click.argument("path", type=click.Path(path_type=Path))
    @click.option("--book-id", required=True, help="Id the tools will know the book by.")
    @click.option("--title", default=None, help="Title (default: the Gutenberg title or name).")
    @click.option(
        "--last-chapter",
        type=click.IntRange(min=0),
        default=None,
        help="Ingest only up to this chapter (a quick trial of a long book).",
    )
    @window_options
    @click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
    def ingest_book_command(
        path: Path,
        book_id: str,
        title: str | None,
        last_chapter: int | None,
        window: int | None,
        window_overlap: int | None,
        as_json: bool,
    ) -> None:
        """Ingest a plain-text book (UTF-8); re-ingesting a book id replaces that book. The
        chunking given is recorded with the collection and kept until changed."""
        from scoperag.pipelines.book import ingest_book
        from scoperag.server.cli.support import load_settings, progress_bar
        from scoperag.server.runtime import Runtime

        runtime = Runtime(load_settings())

        try:
            report = ingest_book(
                path,
                runtime.backend,
                runtime.embedder,
                book_id,
                title,
                last_chapter,
                progress_bar("book", "chunk"),
                {"window": window, "window_overlap": window_overlap},
            )
        finally:
            runtime.close()
        if as_json:
            click.echo(json.dumps(report.model_dump(), indent=2))
        else:
            click.echo(", ".join(f"{key}={value}" for key, value in report.model_dump().items()))
