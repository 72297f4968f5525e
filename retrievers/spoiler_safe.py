"""`SpoilerSafeRetriever`: dense search over one book, only chunks that start by the position."""

from __future__ import annotations

from scoperag.core.backend import VectorBackend
from scoperag.core.contracts.books import BOOK_ID, COLLECTION, READ_UP_TO
from scoperag.core.embeddings import Embedder
from scoperag.core.fields import build_filter
from scoperag.retrievers.filtered import FilteredRetriever


class SpoilerSafeRetriever(FilteredRetriever):
    """Top-k chunks with `book_id == book_id AND pos_start <= user_pos`, filtered in Qdrant.

    A chunk may still run past `user_pos`; put `SpoilerTruncation(user_pos=...)` after this
    retriever (and `SentenceDedup()` to merge overlaps) before any text reaches a reader.
    """

    def __init__(
        self,
        backend: VectorBackend,
        embedder: Embedder,
        book_id: str,
        user_pos: int,
        top_k: int = 20,
        collection: str = COLLECTION,
    ) -> None:
        flt = build_filter([BOOK_ID, READ_UP_TO], {"book_id": book_id, "user_pos": user_pos})
        super().__init__(backend, embedder, collection, flt, top_k=top_k)
        self.book_id = book_id
        self.user_pos = user_pos
