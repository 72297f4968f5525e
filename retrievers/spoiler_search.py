"""`SpoilerSafeSearch`: dense search over one book, only chunks that start by the position.

The engine's hits become `SentenceRun`s cut at the position and merged
(`postprocessors/sentence_runs.py`) without LlamaIndex: `search_book` runs this;
`SpoilerSafeRetriever` is the same search as a LlamaIndex retriever.
"""

from __future__ import annotations

from qdrant_client import models

from scoperag.core.contracts.books import BOOK_ID, COLLECTION, READ_UP_TO
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.engine.backend import VectorBackend
from scoperag.core.filters.fields import build_filter
from scoperag.postprocessors.sentence_runs import SentenceRun, chunk_run
from scoperag.retrievers.searches import FilteredSearch, TextQuery


class SpoilerSafeSearch(FilteredSearch):
    """Top-k chunks with `book_id == book_id AND pos_start <= user_pos`, filtered in Qdrant.

    A chunk may still run past `user_pos`: cut it (`spoiler_free`, or `SpoilerTruncation` on
    nodes) and merge overlaps (`deduplicated`, `SentenceDedup`) before any text reaches a reader.
    """

    def __init__(
        self,
        backend: VectorBackend,
        embedder: Embedder,
        book_id: str,
        user_pos: int,
        top_k: int = 20,
        collection: str = COLLECTION,
        with_payload: bool | list[str] = True,
        explain: bool = False,
    ) -> None:
        flt = build_filter([BOOK_ID, READ_UP_TO], {"book_id": book_id, "user_pos": user_pos})
        super().__init__(
            backend,
            embedder,
            collection,
            flt,
            top_k=top_k,
            with_payload=with_payload,
            explain=explain,
        )
        self.book_id = book_id
        self.user_pos = user_pos

    def chunk_runs(self, query: str) -> list[SentenceRun[models.ScoredPoint]]:
        """The hits' sentences, best first, read from their payloads (no nodes built)."""
        return [
            chunk_run(point, point.payload or {}, point.score, str(point.id))
            for point in self.points(TextQuery(query))
        ]
