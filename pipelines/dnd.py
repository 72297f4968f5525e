"""dnd pipeline: Open5e (API v1) fixture folders -> one node per item -> the `dnd` collection.

A folder holds `Document.json` (its slug and title) and one fixture file per kind, each a JSON
list of `{"model": "api.<kind>", "pk": ..., "fields": {...}}`. Every item is one node whose text
is the whole entry; a file is the unit of replacement (re-ingesting it replaces its items).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.schema import (
    BaseNode,
    NodeRelationship,
    RelatedNodeInfo,
    TextNode,
    TransformComponent,
)
from pydantic import ConfigDict, Field, ValidationError
from qdrant_client import models

from scoperag.core.config.ingest_limits import check_count, first_problems, open_source
from scoperag.core.config.open_beneath import SourceRefusedError
from scoperag.core.contracts.dnd import COLLECTION, DND_INDEXES, DndItemPayload, name_order
from scoperag.core.contracts.dnd import parse_challenge_rating as challenge_rating
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.engine.backend import VectorBackend
from scoperag.core.engine.generations import SOURCE_KEY
from scoperag.core.progress import Progress
from scoperag.pipelines.dnd_entries import KIND_SPECS, entry_text
from scoperag.pipelines.dnd_folders import (
    DOCUMENT_FILE,
    DndRejectedError,
    DocumentInfo,
    fixture_files,
    read_document,
)
from scoperag.pipelines.point_ids import stable_id
from scoperag.pipelines.store import EmbedNodes, replace_sources

FileProgress = Progress
EMBED_CHARS = 300  # the embedded start of an entry (~70 tokens): name, kind, key facts, summary


@dataclass
class FileReport:
    """Outcome of one fixture file."""

    path: str
    document: str | None = None
    items: int = 0
    error: str | None = None
    notes: list[str] = field(default_factory=list)  # the first 100 (`notes_count` in all)
    notes_count: int | None = None  # when there are notes

    @property
    def ok(self) -> bool:
        return self.error is None and self.items > 0


def _lower(value: Any) -> str | None:
    return str(value or "").strip().lower() or None


def _typed_fields(kind: str, fields: dict[str, Any]) -> dict[str, Any]:
    """The payload fields a tool filters on, for spells and creatures."""
    if kind == "spell":
        level = fields.get("spell_level")
        if isinstance(level, bool) or not isinstance(level, int):
            raise DndRejectedError(f"spell_level {level!r} is not a whole number")
        classes = str(fields.get("dnd_class") or "").split(",")
        return {
            "level": level,
            "school": _lower(fields.get("school")),
            "classes": [c.strip().lower() for c in classes if c.strip()] or None,
        }
    if kind == "creature":
        rating = fields.get("challenge_rating")
        if rating in (None, ""):
            rating = fields.get("cr")
        try:
            rating = challenge_rating(rating)
        except ValueError as exc:
            raise DndRejectedError(str(exc)) from None
        return {
            "type": _lower(fields.get("type")),
            "challenge_rating": rating,
            "size": _lower(fields.get("size")),
        }
    return {}


def item_node(record: dict[str, Any], document: DocumentInfo, source: str) -> TextNode:
    """One Open5e record as a node; raises `DndRejectedError` for a malformed record."""
    model = str(record.get("model", "")).removeprefix("api.")
    spec = KIND_SPECS[model]
    fields = record.get("fields")
    if not isinstance(fields, dict):
        raise DndRejectedError("it has no 'fields' object")
    name = str(fields.get("name") or "").strip()
    if not name:
        raise DndRejectedError("it has no name")
    if record.get("pk") in (None, ""):
        raise DndRejectedError("it has no pk (its key)")
    if fields.get("document") != document.pk:
        raise DndRejectedError(
            f"its document is {fields.get('document')!r}, but {DOCUMENT_FILE} of this folder "
            f"is {document.pk!r} ({document.slug})"
        )
    try:
        payload = DndItemPayload(
            document=document.slug,
            document_title=document.title,
            kind=spec.kind,
            name=name,
            slug=str(record["pk"]),
            name_order=name_order(name),
            **dict([spec.subtype] if spec.subtype else []),
            **_typed_fields(spec.kind, fields),
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        raise DndRejectedError(f"{where} {error['input']!r}: {error['msg']}") from None
    metadata = payload.model_dump(exclude_none=True)
    return TextNode(
        id_=stable_id("dnd", document.slug, model, record["pk"]),
        text=entry_text(spec, name, fields),
        metadata=metadata,
        excluded_embed_metadata_keys=list(metadata),
        excluded_llm_metadata_keys=list(metadata),
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=source)},
    )


class EmbedEntryStart(TransformComponent):
    """Pipeline step: embeds the first `EMBED_CHARS` characters of each entry.

    An entry leads with its name, kind, key facts and description; the model would cut long
    entries at 256 tokens anyway, and the short start makes ingestion several times cheaper.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)
    embedder: Embedder = Field(exclude=True)
    progress: Callable[..., None] | None = Field(default=None, exclude=True)  # a Progress

    def __call__(self, nodes: Sequence[BaseNode], **kwargs: object) -> Sequence[BaseNode]:
        starts = [TextNode(text=node.get_content()[:EMBED_CHARS]) for node in nodes]
        EmbedNodes(embedder=self.embedder, progress=self.progress)(starts)
        for node, start in zip(nodes, starts, strict=True):
            node.embedding = start.embedding
        return nodes


