"""The state of every collection, and the problems found in it (`scoperag check`, the web UI's
health page).

Per collection: points, segments, payload indexes, hidden generations (`core.engine.generations`)
and problems. Files are checked here, read-only (`core.engine.store_check`); the engine's
checks (count, indexes, registry, a sample of stored vectors that must be finite unit vectors,
a search whose scores must be possible ones) run where the store is open: in this process, or
in the running process that owns it. Exit status 1 if a problem is found. `--accept-loss NAME`
serves an Edge collection again after a reported loss of acknowledged writes
(`core.engine.edge.ledger`), keeping the points it holds.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click
from pydantic import BaseModel, Field

from scoperag.core.config.settings import Settings
from scoperag.core.errors import InvalidParameterError, ScoperagError

SAMPLED_POINTS = 256  # points per collection whose stored vectors are checked
PAYLOAD_PAGE = 1024  # payloads read at a time (every one is checked against its model)


class CollectionCheck(BaseModel):
    name: str
    path: str | None = Field(description="The collection's folder (embedded Edge store only).")
    points: int | None = None
    segments: int | None = Field(default=None, description="Segment folders on disk (Edge).")
    dimension: int | None = Field(default=None, description="Dimensions of its dense vectors.")
    payload_indexes: dict[str, str] = Field(default_factory=dict)
    hidden_generations: list[dict[str, Any]] = Field(
        default_factory=list, description="Registry entries: points readers must not see."
    )
    recovered: list[str] = Field(
        default_factory=list, description="What the engine recovers from on load (not damage)."
    )
    problems: list[str] = Field(default_factory=list)


class StoreCheck(BaseModel):
    data_dir: str
    engine: str
    checked_in: str = Field(description="Which process ran the engine's checks, and why.")
    disk: str | None = Field(default=None, description="Free space against the write floor.")
    problems: list[str] = Field(default_factory=list, description="Store-wide problems.")
    accepted: dict[str, int] = Field(
        default_factory=dict, description="Collections whose loss was accepted: points kept."
    )
    collections: list[CollectionCheck]

    @property
    def ok(self) -> bool:
        return not self.problems and not any(c.problems for c in self.collections)


def check_store(settings: Settings, accept_loss: tuple[str, ...] = ()) -> StoreCheck:
    """Check every collection of the store `settings` name, first accepting the loss of the
    collections in `accept_loss` (Edge only)."""
    from scoperag.server.runtime import Runtime

    runtime = Runtime(settings)
    try:
        return check_backend(runtime.backend, settings, accept_loss)
    finally:
        runtime.close()


def check_backend(
    backend: Any, settings: Settings, accept_loss: tuple[str, ...] = ()
) -> StoreCheck:
    """`check_store` on an engine this process already has open (the web UI's)."""
    engine = settings.effective_backend
    root = settings.data_dir / "edge" if engine == "edge" else None
    report = StoreCheck(
        data_dir=str(settings.data_dir),
        engine=engine,
        checked_in=_where(backend, settings),
        collections=[],
    )
    from scoperag.server.transfer.unfinished import stopped_imports

    report.problems += [record.message() for record in stopped_imports(settings.data_dir)]
    if root is not None:
        _disk(report, root)
    elif accept_loss:
        raise ScoperagError(f"--accept-loss is for the edge engine; this store is {engine}.")
    for name in accept_loss:
        if not backend.collection_exists(name):
            choices = ", ".join(backend.list_collections()) or "none"
            raise InvalidParameterError("--accept-loss", name, choices)
        report.accepted[name] = backend.accept_loss(name)
    for name in backend.list_collections():
        check = _check_collection(backend, name, root)
        if check.points is not None:
            check.problems += _embedder_problems(backend, name, settings, check.dimension)
            check.problems += _payload_problems(backend, name, settings)
        report.collections.append(check)
    return report


def _where(backend: Any, settings: Settings) -> str:
    if settings.effective_backend == "server":
        return f"the Qdrant server at {settings.qdrant_url}"
    if getattr(backend, "role", "owner") == "owner":
        return "this process (no other process had the store open)"
    from scoperag.core.engine.sharing.owner import engine_dir, read_record

    record = read_record(engine_dir(settings)) or {}
    return (
        f"process {record.get('pid', '?')} ({record.get('command', 'unknown command')}), which "
        "has the store open; files were checked here, read-only"
    )


def _disk(report: StoreCheck, root: Path) -> None:
    from scoperag.core.engine.disk_space import MIB, MIN_FREE_ENV, free_bytes, min_free_bytes

    free, floor = free_bytes(root), min_free_bytes()
    report.disk = f"{free / MIB:.1f} MiB free, writes need {floor / MIB:.0f} MiB ({MIN_FREE_ENV})"
    if free < floor:
        report.problems.append(f"{root}: {report.disk}; writes are refused until space is freed")


def _check_collection(backend: Any, name: str, root: Path | None) -> CollectionCheck:
    from scoperag.core.engine.collection_embedder import EMBEDDER_KEY
    from scoperag.core.engine.generations import REGISTRY_KEY
    from scoperag.core.engine.search_request import SearchRequest

    check = CollectionCheck(name=name, path=str(root / name) if root else None)
    dimension = _check_files(check, root / name) if root is not None else None
    check.dimension = dimension
    if check.problems:
        return check  # the engine would refuse to load it: do not ask it
    try:
        check.points = backend.count(name, None)
        check.payload_indexes = backend.payload_indexes(name)
        metadata = backend.collection_metadata(name)
        check.hidden_generations = list(metadata.get(REGISTRY_KEY, []))
        dimension = dimension or metadata.get(EMBEDDER_KEY, {}).get("dimension")
        check.dimension = check.dimension or _vector_dimension(backend, name) or dimension
        check.problems += _stored_vector_problems(backend, name, check.dimension)
        if dimension and check.points:
            probe = [1 / math.sqrt(dimension)] * dimension
            backend.search(SearchRequest(collection=name, dense=probe, limit=10))  # scores checked
    except Exception as exc:  # every failure is a finding, reported beside the others
        check.problems.append(f"{type(exc).__name__}: {exc}")
    return check


def _vector_dimension(backend: Any, name: str) -> int | None:
    """The length of a stored dense vector (the collection's dimension), if it holds one."""
    from scoperag.core.embedding.vector_check import dense_of
    from scoperag.core.engine.vector_names import DENSE_VECTOR

    for record in backend.scroll(name, None, 1, with_vectors=True):
        return len(dense_of(record.vector, DENSE_VECTOR) or []) or None
    return None


def _embedder_problems(
    backend: Any, name: str, settings: Settings, dimension: int | None
) -> list[str]:
    """A recorded embedder that disagrees with the collection's vectors, or that is not the
    one this store embeds queries with: either way no search of it can run."""
    from scoperag.core.engine.collection_embedder import EMBEDDER_KEY

    recorded = backend.collection_metadata(name).get(EMBEDDER_KEY)
    if not isinstance(recorded, dict):
        return []
    problems = []
    label = f"{recorded.get('provider')}/{recorded.get('model')} ({recorded.get('dimension')}-d)"
    if dimension is not None and recorded.get("dimension") != dimension:
        problems.append(
            f"it records the embedder {label}, but its vectors have {dimension} dimensions: no "
            "search of it can run; delete it and import or ingest it again"
        )
    ours = (settings.embed_provider, settings.effective_embed_model)
    if (recorded.get("provider"), recorded.get("model")) != ours:
        problems.append(
            f"it was built with {label}, but this store embeds queries with {ours[0]}/"
            f"{ours[1]}: its searches are refused; set SCOPERAG_EMBED_PROVIDER and "
            "SCOPERAG_EMBED_MODEL to match, or import it with --reembed"
        )
    return problems


def _payload_problems(backend: Any, name: str, settings: Settings) -> list[str]:
    """Every stored payload its profile's payload model refuses, by point id (searches skip
    them, with a warning)."""
    from scoperag.server.transfer.validation import collection_models, payload_problem

    model = collection_models(settings).get(name)
    if model is None:
        return []
    problems, offset = [], 0
    while page := backend.scroll(name, None, PAYLOAD_PAGE, offset):
        offset += len(page)
        for record in page:
            problem = payload_problem(record.payload, model)
            if problem is not None:
                problems.append(
                    f"point {record.id}: {problem}; searches skip it: delete it, or fix its "
                    "source and ingest (or import) it again"
                )
        if len(page) < PAYLOAD_PAGE:
            break
    return problems


def _stored_vector_problems(backend: Any, name: str, dimension: int | None) -> list[str]:
    """The sampled points whose dense vector is not finite, not of `dimension`, or not of unit
    norm (every collection is a cosine one: the engine stores its vectors normalised)."""
    from scoperag.core.embedding.vector_check import dense_of, vector_problem
    from scoperag.core.engine.vector_names import DENSE_VECTOR

    problems = []
    for record in backend.scroll(name, None, SAMPLED_POINTS, with_vectors=True):
        problem = vector_problem(dense_of(record.vector, DENSE_VECTOR), dimension, True)
        if problem is not None:
            problems.append(
                f"point {record.id}: its stored dense vector {problem}; searches rank it wrongly:"
                " delete its source and ingest it again"
            )
    return problems


def _check_files(check: CollectionCheck, folder: Path) -> int | None:
    """File checks of an Edge collection (problems added to `check`); its dense dimension."""
    from scoperag.core.engine.store_check import (
        CorruptCollectionError,
        read_record,
        recovered_segments,
        shard_problems,
    )

    try:
        record = read_record(check.name, folder / "collection.json")
    except CorruptCollectionError as exc:
        check.problems.append(exc.reason)
        return None
    shard = folder / record.get("shard", "shard")
    check.segments = sum(1 for path in (shard / "segments").glob("*") if path.is_dir())
    check.recovered += recovered_segments(shard)
    check.problems += shard_problems(shard, record["dimension"])
    return record["dimension"]


def print_check(report: StoreCheck) -> None:
    """The report as lines of text, problems in red."""
    click.echo(f"data dir {report.data_dir} (engine: {report.engine})")
    click.echo(f"engine checks ran in {report.checked_in}")
    if report.disk:
        click.echo(f"disk: {report.disk}")
    for problem in report.problems:
        click.secho(f"PROBLEM: {problem}", fg="red")
    for name, points in report.accepted.items():
        click.echo(f"{name}: loss accepted, served again with the {points} points it holds")
    for check in report.collections:
        indexes = ", ".join(f"{key}({kind})" for key, kind in sorted(check.payload_indexes.items()))
        click.echo(
            f"{check.name}: {check.points if check.points is not None else '?'} points, "
            f"{check.segments if check.segments is not None else '?'} segments, "
            f"{len(check.hidden_generations)} hidden generations, indexes: {indexes or 'none'}"
        )
        for recovered in check.recovered:
            click.echo(f"  recovered: {recovered}")
        for problem in check.problems:
            click.secho(f"  PROBLEM: {problem}", fg="red")
    click.echo("no problems found" if report.ok else "problems found (see above)")
