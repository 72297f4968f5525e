"""`scoperag demo`: ingest the bundled sample PDFs, then ask `qdrant-find` over MCP with filters.

The demo writes into a throw-away data dir (a temporary one, removed afterwards, unless the
caller names one), never into the user's store.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

import click

from scoperag.core.config.settings import Settings
from scoperag.server.samples import SAMPLES

# what a user runs next, on their own data (printed when the demo ends)
NEXT_COMMANDS = (
    ("ingest your PDFs", "scoperag ingest pdf PATH/TO/PDFS"),
    ("search them", 'scoperag search pdf "your question" --document-id FILE_STEM'),
    ("serve them to an MCP client", "scoperag serve"),
)


def sample_pdfs() -> list[Path]:
    return sorted(SAMPLES.glob("*.pdf"))


async def _ask(settings: Settings, query: str) -> None:
    from fastmcp import Client

    from scoperag.server.cli.support import print_report, progress_bar
    from scoperag.server.mcp.app import build_server
    from scoperag.server.profiles.pdf.service import ingest_paths
    from scoperag.server.runtime import Runtime

    runtime = Runtime(settings.model_copy(update={"profiles": ["pdf"]}))
    click.echo(
        f"Ingesting {len(sample_pdfs())} sample PDFs into the demo store {settings.data_dir}"
    )
    print_report(ingest_paths(runtime, sample_pdfs(), None, progress_bar("pdf")), as_json=False)
    calls = [
        {"query": query, "limit": 3},
        {"query": query, "document_id": "qpdf-manual-5.1.3", "page_label": "iii", "limit": 3},
        {"query": "Potato", "document_id": "qpdf-page-labels-num-tree", "physical_page_index": 10},
    ]
    async with Client(build_server(runtime)) as client:
        for arguments in calls:
            click.secho(f"\nqdrant-find {json.dumps(arguments)}", bold=True)
            result = await client.call_tool("qdrant-find", arguments)
            for hit in result.structured_content["hits"]:
                page = f"p.{hit['page_label']!r} (index {hit['physical_page_index']})"
                where = f"{hit['document_id']} {page}"
                text = " ".join(hit["text"].split())[:110]
                click.echo(f"  {hit['score']:.3f}  {where}: {text}")
    runtime.close()


def run_demo(settings: Settings, query: str, data_dir: Path | None = None) -> None:
    """Run the demo in `data_dir` (kept), or in a temporary data dir removed afterwards."""
    if data_dir is not None:
        asyncio.run(_ask(settings.model_copy(update={"data_dir": data_dir}), query))
        click.echo(f"\nThe demo's store is in {data_dir}; remove that directory when done.")
    else:
        with tempfile.TemporaryDirectory(prefix="scoperag-demo-") as scratch:
            asyncio.run(_ask(settings.model_copy(update={"data_dir": Path(scratch)}), query))
        click.echo(
            f"\nRemoved the demo's temporary store {scratch}; your data dir was not touched."
        )
    click.echo("\nNext, on your own data:")
    for why, command in NEXT_COMMANDS:
        click.echo(f"  {command:<64} # {why}")
