"""`scoperag import FILE`: an export written by `scoperag export` (detected by its header line),
or another server's export that a profile reads (detected from the content by that profile's
`transfer` module), into the store.

A scoperag export is read a line at a time, within caps (`reading`), and written a page at a
time through the engine's normal write path (the process that owns the store, the disk's
floor): memory stays flat. Each section's header is checked whole before anything of it is
written, and each point against the profile's contract (`validation`): a header that cannot be
honoured stops the import naming its field; a bad point line is refused with its number and
reason and the rest goes on. Points keep their ids, vectors and payloads, so the tools answer
exactly as where it was exported; a point already stored is replaced. A file built with another
embedder than the store's is refused unless asked to embed its text again (`reembed`). How far
a running import got is recorded until it has read the whole file (`unfinished`).
"""

from __future__ import annotations

import contextlib
import importlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scoperag.core.errors import InvalidParameterError, ScoperagError
from scoperag.core.progress import Progress
from scoperag.server.transfer.formats import FORMAT, ExportHeader, is_header
from scoperag.server.transfer.reading import ImportFileError, Line, ReadLimits, read_lines
from scoperag.server.transfer.reports import ImportReport
from scoperag.server.transfer.validation import (
    HeaderError,
    checked_header,
    checked_point,
    payload_model,
    point_key,
)

if TYPE_CHECKING:
    from qdrant_client import models

    from scoperag.core.embedding.embedders import Embedder
    from scoperag.server.runtime import Runtime

PAGE = 2048


class _Sections:
    """The sections of an export file: each header (checked whole) with an iterator over its
    points' pages, each point checked. `last_line` is the last line of the page given out.

    Consume each section's pages before asking for the next section."""

    def __init__(self, lines: Iterator[Line], report: ImportReport) -> None:
        self.lines, self.report = lines, report
        self.pending: tuple[int, dict[str, Any]] | None = None
        self.last_line = 0
        self.failure: ImportFileError | None = None
        self._to_next_header("a point before any header")

    def __iter__(self) -> Iterator[tuple[int, ExportHeader, Iterator[list[models.PointStruct]]]]:
        while self.pending is not None:
            number, raw = self.pending
            self.pending = None
            header = checked_header(raw)
            yield number, header, self._pages(header)

    def _decode(self, line: Line) -> dict[str, Any] | None:
        if line.text is None:
            self.report.refuse(f"line {line.number}: {line.problem}")
            return None
        try:
            value = json.loads(line.text)
        except ValueError as exc:
            self.report.refuse(f"line {line.number}: not JSON ({exc})")
            return None
        if not isinstance(value, dict):
            self.report.refuse(f"line {line.number}: not a JSON object")
            return None
        return value

    def _until_unreadable(self) -> Iterator[Line]:
        """The lines, up to where the file cannot be read on (kept in `failure`), so that the
        good lines before it are written."""
        while True:  # not `yield from`: closing this must not close the file's lines
            try:
                line = next(self.lines)
            except StopIteration:
                return
            except ImportFileError as exc:
                self.failure = exc
                return
            yield line

    def _to_next_header(self, orphan: str) -> None:
        for line in self.lines:
            value = self._decode(line)
            if value is not None and is_header(value):
                self.pending = (line.number, value)
                return
            if value is not None:
                self.report.refuse(f"line {line.number}: {orphan} refused")

    def _pages(self, header: ExportHeader) -> Iterator[list[models.PointStruct]]:
        dimension = header.embedder.dimension if header.embedder else None
        model = payload_model(header.profile)
        seen: dict[str, int] = {}  # id -> the line that gave it
        page: list[models.PointStruct] = []
        for line in self._until_unreadable():
            value = self._decode(line)
            if value is None:
                continue
            if is_header(value):
                self.pending = (line.number, value)
                break
            try:
                key = point_key(value.get("id"))
                if key in seen:
                    raise ValueError(f"id {key} is given on line {seen[key]} already")
                page.append(checked_point(value, dimension, model))
                seen[key] = line.number
            except ValueError as exc:
                self.report.refuse(f"line {line.number}: not a point ({exc})")
            self.last_line = line.number
            if len(page) == PAGE:
                yield page
                page = []
        if page:
            yield page


