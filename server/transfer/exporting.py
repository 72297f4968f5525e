"""`scoperag export PROFILE FILE`: a profile's collections to a file, streamed a page at a time
(memory stays flat whatever the size), written beside the target and renamed into place when
complete, so a file at FILE is always a whole export."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from scoperag.core.errors import InvalidParameterError, ScoperagError
from scoperag.core.progress import Progress
from scoperag.server.transfer.formats import (
    FORMAT,
    ExportHeader,
    open_for_writing,
    point_line,
)
from scoperag.server.transfer.reports import ExportReport

if TYPE_CHECKING:
    from qdrant_client import models

    from scoperag.core.engine.backend import VectorBackend
    from scoperag.server.runtime import Runtime

PAGE = 512
# Metadata of the generations being replaced: an export holds only what readers see.
NOT_EXPORTED = ("scoperag_hidden", "scoperag_committed")


def pages(backend: VectorBackend, collection: str) -> Iterator[list[models.Record]]:
    """Every visible point of `collection`, a page at a time (one engine call each)."""
    cursor: int | str | None = None
    while True:
        records, cursor = backend.points_page(collection, cursor, PAGE)
        if records:
            yield records
        if cursor is None:
            return


def export_formats(profile: str) -> list[str]:
    """The formats `scoperag export PROFILE` writes: scoperag's own, then the profile's."""
    from scoperag.server.profiles import declaration

    module = declaration(profile).transfer
    if module is None:
        return [FORMAT]
    import importlib

    return [FORMAT, *importlib.import_module(module).EXPORTS]


def state_module(profile: str) -> Any:
    """The module keeping `profile`'s state beside its collection, or None (`Profile.state`)."""
    import importlib

    from scoperag.server.profiles import declaration

    module = declaration(profile).state
    return None if module is None else importlib.import_module(module)


def export_profile(
    runtime: Runtime,
    profile: str,
    path: Path,
    format: str | None = None,
    progress: Progress | None = None,
) -> ExportReport:
    """Write `profile`'s collections to `path` in `format` (default scoperag's own)."""
    from scoperag.core.contracts.registry import contract_module

    began = time.perf_counter()
    chosen = format or FORMAT
    accepted = export_formats(profile)
    if chosen not in accepted:
        raise InvalidParameterError("format", chosen, ", ".join(accepted))
    backend = runtime.backend
    planned = list(contract_module(profile).required_indexes(runtime.settings))
    present = [name for name in planned if backend.collection_exists(name)]
    if not present:
        raise ScoperagError(
            f"Nothing to export: profile '{profile}' has no collection "
            f"({', '.join(planned)} does not exist; ingest something first)."
        )
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        with open_for_writing(temporary, compressed=path.suffix == ".gz") as file:
            if chosen == FORMAT:
                keeper = state_module(profile)
                state = {} if keeper is None else keeper.export_state(runtime.settings)
                written = _write_sections(backend, profile, present, state, file, progress)
            else:
                written = _write_foreign(backend, profile, chosen, present, file, progress)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    seconds = round(time.perf_counter() - began, 2)
    return ExportReport(
        file=str(path), format=chosen, profile=profile, collections=written, seconds=seconds
    )


def _write_sections(
    backend: VectorBackend,
    profile: str,
    collections: list[str],
    state: dict[str, Any],
    file: IO[str],
    progress: Progress | None,
) -> dict[str, int]:
    """Each collection as a header line (carrying the profile's `state`), then its points."""
    from scoperag.core.engine.collection_embedder import stored_embedder

    counts = {name: backend.count(name, None) for name in collections}
    total, done, written = sum(counts.values()), 0, {}
    for name in collections:
        metadata = backend.collection_metadata(name)
        header = ExportHeader(
            profile=profile,
            collection=name,
            embedder=stored_embedder(backend, name),
            points=counts[name],
            metadata={k: v for k, v in metadata.items() if k not in NOT_EXPORTED},
            indexes=backend.payload_indexes(name),
            state=state,
        )
        file.write(header.model_dump_json() + "\n")
        written[name] = 0
        for page in pages(backend, name):
            file.write("".join(point_line(record) + "\n" for record in page))
            written[name] += len(page)
            done += len(page)
            if progress:
                progress(done, max(total, done))
    return written


def _write_foreign(
    backend: VectorBackend,
    profile: str,
    chosen: str,
    collections: list[str],
    file: IO[str],
    progress: Progress | None,
) -> dict[str, int]:
    """The profile's own writer of another server's format (one collection)."""
    import importlib

    from scoperag.server.profiles import declaration

    writer = importlib.import_module(declaration(profile).transfer or "").EXPORTS[chosen]
    (name,) = collections
    return {name: writer(backend, name, pages(backend, name), file, progress)}
