"""book pipeline: a plain-text book -> numbered sentences -> sentence-window chunks in Qdrant."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llama_index.core import Document
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.node_parser import NodeParser
from llama_index.core.schema import (
    BaseNode,
    NodeRelationship,
    RelatedNodeInfo,
    TextNode,
    TransformComponent,
)
from pydantic import BaseModel, Field

from scoperag.core.config.chunking import WindowChunking, record, recorded, resolve
from scoperag.core.config.ingest_limits import checkpoint
from scoperag.core.contracts.books import BOOK_INDEXES, COLLECTION, BookChunkPayload
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.engine.backend import VectorBackend
from scoperag.core.errors import InvalidParameterError
from scoperag.core.progress import Progress
from scoperag.pipelines.chapters import split_chapters
from scoperag.pipelines.gutenberg import BookRejectedError, read_text, strip_gutenberg
from scoperag.pipelines.point_ids import stable_id
from scoperag.pipelines.sentences import text_sentences
from scoperag.pipelines.store import EmbedNodes, replace_source


@dataclass(frozen=True)
class BookSentence:
    sid: int
    text: str
    chapter: int
    chapter_title: str


@dataclass
class Book:
    """A book as numbered sentences: `sentences[sid]` is the sentence with that id."""

    book_id: str
    title: str
    gutenberg: bool
    sentences: list[BookSentence]

    @property
    def chapter_numbers(self) -> list[int]:
        return sorted({sentence.chapter for sentence in self.sentences})


class BookReport(BaseModel):
    """Outcome of ingesting one book."""

    path: str
    book_id: str
    title: str
    sentences: int
    chapters: int = Field(description="Numbered chapters (text before chapter 1 not counted).")
    chunks: int
    gutenberg_header_removed: bool
    chunking: dict[str, Any] | None = Field(
        default=None, description="The chunking used, recorded with the collection."
    )


def read_book(
    path: Path, book_id: str, title: str | None = None, last_chapter: int | None = None
) -> Book:
    """Sentences of the book with global ids in reading order; raises `BookRejectedError`.

    `last_chapter` keeps the chapters up to and including that number (a quick trial of a
    long book); sentence ids are the same as in the whole book.
    """
    if not book_id.strip():
        raise BookRejectedError("the book id is empty; give --book-id a name such as 'pride'")
    text = strip_gutenberg(read_text(path))
    book_title = title or text.title or path.stem
    chapters = split_chapters(text.body, book_title)
    if last_chapter is not None:
        chapters = [chapter for chapter in chapters if chapter.number <= last_chapter]
    sentences: list[BookSentence] = []
    for chapter in chapters:
        checkpoint()
        for sentence in text_sentences(chapter.text):
            sentences.append(BookSentence(len(sentences), sentence, chapter.number, chapter.title))
    if not sentences:
        raise BookRejectedError("it has no text")
    return Book(book_id, book_title, text.gutenberg, sentences)


def chapter_documents(book: Book) -> list[Document]:
    """One Document per chapter carrying its sentences and the sid of the first one."""
    chapters: dict[int, list[BookSentence]] = {}
    for sentence in book.sentences:
        chapters.setdefault(sentence.chapter, []).append(sentence)
    source = RelatedNodeInfo(node_id=book.book_id)  # the Qdrant store's doc_id is the book id
    return [
        Document(
            id_=stable_id("book-chapter", book.book_id, number),
            text=" ".join(sentence.text for sentence in rows),
            metadata={
                "book_id": book.book_id,
                "title": book.title,
                "chapter": number,
                "chapter_title": rows[0].chapter_title,
                "pos_start": rows[0].sid,
                "sentences": [sentence.text for sentence in rows],
            },
            relationships={NodeRelationship.SOURCE: source},
        )
        for number, rows in chapters.items()
    ]


class SentenceWindows(NodeParser):
    """Node parser: windows of `window` consecutive sentences of a chapter, `overlap` shared.

    Input documents carry `sentences` and `pos_start` (the sid of their first sentence); every
    node gets the `BookChunkPayload` metadata, and only its text is embedded.
    """

    window: int = Field(default=6, ge=1, description="Sentences per chunk.")
    overlap: int = Field(default=2, ge=0, description="Sentences shared by neighbouring chunks.")
    include_prev_next_rel: bool = False

    def _parse_nodes(
        self, nodes: Sequence[BaseNode], show_progress: bool = False, **kwargs: Any
    ) -> list[BaseNode]:
        if self.overlap >= self.window:
            raise InvalidParameterError(
                "overlap",
                self.overlap,
                f"a number of sentences smaller than window ({self.window})",
            )
        chunks: list[BaseNode] = []
        for chapter in nodes:
            meta = chapter.metadata
            sentences: list[str] = meta["sentences"]
            step = self.window - self.overlap
            for offset in range(0, max(len(sentences) - self.overlap, 1), step):
                chunks.append(
                    self._chunk(chapter, sentences[offset : offset + self.window], offset)
                )
        return chunks

    def _chunk(self, chapter: BaseNode, sentences: list[str], offset: int) -> TextNode:
        meta = chapter.metadata
        start = meta["pos_start"] + offset
        payload = BookChunkPayload(
            book_id=meta["book_id"],
            title=meta["title"],
            chapter=meta["chapter"],
            chapter_title=meta["chapter_title"],
            pos_start=start,
            pos_end=start + len(sentences) - 1,
            sentences=sentences,
        ).model_dump()
        return TextNode(
            id_=stable_id("book", meta["book_id"], start),
            text=" ".join(sentences),
            metadata=payload,
            excluded_embed_metadata_keys=list(payload),
            excluded_llm_metadata_keys=list(payload),
            relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=chapter.node_id)},
        )


def book_chunks(
    book: Book,
    embedder: Embedder,
    progress: Progress | None = None,
    chunking: WindowChunking | None = None,
    transformations: Sequence[TransformComponent] | None = None,
) -> Sequence[BaseNode]:
    """Chunk the book's chapters and embed the chunks (`transformations` replace the windows;
    their nodes need the `BookChunkPayload` keys the book tools read)."""
    chunking = chunking or WindowChunking()
    windows = SentenceWindows(window=chunking.window, overlap=chunking.window_overlap)
    pipeline = IngestionPipeline(transformations=list(transformations or [windows]))
    nodes = pipeline.run(documents=chapter_documents(book))
    return EmbedNodes(embedder=embedder, progress=progress)(nodes)


def ingest_book(
    path: Path,
    backend: VectorBackend,
    embedder: Embedder,
    book_id: str,
    title: str | None = None,
    last_chapter: int | None = None,
    progress: Progress | None = None,
    chunking: dict[str, int | None] | None = None,
    transformations: Sequence[TransformComponent] | None = None,
) -> BookReport:
    """Ingest one book, replacing what was stored under the same book id; a book that cannot
    be read is a `BookRejectedError` naming the file and why. `chunking` values (None: the
    collection's) set the windows, recorded with the collection."""
    used = resolve(WindowChunking, recorded(backend, COLLECTION), chunking or {}, transformations)
    try:
        book = read_book(path, book_id, title, last_chapter)
    except BookRejectedError as exc:
        raise BookRejectedError(f"{path.name}: not ingested, {exc}.") from None
    nodes = book_chunks(book, embedder, progress, used, transformations)
    chunks = replace_source(backend, embedder, COLLECTION, BOOK_INDEXES, book_id, nodes)
    record(backend, COLLECTION, used)
    return BookReport(
        path=str(path),
        book_id=book_id,
        title=book.title,
        sentences=len(book.sentences),
        chapters=len([number for number in book.chapter_numbers if number > 0]),
        chunks=chunks,
        gutenberg_header_removed=book.gutenberg,
        chunking=used.parameters(),
    )
