"""`scoperag ingest pdf PATH... [--document-id ID] [--collection NAME]` and `scoperag demo`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from scoperag.server.cli.support import chunk_options, load_settings, print_report, progress_bar


def register(cli: click.Group, ingest: click.Group) -> None:
    """Add the pdf profile's commands: `scoperag ingest pdf` and `scoperag demo`."""

    @cli.command()
    @click.option("--query", default="How do I encrypt a PDF file?", show_default=True)
    @click.option(
        "--data-dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="Keep the demo's store here (default: a temporary dir, removed afterwards).",
    )
    def demo(query: str, data_dir: Path | None) -> None:
        """Ingest the bundled sample PDFs into a throw-away store and run filtered `qdrant-find`
        calls over MCP (never touches your data dir)."""
        from scoperag.server.profiles.pdf.demo import run_demo

        run_demo(load_settings(), query, data_dir)

    @ingest.command("pdf")
    @click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
    @click.option("--document-id", default=None, help="Id for a single PDF (default: file stem).")
    @click.option(
        "--collection", default=None, help="Collection (default SCOPERAG_PDF_COLLECTION)."
    )
    @chunk_options
    @click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
    def ingest_pdf(
        paths: tuple[Path, ...],
        document_id: str | None,
        collection: str | None,
        chunk_size: int | None,
        chunk_overlap: int | None,
        as_json: bool,
    ) -> None:
        """Ingest PDF files (or directories of PDFs); re-ingesting a file replaces its pages.
        The chunking given is recorded with the collection and kept until changed."""
        from scoperag.server.profiles.pdf.service import ingest_paths
        from scoperag.server.runtime import Runtime

        runtime = Runtime(load_settings(pdf_collection=collection))
        bar = progress_bar("pdf", unit="page")  # pages of every file, done as chunks embed
        chunking = {"chunk_size": chunk_size, "chunk_overlap": chunk_overlap}
        result = ingest_paths(runtime, list(paths), document_id, bar, chunking)
        runtime.close()
        print_report(result, as_json)
        if result.skipped and not result.ingested:
            sys.exit(1)
