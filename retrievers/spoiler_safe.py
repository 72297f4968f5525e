"""`SpoilerSafeRetriever`: `SpoilerSafeSearch` as a LlamaIndex retriever (nodes, same hits)."""

from __future__ import annotations

from scoperag.retrievers.filtered import FilteredRetriever
from scoperag.retrievers.spoiler_search import SpoilerSafeSearch


class SpoilerSafeRetriever(SpoilerSafeSearch, FilteredRetriever):
    """Top-k chunks with `book_id == book_id AND pos_start <= user_pos`, as nodes.

    A chunk may still run past `user_pos`; put `SpoilerTruncation(user_pos=...)` after this
    retriever (and `SentenceDedup()` to merge overlaps) before any text reaches a reader.
    """
