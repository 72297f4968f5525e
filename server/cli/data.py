"""`scoperag list`, `scoperag delete` and `scoperag samples`: see and manage the stored data."""

from __future__ import annotations

import json

import click

from scoperag.server.cli.profile_args import ProfileName
from scoperag.server.cli.support import load_settings
from scoperag.server.profiles import declaration, declarations
from scoperag.server.samples import SAMPLES


def _print_listing(listing: dict) -> None:
    from scoperag.server.data_admin import HASH_SHOWN

    click.echo(f"data dir {listing['data_dir']} (engine: {listing['backend']})")
    for stopped in listing["stopped_imports"]:
        click.secho(stopped, fg="yellow")
    for data in listing["profiles"]:
        head = f"{data['profile']:<7} collection {data['collection']!r}"
        if not data["exists"]:
            click.echo(f"{head}: empty (nothing ingested)")
            continue
        click.echo(f"{head}: {data['points']} points, built with {data['embedder']}")
        if data["chunking"]:
            shown = ", ".join(f"{key} {value}" for key, value in data["chunking"].items())
            click.echo(f"  chunking: {shown}")
        if data["states"]:
            click.echo("  " + ", ".join(f"{state} {n}" for state, n in data["states"].items()))
        for name, counts in data["groups"].items():
            shown = ", ".join(f"{value} ({n})" for value, n in counts.items()) or "none"
            click.echo(f"  {name} ({len(counts)}): {shown}")
        for content_hash, words in (data["hashes"] or {}).items():
            click.echo(f"  {content_hash[:HASH_SHOWN]}  {words}")
    served = {data["collection"] for data in listing["profiles"]}
    others = [name for name in listing["collections"] if name not in served]
    if others:
        click.echo(f"other collections: {', '.join(others)}")


def register(cli: click.Group, ingest: click.Group) -> None:
    """Add the data management commands."""

    @cli.command("list")
    @click.argument("profiles", nargs=-1, type=ProfileName())
    @click.option(
        "--hashes", is_flag=True, help="Also list each memory's content hash and first words."
    )
    @click.option("--json", "as_json", is_flag=True, help="Print the listing as JSON.")
    def list_command(profiles: tuple[str, ...], hashes: bool, as_json: bool) -> None:
        """List the collections, and per enabled profile (or per PROFILE given) what is stored
        (PDF documents, books, memories by tag and type, D&D and docs documents) with counts
        in points and the embedder."""
        from scoperag.server.data_admin import list_store
        from scoperag.server.runtime import Runtime

        runtime = Runtime(load_settings())
        try:
            listing = list_store(runtime.backend, runtime.settings, list(profiles), hashes)
        finally:
            runtime.close()
        if as_json:
            click.echo(json.dumps(listing.model_dump(), indent=2))
        else:
            _print_listing(listing.model_dump())

    @cli.command("delete")
    @click.argument("kind", type=ProfileName(extra=("tag", "collection")))
    @click.argument("name")
    @click.option("--yes", is_flag=True, help="Delete without asking.")
    @click.option(
        "--whole-line",
        is_flag=True,
        help="memory: every version of the memory's line (by default the version it replaced "
        "becomes current again).",
    )
    @click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
    def delete_command(kind: str, name: str, yes: bool, whole_line: bool, as_json: bool) -> None:
        """Delete one thing: `pdf DOCUMENT_ID`, `books BOOK_ID`, `memory CONTENT_HASH` (or a
        unique prefix of it, see `list memory --hashes`), `tag TAG` (every memory with it),
        `docs DOC_ID`, `dnd DOCUMENT_SLUG`, or `collection PROFILE` (the profile's whole
        collection; its collection's name works too). Asks first unless --yes."""
        from scoperag.server.data_admin import delete, planned_deletion
        from scoperag.server.runtime import Runtime

        runtime = Runtime(load_settings())
        try:
            backend, settings = runtime.backend, runtime.settings
            plan = planned_deletion(backend, settings, kind, name)
            if not yes:
                question = f"Delete {plan.kind} {plan.id!r} ({plan.points} points)?"
                click.confirm(question, abort=True, err=True)
            report = delete(backend, settings, kind, name, whole_line)
        finally:
            runtime.close()
        click.echo(json.dumps(report.model_dump(), indent=2) if as_json else report.message)

    @cli.command("samples")
    @click.argument("profile", type=ProfileName(), required=False)
    def samples_command(profile: str | None) -> None:
        """Print the path of a profile's bundled sample (all of them, with the command that
        ingests each, when no profile is given)."""
        if profile:
            click.echo(str(SAMPLES / declaration(profile).sample.path))
            return
        for declared in declarations():
            path = SAMPLES / declared.sample.path
            click.echo(f"{declared.name:<7} {declared.sample.command.format(path=path)}")
