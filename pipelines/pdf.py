"""pdf pipeline: PDF files -> one LlamaIndex Document per page -> page chunks in Qdrant."""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from llama_index.core import Document
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.schema import (
    BaseNode,
    NodeRelationship,
    RelatedNodeInfo,
    TransformComponent,
)
from pypdf import PdfReader
from pypdf.errors import PdfReadError, PyPdfError

from scoperag.core.config.chunking import TextChunking
from scoperag.core.config.ingest_limits import check_count, checkpoint, open_source
from scoperag.core.config.open_beneath import SourceRefusedError
from scoperag.core.contracts.pdf import PDF_INDEXES, PdfPagePayload
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.engine.backend import VectorBackend
from scoperag.core.errors import InvalidParameterError
from scoperag.core.filters.fields import FilterableField
from scoperag.core.progress import Progress
from scoperag.pipelines.ahead import ahead
from scoperag.pipelines.page_labels import page_labels
from scoperag.pipelines.point_ids import stable_id
from scoperag.pipelines.store import EmbedNodes, replace_source

FileProgress = Progress
_EMBEDDED_KEYS = {"title"}  # the only metadata that goes into the vector with the text
_HEADER = b"%PDF"  # what a PDF file holds in its first kilobyte (PDF 32000-1, 7.5.2)
_LOG = logging.getLogger(__name__)
# chunks embedded together: sorted by length, their batches pad less (see `EmbedNodes`)
EMBED_GROUP = 64


class _ParserToDebug(logging.Handler):
    """pypdf's warnings (a file it repaired, or could not read) as scoperag's debug log: the
    ingestion's report says in words what is wrong, and the terminal gets no parser noise."""

    def emit(self, record: logging.LogRecord) -> None:
        _LOG.debug("pypdf: %s", record.getMessage())


def _quiet_parser() -> None:
    """Route the `pypdf` logger's records to `_ParserToDebug` (once per process)."""
    parser = logging.getLogger("pypdf")
    if not any(isinstance(handler, _ParserToDebug) for handler in parser.handlers):
        parser.addHandler(_ParserToDebug())
        parser.propagate = False


class PdfRejectedError(Exception):
    """A PDF that cannot be ingested, with the reason in words."""


@dataclass
class PdfPages:
    """What pypdf read from one file."""

    document_id: str
    source: str
    title: str
    labels: list[str]
    texts: list[str]


@dataclass
class FileReport:
    """Outcome of one file in a batch."""

    path: str
    document_id: str | None = None
    pages: int = 0
    pages_with_text: int = 0
    chunks: int = 0
    error: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None


def read_pages(path: Path, document_id: str | None = None) -> Iterator[PdfPages]:
    """The file read a page at a time: yields its `PdfPages` once with the labels and title
    (no text yet), then again after each page's text is added to `texts`. Raises
    `PdfRejectedError` for unreadable files and files over the byte or page cap (checked
    before any text is read), and after the last page if no page has text."""
    _quiet_parser()
    try:
        with open_source(path) as file:
            head = file.read(1024)
            if not head:
                raise PdfRejectedError("it is empty (0 bytes)")
            if _HEADER not in head:
                raise PdfRejectedError(f"not a PDF: it does not start with {_HEADER.decode()}")
            file.seek(0)
            reader = PdfReader(file)
            if reader.is_encrypted and not reader.decrypt(""):
                raise PdfRejectedError("it is encrypted with a password; decrypt it first")
            check_count(len(reader.pages), "pages")
            title = (reader.metadata.title if reader.metadata else None) or path.name
            pdf = PdfPages(document_id or path.stem, path.name, str(title), page_labels(reader), [])
            yield pdf
            for page in reader.pages:
                checkpoint()
                pdf.texts.append((page.extract_text() or "").strip())
                yield pdf
    except PdfRejectedError:
        raise
    except SourceRefusedError as exc:
        raise PdfRejectedError(str(exc)) from None
    except FileNotFoundError:
        raise PdfRejectedError("the file does not exist") from None
    except (PdfReadError, PyPdfError, ValueError, KeyError, TypeError) as exc:
        raise PdfRejectedError(f"it is not a readable PDF ({exc})") from None
    if not any(pdf.texts):
        raise PdfRejectedError(
            "no page has extractable text (a scanned PDF needs OCR before it can be searched)"
        )


def read_pdf(path: Path, document_id: str | None = None) -> PdfPages:
    """Text and label of every page (`read_pages` to the end)."""
    return deque(read_pages(path, document_id), maxlen=1)[0]


def page_document(pdf: PdfPages, index: int) -> Document:
    """Page `index` (read, with text) as a Document with the page's metadata."""
    metadata = PdfPagePayload(
        document_id=pdf.document_id,
        physical_page_index=index,
        page_label=pdf.labels[index],
        page_count=len(pdf.labels),
        source=pdf.source,
        title=pdf.title,
        chunk_index=0,
    ).model_dump()
    hidden = [key for key in metadata if key not in _EMBEDDED_KEYS]
    return Document(
        id_=stable_id("pdf-page", pdf.document_id, index),
        text=pdf.texts[index],
        metadata=metadata,
        excluded_embed_metadata_keys=hidden,
        excluded_llm_metadata_keys=list(metadata),
    )


def _chunk_id(index: int, page: BaseNode) -> str:
    meta = page.metadata
    return stable_id("pdf", meta["document_id"], meta["physical_page_index"], index)