@dataclass
class FileItems:
    """The nodes read from one file, and the slugs of items kept as stored (rejected now)."""

    nodes: list[BaseNode] = field(default_factory=list)
    kept_slugs: list[str] = field(default_factory=list)


def read_items(path: Path, document: DocumentInfo, report: FileReport) -> FileItems:
    """Nodes of one file; other kinds and malformed records are noted in `report` and skipped."""
    try:
        with open_source(path) as file:
            records = json.loads(file.read().decode("utf-8"))
    except SourceRefusedError as exc:
        raise DndRejectedError(str(exc)) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DndRejectedError(f"it is not readable JSON ({exc})") from None
    if not isinstance(records, list):
        raise DndRejectedError("it is not a JSON list of Open5e records")
    try:
        check_count(len(records), "items")
    except SourceRefusedError as exc:
        raise DndRejectedError(str(exc)) from None
    source = f"{document.slug}/{path.name}"
    found = FileItems()
    other: dict[str, int] = {}
    for position, record in enumerate(records):
        model = str(record.get("model") or "no model") if isinstance(record, dict) else "non-object"
        if model.removeprefix("api.") not in KIND_SPECS:
            other[model] = other.get(model, 0) + 1
            continue
        try:
            found.nodes.append(item_node(record, document, source))
        except DndRejectedError as exc:
            pk = record.get("pk")
            report.notes.append(f"record {position} ({pk!r}) skipped: {exc}")
            if pk is not None:
                found.kept_slugs.append(str(pk))
    for model, count in other.items():
        report.notes.append(f"{count} {model} record(s) skipped: not a kind this profile ingests")
    if report.notes:
        report.notes_count, report.notes = len(report.notes), first_problems(report.notes)
    return found


def _stored_ids(backend: VectorBackend, kept: dict[str, list[str]]) -> list[str]:
    """Point ids of the stored items of these (source -> slugs), rejected in the new version."""
    if not kept or not backend.collection_exists(COLLECTION):
        return []
    flt = models.Filter(
        should=[
            models.Filter(
                must=[
                    models.FieldCondition(key=SOURCE_KEY, match=models.MatchValue(value=source)),
                    models.FieldCondition(key="slug", match=models.MatchAny(any=slugs)),
                ]
            )
            for source, slugs in kept.items()
        ]
    )
    return [str(record.id) for record in backend.scroll(COLLECTION, flt, limit=10_000)]


def _ingest_folder(
    files: list[Path],
    document: DocumentInfo,
    backend: VectorBackend,
    embedder: Embedder,
    progress: Callable[[Path, int, int], None],
) -> list[FileReport]:
    """Read and embed every file of one document, then replace them all as one generation
    (an unreadable file keeps its stored items; so does a record that went bad); `progress`
    hears of each file's entries embedded (path, done, entries)."""
    reports: list[FileReport] = []
    nodes: list[BaseNode] = []
    kept: dict[str, list[str]] = {}
    for path in files:
        progress(path, 0, 0)
        report = FileReport(path=str(path), document=document.slug)
        reports.append(report)
        try:
            found = read_items(path, document, report)
        except DndRejectedError as exc:
            report.error = f"{path.name}: skipped, {exc}."
            continue
        if not found.nodes and not found.kept_slugs and report.notes:
            continue  # a file of other kinds: nothing of ours in it, nothing to replace
        kept[f"{document.slug}/{path.name}"] = found.kept_slugs
        step = EmbedEntryStart(embedder=embedder, progress=partial(progress, path))
        nodes += IngestionPipeline(transformations=[step], disable_cache=True).run(
            nodes=found.nodes
        )
        report.items = len(found.nodes)
    if kept:
        keep_ids = _stored_ids(backend, {src: slugs for src, slugs in kept.items() if slugs})
        replace_sources(backend, embedder, COLLECTION, DND_INDEXES, list(kept), nodes, keep_ids)
    return reports


def ingest_folders(
    paths: Sequence[Path],
    backend: VectorBackend,
    embedder: Embedder,
    progress: FileProgress | None = None,
) -> list[FileReport]:
    """Ingest Open5e folders, one document at a time (readers see its old version or its new
    one, never a mix); a bad folder, file or record is reported and skipped."""
    reports: list[FileReport] = []
    work: list[tuple[list[Path], DocumentInfo]] = []
    for path in paths:
        try:
            folders = fixture_files(path)
        except DndRejectedError as exc:
            reports.append(FileReport(path=str(path), error=f"{path}: skipped, {exc}."))
            continue
        for folder, files in folders.items():
            try:
                work.append((files, read_document(folder)))
            except DndRejectedError as exc:
                reports.append(FileReport(path=str(folder), error=f"{folder}: skipped, {exc}."))
    total = sum(len(files) for files, _ in work)
    order = {path: index for index, path in enumerate(p for files, _ in work for p in files)}

    def file_progress(path: Path, entries_done: int, entries: int) -> None:
        if progress:
            counted = f": {entries_done}/{entries} entries embedded" if entries else ""
            progress(order[path], total, f"{path.parent.name}/{path.name}{counted}")

    for files, document in work:
        reports += _ingest_folder(files, document, backend, embedder, file_progress)
    if progress:
        progress(total, total, "done")
    return reports