def import_file(
    runtime: Runtime,
    path: str | Path,
    into: str | None = None,
    reembed: bool = False,
    progress: Progress | None = None,
) -> ImportReport:
    """Import `path` into the store of `runtime` (see the module's docstring)."""
    from scoperag.server.transfer.unfinished import stopped_import

    path = Path(path)
    if not path.is_file():
        raise ScoperagError(f"{path}: no such file to import.")
    with contextlib.closing(read_lines(path, ReadLimits.of(runtime.settings))) as lines:
        first = next(lines, None)
    try:
        native = first is not None and first.text is not None and is_header(json.loads(first.text))
    except ValueError:
        native = False
    stopped = stopped_import(runtime.settings.data_dir, path)
    if native:
        report = _import_export(runtime, path, into, reembed, progress)
    else:
        report = _import_foreign(runtime, path, into, progress)
    if stopped is not None:
        report.resumed = stopped.message().replace("; run it again to finish", "; now finished")
    return report


def _written_before(report: ImportReport) -> str:
    """What earlier sections of the file wrote, for an error that stops the import."""
    if not report.collections:
        return "nothing was imported"
    done = ", ".join(
        f"{copy.points} points into '{copy.collection}'" for copy in report.collections
    )
    return f"the sections before it were imported ({done})"


def _import_export(
    runtime: Runtime, path: Path, into: str | None, reembed: bool, progress: Progress | None
) -> ImportReport:
    from scoperag.core.engine.collection_embedder import EMBEDDER_KEY
    from scoperag.server.transfer.collection_writer import write_collection
    from scoperag.server.transfer.exporting import state_module
    from scoperag.server.transfer.unfinished import Progress as Record

    report = ImportReport(file=str(path), format=FORMAT, profile=into or "", reembedded=reembed)
    record = Record(runtime.settings.data_dir, path)
    sections = _Sections(read_lines(path, ReadLimits.of(runtime.settings)), report)
    try:
        for number, header, pages in _checked(sections, path, report):
            collection = _target(runtime, header, into)
            current = runtime.embedder.info
            if not reembed and header.embedder is not None and header.embedder != current:
                raise ScoperagError(
                    f"{path}: line {number}: collection '{header.collection}' was exported with "
                    f"{header.embedder.label()}, but this store embeds with {current.label()}, "
                    f"so its vectors cannot be searched here; nothing of this section was "
                    f"written ({_written_before(report)}). Import it with --reembed (Python: "
                    "reembed=True) to embed its text again, or set SCOPERAG_EMBED_PROVIDER / "
                    "SCOPERAG_EMBED_MODEL to match the file."
                )
            keeper = state_module(header.profile) if header.state else None
            try:
                if keeper is not None:  # checked before anything of the section is written
                    keeper.checked_state(header.state)
            except ValueError as exc:
                raise ScoperagError(
                    f"{path}: line {number}: the header's 'state' cannot be restored ({exc}); "
                    f"nothing of this section was written ({_written_before(report)})."
                ) from None
            metadata = dict(header.metadata)
            if header.embedder is not None:
                metadata.setdefault(EMBEDDER_KEY, header.embedder.model_dump())
            if reembed:
                metadata[EMBEDDER_KEY] = current.model_dump()
                pages = _reembedded(pages, runtime.embedder)
            step = _counting(
                progress, header.points, lambda n: record.written(sections.last_line, n)
            )
            settings = runtime.settings
            copy = write_collection(
                runtime.backend, collection, metadata, header.indexes, pages, settings, step
            )
            report.profile = header.profile
            report.collections.append(copy)
            report.imported += copy.points
            if keeper is not None:
                report.state += keeper.import_state(runtime.settings, header.state)
            if sections.failure is not None:
                raise sections.failure
    except ImportFileError as exc:
        written = record.record
        raise ScoperagError(
            f"{exc}. The import stopped there, having written {written.points} points (the "
            f"lines up to {written.line}) and refused {report.refused_count} lines; importing "
            "the file again replaces what was written."
        ) from None
    if not report.collections:
        raise ScoperagError(f"{path}: no section of a scoperag export could be read.")
    record.finished()
    return report


def _checked(
    sections: _Sections, path: Path, report: ImportReport
) -> Iterator[tuple[int, ExportHeader, Iterator[list[models.PointStruct]]]]:
    """The sections, a header that cannot be honoured raised with the file and line."""
    iterator = iter(sections)
    while True:
        number = sections.pending[0] if sections.pending else 0
        try:
            section = next(iterator)
        except StopIteration:
            return
        except HeaderError as exc:
            raise ScoperagError(
                f"{path}: line {number}: {exc}; nothing of this section was written "
                f"({_written_before(report)})."
            ) from None
        yield section


def _counting(
    progress: Progress | None, total: int, written: Callable[[int], None]
) -> Callable[[int], None]:
    """A page-count callback recording the page written and reporting (points done, points
    in all) to `progress`."""
    done = 0

    def step(count: int) -> None:
        nonlocal done
        done += count
        written(count)
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
    from scoperag.server.transfer.reading import read_text

    text = read_text(path, runtime.settings)
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
