"""docs pipeline: a JSONL file (one document a line) -> chunks with the docs payload in Qdrant."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from llama_index.core import Document
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.schema import BaseNode, TransformComponent
from pydantic import BaseModel, Field, ValidationError

from scoperag.core.config.chunking import TextChunking, record, recorded, resolve
from scoperag.core.config.ingest_limits import check_count, first_problems, open_source
from scoperag.core.config.open_beneath import SourceRefusedError
from scoperag.core.contracts.docs import COLLECTION, DOCS_FILTERS, DocSource, NonEmpty
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.engine.backend import VectorBackend
from scoperag.core.errors import ScoperagError
from scoperag.core.progress import Progress
from scoperag.pipelines.point_ids import stable_id
from scoperag.pipelines.store import EmbedNodes, replace_sources

BATCH_SIZE = 256  # documents embedded and written together
_EMBEDDED_KEYS = {"title"}  # the only metadata that goes into the vector with the text


class DocLine(DocSource):
    """One JSONL line: a document with its `doc_extension_payload/v1` fields and its text."""

    text: NonEmpty = Field(description="The document's text, chunked for search.")


class LineError(BaseModel):
    """A line that was skipped, and why."""

    line: int
    error: str


class DocsIngestReport(BaseModel):
    """Outcome of one JSONL file."""

    path: str
    lines: int = 0
    documents: int = 0
    chunks: int = 0
    skipped: list[LineError] = Field(default_factory=list, description="The first 100.")
    skipped_count: int = Field(default=0, description="How many lines were skipped in all.")
    notes: list[str] = Field(default_factory=list, description="The first 100.")
    notes_count: int = Field(default=0, description="How many notes there were in all.")
    chunking: dict[str, Any] | None = Field(
        default=None, description="The chunking used, recorded with the collection."
    )


def _describe(error: ValidationError) -> str:
    problems = []
    for item in error.errors():
        field = ".".join(str(part) for part in item["loc"])
        if item["type"] == "missing":
            problems.append(f"'{field}' is missing")
        else:
            problems.append(f"'{field}' is {item['input']!r}: {item['msg']}")
    return "; ".join(problems)


def _parse(raw: str) -> DocLine:
    """One line as a document; `ValueError` (or pydantic's subclass of it) says what is wrong."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got a JSON {type(data).__name__}")
    return DocLine.model_validate(data)


def read_lines(path: Path, report: DocsIngestReport) -> Iterator[tuple[int, DocLine]]:
    """Valid documents with their line numbers; bad lines (bad UTF-8 too) go into
    `report.skipped` and the rest of the file is read on."""
    with open_source(path) as lines:
        for number, raw_bytes in enumerate(lines, start=1):
            report.lines = number
            try:
                raw = raw_bytes.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                report.skipped.append(LineError(line=number, error=f"not valid UTF-8 ({exc})"))
                continue
            if not raw.strip():
                continue
            try:
                line = _parse(raw)
            except ValidationError as exc:
                report.skipped.append(LineError(line=number, error=_describe(exc)))
                continue
            except ValueError as exc:
                report.skipped.append(LineError(line=number, error=str(exc)))
                continue
            yield number, line


class NumberChunks(TransformComponent):
    """Pipeline step: each chunk's 0-based position in its document, as `chunk_index`."""

    def __call__(self, nodes: Sequence[BaseNode], **kwargs: object) -> Sequence[BaseNode]:
        seen: dict[str, int] = {}
        for node in nodes:
            source = node.ref_doc_id or ""
            node.metadata["chunk_index"] = seen.get(source, 0)
            seen[source] = node.metadata["chunk_index"] + 1
        return nodes


def _chunk_id(index: int, document: BaseNode) -> str:
    return stable_id("docs", document.node_id, index)


def doc_document(line: DocLine) -> Document:
    """A LlamaIndex Document whose id is the doc_id (so chunks' `doc_id` payload is ours)."""
    metadata = line.model_dump(exclude={"text"})
    return Document(
        id_=line.doc_id,
        text=line.text,
        metadata=metadata,
        excluded_embed_metadata_keys=[key for key in metadata if key not in _EMBEDDED_KEYS],
        excluded_llm_metadata_keys=list(metadata),
    )


def doc_chunks(
    lines: Sequence[DocLine],
    embedder: Embedder,
    chunking: TextChunking | None = None,
    transformations: Sequence[TransformComponent] | None = None,
) -> Sequence[BaseNode]:
    """Split, number and embed the documents' chunks (`transformations` replace the split)."""
    chunking = chunking or TextChunking()
    splitter = SentenceSplitter(
        chunk_size=chunking.chunk_size, chunk_overlap=chunking.chunk_overlap, id_func=_chunk_id
    )
    pipeline = IngestionPipeline(
        transformations=[
            *(transformations or [splitter]),
            NumberChunks(),
            EmbedNodes(embedder=embedder),
        ]
    )
    return pipeline.run(documents=[doc_document(line) for line in lines])


def replace_documents(
    backend: VectorBackend,
    embedder: Embedder,
    lines: Sequence[DocLine],
    chunking: TextChunking | None = None,
    transformations: Sequence[TransformComponent] | None = None,
) -> int:
    """Replace the documents' chunks as one generation (readers never see a mix)."""
    nodes = doc_chunks(lines, embedder, chunking, transformations)
    doc_ids = [line.doc_id for line in lines]
    return replace_sources(backend, embedder, COLLECTION, DOCS_FILTERS, doc_ids, nodes)


def _count_lines(path: Path) -> int:
    """The file's lines, refused over the item cap (or the byte cap) before any is parsed."""
    try:
        with open_source(path) as data:
            count = sum(1 for _ in data)
        check_count(count, "items")
    except SourceRefusedError as exc:
        raise ScoperagError(f"{path}: not read, {exc}") from None
    return count


def ingest_docs_jsonl(
    path: Path,
    backend: VectorBackend,
    embedder: Embedder,
    progress: Progress | None = None,
    chunking: dict[str, int | None] | None = None,
    transformations: Sequence[TransformComponent] | None = None,
) -> DocsIngestReport:
    """Ingest every valid line (re-ingesting a doc_id replaces it); bad lines are reported.
    `chunking` values (None: the collection's) set the splitter, recorded with the collection;
    LlamaIndex `transformations` replace it."""
    used = resolve(TextChunking, recorded(backend, COLLECTION), chunking or {}, transformations)
    total = _count_lines(path)
    report = DocsIngestReport(path=str(path), chunking=used.parameters())
    first_line: dict[str, int] = {}
    batch: dict[str, DocLine] = {}

    def flush() -> None:
        lines = list(batch.values())
        report.chunks += replace_documents(backend, embedder, lines, used, transformations)
        batch.clear()
        if progress:
            progress(report.lines, total, f"{len(first_line)} documents")

    for number, line in read_lines(path, report):
        if line.doc_id in first_line:
            report.notes.append(
                f"line {number}: doc_id {line.doc_id!r} repeats line {first_line[line.doc_id]}; "
                "the later line replaces it"
            )
        first_line.setdefault(line.doc_id, number)
        batch[line.doc_id] = line
        if len(batch) >= BATCH_SIZE:
            flush()
    if batch:
        flush()
    report.documents = len(first_line)
    record(backend, COLLECTION, used)
    report.skipped_count, report.skipped = len(report.skipped), first_problems(report.skipped)
    report.notes_count, report.notes = len(report.notes), first_problems(report.notes)
    if progress:
        progress(total, total, f"{report.documents} documents")
    return report