@dataclass
class _Step:
    """One step of reading the files: file `file` opened (`pdf`), a page's chunks, the file's
    end (`done`) or its refusal (`rejected`)."""

    file: int
    pdf: PdfPages | None = None
    page: int = 0
    chunks: list[BaseNode] = field(default_factory=list)
    done: bool = False
    rejected: PdfRejectedError | None = None


def _read_files(
    paths: Sequence[Path],
    document_id: str | None,
    chunking: TextChunking,
    transformations: Sequence[TransformComponent] | None,
) -> Iterator[_Step]:
    """Every file's pages read and split in turn, each chunk with its page's metadata and a
    chunk_index; a file that cannot be read ends in a `rejected` step."""
    splitter = SentenceSplitter(
        chunk_size=chunking.chunk_size, chunk_overlap=chunking.chunk_overlap, id_func=_chunk_id
    )
    pipeline = IngestionPipeline(transformations=list(transformations or [splitter]))
    for file, path in enumerate(paths):
        try:
            for pdf in read_pages(path, document_id):
                if not pdf.texts:
                    yield _Step(file, pdf=pdf)
                    continue
                page = len(pdf.texts) - 1
                if not pdf.texts[page]:
                    continue
                chunks = pipeline.run(documents=[page_document(pdf, page)])
                source = RelatedNodeInfo(node_id=pdf.document_id)
                for index, node in enumerate(chunks):
                    # LlamaIndex's Qdrant store writes a node's source id into `document_id`
                    node.relationships[NodeRelationship.SOURCE] = source
                    node.metadata["chunk_index"] = index
                yield _Step(file, page=page, chunks=chunks)
        except PdfRejectedError as exc:
            yield _Step(file, rejected=exc)
            continue
        yield _Step(file, done=True)


def ingest_pdfs(
    paths: Sequence[Path],
    backend: VectorBackend,
    embedder: Embedder,
    collection: str,
    document_id: str | None = None,
    progress: FileProgress | None = None,
    indexes: Sequence[FilterableField] = PDF_INDEXES,
    chunking: TextChunking | None = None,
    transformations: Sequence[TransformComponent] | None = None,
) -> list[FileReport]:
    """Ingest each file, replacing its earlier pages; a bad file is reported and skipped.
    `chunking` sets the splitter; `transformations` (LlamaIndex's) replace it.

    Pipelined: pages are read and split in a worker thread (`ahead`) while the chunks of the
    pages before are embedded, `EMBED_GROUP` at a time; each file is written as one
    generation once its last page is embedded. `progress` counts pages (done, total, note): a
    file counts 1 until it is opened, then its pages, done as their chunks are embedded; the
    note names the file and its chunks. A cancelled or late ingestion stops between pages
    and between batches, before the file being embedded is written."""
    if document_id is not None and len(paths) != 1:
        raise InvalidParameterError(
            "document_id",
            document_id,
            f"one file with it, but {len(paths)} were given: ingest them one at a time or let "
            "each take its file name",
        )
    reports = [FileReport(path=str(path)) for path in paths]
    pages = [1] * len(paths)  # each file's pages, once opened
    nodes: list[BaseNode] = []
    waiting: list[BaseNode] = []
    read = embedded = 0  # pages of the current file read into `waiting`, and embedded

    def embed_waiting(file: int) -> None:
        """Embed the chunks waiting, telling progress after each batch (pages in proportion)."""
        nonlocal nodes, waiting, embedded
        before, name = embedded, paths[file].name

        def told(done: int, total: int) -> None:
            if progress:
                page = before + (read - before) * done // max(total, 1)
                chunks = len(nodes) + done
                progress(sum(pages[:file]) + page, sum(pages), f"{name}: {chunks} chunks embedded")

        nodes, waiting = nodes + list(EmbedNodes(embedder=embedder, progress=told)(waiting)), []
        embedded = read

    if progress:
        progress(0, len(paths), f"{paths[0].name}: reading" if paths else "done")
    chunking = chunking or TextChunking()
    for step in ahead(_read_files(paths, document_id, chunking, transformations), "scoperag-pdf"):
        report = reports[step.file]
        if step.pdf is not None:
            pages[step.file] = max(len(step.pdf.labels), 1)
            nodes, waiting, read, embedded, pdf = [], [], 0, 0, step.pdf
            if progress:
                progress(sum(pages[: step.file]), sum(pages), f"{paths[step.file].name}: reading")
        elif step.rejected is not None:
            report.error = f"{paths[step.file].name}: skipped, {step.rejected}."
            nodes, waiting = [], []
        elif not step.done:  # a page's chunks (none, if a transformation kept none)
            waiting += step.chunks
            read = step.page + 1
            if len(waiting) >= EMBED_GROUP:
                embed_waiting(step.file)
        else:
            read = len(pdf.labels)
            embed_waiting(step.file)
            report.document_id = pdf.document_id
            report.pages = len(pdf.labels)
            report.pages_with_text = sum(1 for text in pdf.texts if text)
            if report.pages_with_text < report.pages:
                report.notes.append(f"{report.pages - report.pages_with_text} page(s) have no text")
            report.chunks = replace_source(
                backend, embedder, collection, list(indexes), pdf.document_id, nodes
            )
    if progress:
        progress(sum(pages), sum(pages), "done")
    return reports
