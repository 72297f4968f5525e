"""`scoperag import FILE`: an export written by `scoperag export` (detected by its header line),
or another server's export that a profile reads (detected from the content by that profile's
`transfer` module), into the store.

A scoperag export is read a line at a time and written a page at a time through the engine's
normal write path (the process that owns the store, the disk's floor): memory stays flat. Its
points keep their ids, vectors and payloads, so the tools answer exactly as where it was
exported; a point already stored is replaced. A malformed line is refused with its number and
the rest goes on. A file built with another embedder than the store's is refused unless asked to
embed its text again (`reembed`).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from pydantic import ValidationError

from scoperag.core.errors import InvalidParameterError, ScoperagError
from scoperag.core.progress import Progress
from scoperag.server.transfer.formats import (
    FORMAT,
    ExportHeader,
    is_header,
    numbered_lines,
    open_for_reading,
    parse_point,
)
from scoperag.server.transfer.reports import ImportReport

if TYPE_CHECKING:
    from qdrant_client import models

    from scoperag.core.embedding.embedders import Embedder
    from scoperag.server.runtime import Runtime

PAGE = 512


class _Sections:
    """The sections of an export file: each header with an iterator over its points' pages.

    Consume each section's pages before asking for the next section."""

    def __init__(self, file: IO[str], report: ImportReport) -> None:
        self.lines, self.report = numbered_lines(file), report
        self.pending: tuple[int, dict[str, Any]] | None = None
        self._to_next_header("a point before any header")

    def __iter__(self) -> Iterator[tuple[ExportHeader, Iterator[list[models.PointStruct]]]]:
        while self.pending is not None:
            number, raw = self.pending
            self.pending = None
            try:
                header = ExportHeader.model_validate(raw)
            except ValidationError as exc:
                self.report.refuse(f"line {number}: not a valid header ({_first_error(exc)})")
                self._to_next_header(f"a point of the section whose header (line {number}) was")
                continue
            yield header, self._pages(header)

    def _decode(self, number: int, text: str) -> dict[str, Any] | None:
        try:
            value = json.loads(text)
        except ValueError as exc:
            self.report.refuse(f"line {number}: not JSON ({exc})")
            return None
        if not isinstance(value, dict):
            self.report.refuse(f"line {number}: not a JSON object")
            return None
        return value

    def _to_next_header(self, orphan: str) -> None:
        for number, text in self.lines:
            value = self._decode(number, text)
            if value is not None and is_header(value):
                self.pending = (number, value)
                return
            if value is not None:
                self.report.refuse(f"line {number}: {orphan} refused")

    def _pages(self, header: ExportHeader) -> Iterator[list[models.PointStruct]]:
        dimension = header.embedder.dimension if header.embedder else None
        page: list[models.PointStruct] = []
        for number, text in self.lines:
            value = self._decode(number, text)
            if value is None:
                continue
            if is_header(value):
                self.pending = (number, value)
                break
            try:
                page.append(parse_point(value, dimension))
            except (ValueError, ValidationError) as exc:
                self.report.refuse(f"line {number}: not a point ({exc})")
            if len(page) == PAGE:
                yield page
                page = []
        if page:
            yield page


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    return f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}"


def import_file(
    runtime: Runtime,
    path: str | Path,
    into: str | None = None,
    reembed: bool = False,
    progress: Progress | None = None,
) -> ImportReport:
    """Import `path` into the store of `runtime` (see the module's docstring)."""
    path = Path(path)
    if not path.is_file():
        raise ScoperagError(f"{path}: no such file to import.")
    with open_for_reading(path) as file:
        first = next(numbered_lines(file), (0, ""))[1]
    try:
        native = is_header(json.loads(first))
    except ValueError:
        native = False
    if native:
        return _import_export(runtime, path, into, reembed, progress)
    return _import_foreign(runtime, path, into, progress)


