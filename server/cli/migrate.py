"""`scoperag migrate` (copy collections between engines) and `scoperag reindex` (add BM25
vectors): both copy points with their vectors, without re-embedding."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click
from pydantic import BaseModel

from scoperag.core.config.settings import Settings
from scoperag.core.errors import ScoperagError
from scoperag.core.progress import ProgressBar
from scoperag.server.cli.support import load_settings
from scoperag.server.transfer.collection_writer import CollectionCopy, Progress, write_collection

if TYPE_CHECKING:
    from scoperag.core.engine.backend import VectorBackend

ENGINES = ("local", "edge", "server")


class MigrationReport(BaseModel):
    source: str
    target: str
    collections: list[CollectionCopy]


def engine_settings(settings: Settings, engine: str) -> Settings:
    """The settings with `engine` chosen (the server needs SCOPERAG_QDRANT_URL)."""
    if engine == "server" and not settings.qdrant_url:
        raise ScoperagError("The server engine needs SCOPERAG_QDRANT_URL (and its API key).")
    url = settings.qdrant_url if engine == "server" else None
    return settings.model_copy(update={"backend": engine, "qdrant_url": url})


def copy_collection(
    source: VectorBackend,
    target: VectorBackend,
    collection: str,
    settings: Settings,
    progress: Progress | None = None,
) -> CollectionCopy:
    """Copy every point (id, vectors, payload) of `collection`, its metadata and its indexes
    (`write_collection`: idempotent, another embedder on the target refused)."""
    from qdrant_client import models

    pages = (
        [models.PointStruct(id=r.id, vector=r.vector, payload=r.payload) for r in page]
        for page in source.points(collection)
    )
    metadata, indexes = source.collection_metadata(collection), source.payload_indexes(collection)
    return write_collection(target, collection, metadata, indexes, pages, settings, progress)


def chosen_collections(backend: VectorBackend, collections: list[str]) -> list[str]:
    """`collections` (default: every one the store holds); an unknown name is an error."""
    available = backend.list_collections()
    unknown = sorted(set(collections) - set(available))
    if unknown:
        raise ScoperagError(
            f"No collection {unknown} in the {backend.name} store; it holds: "
            f"{', '.join(available) or 'nothing'}."
        )
    return collections or available


def migrate(
    settings: Settings, source_engine: str, target_engine: str, collections: list[str]
) -> MigrationReport:
    """Copy `collections` (default: all) from one engine to the other."""
    from scoperag.core.engine.collections import open_backend

    if source_engine == target_engine:
        raise ScoperagError(f"--from and --to are both '{source_engine}': choose two engines.")
    source = open_backend(engine_settings(settings, source_engine))
    try:
        target = open_backend(engine_settings(settings, target_engine))
    except BaseException:
        source.close()
        raise
    try:
        copies = []
        for name in chosen_collections(source, collections):
            total = source.count(name, None)
            bar = ProgressBar(name, "point")
            copies.append(copy_collection(source, target, name, settings, _stepped(bar, total)))
    finally:
        source.close()
        target.close()
    return MigrationReport(source=source_engine, target=target_engine, collections=copies)


def _stepped(bar: ProgressBar, total: int) -> Progress:
    """Points written page by page as `(done, total)` reports to `bar`."""
    done = 0

    def step(written: int) -> None:
        nonlocal done
        done += written
        bar(done, total)

    return step


def reindex(settings: Settings, collections: list[str]) -> dict[str, int]:
    """Add BM25 vectors to `collections` (default: all): collection -> points copied.

    Runs in the process that owns the store (this one, or a running server it reaches).
    """
    from scoperag.server.runtime import Runtime

    runtime = Runtime(settings)
    backend = runtime.backend
    try:
        return {
            name: backend.add_keywords(name) for name in chosen_collections(backend, collections)
        }
    finally:
        runtime.close()


def register(cli: click.Group, ingest: click.Group) -> None:
    """Add `migrate` and `reindex`."""

    @cli.command("reindex")
    @click.option(
        "--collection",
        "collections",
        multiple=True,
        help="Collection to reindex (repeatable); default: every collection.",
    )
    def reindex_command(collections: tuple[str, ...]) -> None:
        """Add BM25 keyword vectors to collections built before hybrid search, without
        re-embedding: the points are copied with their vectors into a collection that keeps
        both, which replaces the old one (in the server's process when one owns the store)."""
        report = reindex(load_settings(), list(collections))
        for name, copied in report.items():
            done = f"{copied} points now have BM25 vectors" if copied else "already has them"
            click.echo(f"{name}: {done}")

    @cli.command("migrate")
    @click.option(
        "--from",
        "source",
        type=click.Choice(ENGINES),
        required=True,
        help="Engine to copy from: local and edge are the stores under SCOPERAG_DATA_DIR "
        "(qdrant/, edge/), server is SCOPERAG_QDRANT_URL.",
    )
    @click.option(
        "--to", "target", type=click.Choice(ENGINES), required=True, help="Engine to copy to."
    )
    @click.option(
        "--collection",
        "collections",
        multiple=True,
        help="Collection to copy (repeatable); default: every collection of the source.",
    )
    @click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
    def migrate_command(
        source: str, target: str, collections: tuple[str, ...], as_json: bool
    ) -> None:
        """Copy collections from one engine to another (vectors, payloads, indexes, embedder
        record) without re-embedding, e.g. `scoperag migrate --from local --to edge`. Then set
        SCOPERAG_BACKEND to the target. Running it again overwrites instead of duplicating."""
        report = migrate(load_settings(), source, target, list(collections))
        if as_json:
            click.echo(json.dumps(report.model_dump(), indent=2))
            return
        for copy in report.collections:
            click.echo(
                f"{copy.collection}: {copy.points} points, indexes {', '.join(copy.indexes)} "
                f"({copy.seconds} s)"
            )
        click.echo(f"Now set SCOPERAG_BACKEND={target} to use the copy.")
