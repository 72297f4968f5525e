"""pdf pipeline: PDF files -> one LlamaIndex Document per page -> page chunks in Qdrant."""

from __future__ import annotations

import contextvars
import logging
import queue
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
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
from scoperag.pipelines.page_labels import page_labels
from scoperag.pipelines.point_ids import stable_id
from scoperag.pipelines.store import EmbedNodes, replace_source

FileProgress = Progress
_EMBEDDED_KEYS = {"title"}  # the only metadata that goes into the vector with the text
_HEADER = b"%PDF"  # what a PDF file holds in its first kilobyte (PDF 32000-1, 7.5.2)
_LOG = logging.getLogger(__name__)


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


def read_pdf(path: Path, document_id: str | None = None) -> PdfPages:
    """Text and label of every page; raises `PdfRejectedError` for unreadable files and files
    over the byte or page cap (checked before any text is read)."""
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
            labels = page_labels(reader)
            texts = []
            for page in reader.pages:
                checkpoint()
                texts.append((page.extract_text() or "").strip())
            title = (reader.metadata.title if reader.metadata else None) or path.name
    except PdfRejectedError:
        raise
    except SourceRefusedError as exc:
        raise PdfRejectedError(str(exc)) from None
    except FileNotFoundError:
        raise PdfRejectedError("the file does not exist") from None
    except (PdfReadError, PyPdfError, ValueError, KeyError, TypeError) as exc:
        raise PdfRejectedError(f"it is not a readable PDF ({exc})") from None
    if not any(texts):
        raise PdfRejectedError(
            "no page has extractable text (a scanned PDF needs OCR before it can be searched)"
        )
    return PdfPages(document_id or path.stem, path.name, str(title), labels, texts)


def page_documents(pdf: PdfPages) -> list[Document]:
    """One Document per page that has text."""
    documents = []
    for index, (label, text) in enumerate(zip(pdf.labels, pdf.texts, strict=True)):
        if not text:
            continue
        metadata = PdfPagePayload(
            document_id=pdf.document_id,
            physical_page_index=index,
            page_label=label,
            page_count=len(pdf.labels),
            source=pdf.source,
            title=pdf.title,
            chunk_index=0,
        ).model_dump()
        hidden = [key for key in metadata if key not in _EMBEDDED_KEYS]
        documents.append(
            Document(
                id_=stable_id("pdf-page", pdf.document_id, index),
                text=text,
                metadata=metadata,
                excluded_embed_metadata_keys=hidden,
                excluded_llm_metadata_keys=list(metadata),
            )
        )
    return documents


def _chunk_id(index: int, page: BaseNode) -> str:
    meta = page.metadata
    return stable_id("pdf", meta["document_id"], meta["physical_page_index"], index)


def page_chunks(
    pdf: PdfPages,
    embedder: Embedder,
    progress: Progress | None = None,
    chunking: TextChunking | None = None,
    transformations: Sequence[TransformComponent] | None = None,
) -> Sequence[BaseNode]:
    """Split pages into chunks (each with its page's metadata and a chunk_index) and embed them,
    pipelined: pages are split in a worker thread while the chunks of the pages before are
    embedded (the encoder releases the interpreter lock). `progress` is told (pages embedded,
    pages with text, the chunks embedded); a cancelled or late ingestion stops between
    batches. `transformations` replace the splitter."""
    chunking = chunking or TextChunking()
    pages = page_documents(pdf)
    split: queue.Queue[list[BaseNode] | BaseException | None] = queue.Queue()
    stop = threading.Event()

    def produce() -> None:
        splitter = SentenceSplitter(
            chunk_size=chunking.chunk_size, chunk_overlap=chunking.chunk_overlap, id_func=_chunk_id
        )
        pipeline = IngestionPipeline(transformations=list(transformations or [splitter]))
        source = RelatedNodeInfo(node_id=pdf.document_id)
        try:
            for page in pages:
                if stop.is_set():
                    return
                chunks = pipeline.run(documents=[page])
                for index, node in enumerate(chunks):
                    # LlamaIndex's Qdrant store writes a node's source id into `document_id`
                    node.relationships[NodeRelationship.SOURCE] = source
                    node.metadata["chunk_index"] = index
                split.put(chunks)
        except BaseException as exc:  # noqa: BLE001 - raised again by the embedding side
            split.put(exc)
        split.put(None)

    threading.Thread(target=produce, name="scoperag-pdf-split", daemon=True).start()
    embed = EmbedNodes(embedder=embedder)
    nodes: list[BaseNode] = []
    waiting: list[BaseNode] = []
    pages_done = pages_waiting = 0
    try:
        while True:
            item = split.get()
            if isinstance(item, BaseException):
                raise item
            if item is not None:
                waiting += item
                pages_waiting += 1
            if waiting and (len(waiting) >= embed.batch_size or item is None):
                nodes += embed(waiting)
                pages_done, pages_waiting, waiting = pages_done + pages_waiting, 0, []
                if progress:
                    progress(pages_done, len(pages), f"{len(nodes)} chunks")
            if item is None:
                return nodes
    finally:
        stop.set()


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

    `progress` counts pages (done, total, note): a file counts 1 until it is read, then its
    pages, done as its chunks are embedded; the note names the file and its chunks. The next
    file is read while one is embedded."""
    if document_id is not None and len(paths) != 1:
        raise InvalidParameterError(
            "document_id",
            document_id,
            f"one file with it, but {len(paths)} were given: ingest them one at a time or let "
            "each take its file name",
        )
    reports = []
    pages = [1] * len(paths)  # each file's pages, once read

    def embedded(index: int, name: str) -> Progress:
        def report(pages_done: int, with_text: int, chunks: str = "") -> None:
            if progress:
                done = sum(pages[:index]) + pages[index] * pages_done // max(with_text, 1)
                progress(done, sum(pages), f"{name}: {chunks} embedded")

        return report

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="scoperag-pdf-read") as reader:

        def read(index: int) -> Future[PdfPages] | None:
            """The file after the one being embedded is read meanwhile (its call's limits)."""
            if index >= len(paths):
                return None
            return reader.submit(
                contextvars.copy_context().run, read_pdf, paths[index], document_id
            )

        upcoming = read(0)
        for index, path in enumerate(paths):
            reading, upcoming = upcoming, read(index + 1)
            if progress:
                progress(sum(pages[:index]), sum(pages), f"{path.name}: reading")
            report = FileReport(path=str(path))
            reports.append(report)
            try:
                pdf = reading.result()  # type: ignore[union-attr]
            except PdfRejectedError as exc:
                report.error = f"{path.name}: skipped, {exc}."
                continue
            report.document_id = pdf.document_id
            report.pages = len(pdf.labels)
            pages[index] = max(report.pages, 1)
            report.pages_with_text = sum(1 for text in pdf.texts if text)
            if report.pages_with_text < report.pages:
                report.notes.append(f"{report.pages - report.pages_with_text} page(s) have no text")
            nodes = page_chunks(
                pdf, embedder, embedded(index, path.name), chunking, transformations
            )
            report.chunks = replace_source(
                backend, embedder, collection, list(indexes), pdf.document_id, nodes
            )
    if progress:
        progress(sum(pages), sum(pages), "done")
    return reports