def _import_export(
    runtime: Runtime, path: Path, into: str | None, reembed: bool, progress: Progress | None
) -> ImportReport:
    from scoperag.core.engine.collection_embedder import EMBEDDER_KEY
    from scoperag.server.transfer.collection_writer import write_collection
    from scoperag.server.transfer.exporting import state_module

    report = ImportReport(file=str(path), format=FORMAT, profile=into or "", reembedded=reembed)
    with open_for_reading(path) as file:
        for header, pages in _Sections(file, report):
            collection = _target(runtime, header, into)
            current = runtime.embedder.info
            if not reembed and header.embedder is not None and header.embedder != current:
                raise ScoperagError(
                    f"{path}: collection '{header.collection}' was exported with "
                    f"{header.embedder.label()}, but this store embeds with {current.label()}, "
                    "so its vectors cannot be searched here; nothing was imported. Import it "
                    "with --reembed (Python: reembed=True) to embed its text again, or set "
                    "SCOPERAG_EMBED_PROVIDER / SCOPERAG_EMBED_MODEL to match the file."
                )
            metadata = dict(header.metadata)
            if reembed:
                metadata[EMBEDDER_KEY] = current.model_dump()
                pages = _reembedded(pages, runtime.embedder)
            step = _counting(progress, header.points)
            settings = runtime.settings
            copy = write_collection(
                runtime.backend, collection, metadata, header.indexes, pages, settings, step
            )
            report.profile = header.profile
            report.collections.append(copy)
            report.imported += copy.points
            keeper = state_module(header.profile) if header.state else None
            if keeper is not None:
                report.state += keeper.import_state(runtime.settings, header.state)
    if not report.collections:
        raise ScoperagError(f"{path}: no section of a scoperag export could be read.")
    return report


def _counting(progress: Progress | None, total: int) -> Callable[[int], None]:
    """A page-count callback reporting (points done, points in all) to `progress`."""
    done = 0

    def step(count: int) -> None:
        nonlocal done
        done += count
        if progress:
            progress(done, max(total, done))

    return step


def _target(runtime: Runtime, header: ExportHeader, into: str | None) -> str:
    """The collection of this store that takes the section (the profile's own)."""
    from scoperag.core.contracts.registry import contract_module

    if into is not None and into != header.profile:
        raise InvalidParameterError(
            "into", into, f"{header.profile} (this file holds that profile's collection)"
        )
    collections = list(contract_module(header.profile).required_indexes(runtime.settings))
    if header.collection in collections:
        return header.collection
    if len(collections) == 1:  # e.g. the pdf profile under another SCOPERAG_PDF_COLLECTION
        return collections[0]
    raise ScoperagError(
        f"Collection '{header.collection}' is not one of profile '{header.profile}': "
        f"{', '.join(collections)}."
    )


def _reembedded(
    pages: Iterator[list[models.PointStruct]], embedder: Embedder
) -> Iterator[list[models.PointStruct]]:
    """The pages with their dense vectors embedded again from each point's text as its
    pipeline embedded it (the node's content in LlamaIndex's embed mode)."""
    from llama_index.core.schema import MetadataMode
    from llama_index.core.vector_stores.utils import metadata_dict_to_node

    from scoperag.core.engine.vector_names import DENSE_VECTOR

    for page in pages:
        texts = [
            metadata_dict_to_node(point.payload or {}).get_content(MetadataMode.EMBED)
            for point in page
        ]
        for point, vector in zip(page, embedder.embed_texts(texts), strict=True):
            point.vector = {**(point.vector or {}), DENSE_VECTOR: vector}  # type: ignore[dict-item]
        yield page


def import_formats(into: str | None = None) -> list[str]:
    """The formats `scoperag import` reads (into profile `into`, default any)."""
    return [FORMAT, *(name for _, module in _foreign_readers(into) for name in module.FORMATS)]


def _foreign_readers(into: str | None) -> list[tuple[str, Any]]:
    """(profile, its `transfer` module) of each profile that reads other servers' formats."""
    from scoperag.server.profiles import declarations

    chosen = None if into is None else [into]
    return [
        (declared.name, importlib.import_module(declared.transfer))
        for declared in declarations(chosen)
        if declared.transfer
    ]


def _import_foreign(
    runtime: Runtime, path: Path, into: str | None, progress: Progress | None
) -> ImportReport:
    try:
        with open_for_reading(path) as file:
            text = file.read()
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise ScoperagError(f"{path}: not a readable text file ({exc}).") from None
    for profile, module in _foreign_readers(into):
        name = module.detect(text)
        if name is not None:
            report = ImportReport(file=str(path), format=name, profile=profile)
            module.import_text(runtime, name, text, report, progress)
            return report
    raise ScoperagError(
        f"{path}: not a format scoperag imports"
        + (f" into profile '{into}'" if into else "")
        + f". Accepted: {', '.join(import_formats(into))} (detected from the content)."
    )
