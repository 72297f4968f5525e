"""A page of ranked hits above a similarity floor, its exact total, and what the floor hid."""

from __future__ import annotations

from dataclasses import dataclass

from llama_index.core.schema import QueryBundle
from qdrant_client import models

from scoperag.core.collections import ready_for_reading
from scoperag.retrievers.filtered import FilteredRetriever


@dataclass
class RankedPage:
    """One page of hits and the figures around it (scores are cosine similarities)."""

    hits: list[models.ScoredPoint]
    total: int  # hits at or above the floor, at most the cap
    hidden: int = 0  # points matching the filter below the floor (counted when the page is short)
    best_hidden: float | None = None  # the best cosine among them


def ranked_page(
    retriever: FilteredRetriever, query: QueryBundle, min_score: float | None, cap: int
) -> RankedPage:
    """The retriever's page (its `offset` and `top_k`) above `min_score`, with the total.

    All engine work: the page is one query with limit, offset and score threshold; the total
    is an ids-only query of the hits above the floor (up to `cap`). When the page comes out
    short and a floor is set, the filter's matches are counted and the best one below the
    floor is fetched, so the caller can say what the floor hid.
    """
    if not ready_for_reading(retriever.backend, retriever.embedder, retriever.collection):
        return RankedPage(hits=[], total=0)
    retriever.min_score = min_score
    hits = retriever.points(query)
    size, offset = retriever.top_k, retriever.offset
    page_short = len(hits) < size
    if page_short and (hits or offset == 0):
        total = offset + len(hits)
    else:
        total = _count_above(retriever, query, cap)
    page = RankedPage(hits=hits, total=total)
    if page_short and min_score is not None and total < cap:
        matches = retriever.backend.count(retriever.collection, retriever.qdrant_filter)
        page.hidden = max(0, matches - total)
        if page.hidden:
            page.best_hidden = _best_below(retriever, query, total)
    return page


def _count_above(retriever: FilteredRetriever, query: QueryBundle, cap: int) -> int:
    found = retriever.backend.search(
        retriever.collection,
        retriever.embed(query),
        None,
        retriever.qdrant_filter,
        cap,
        0,
        retriever.min_score,
        with_payload=False,
    )
    return len(found)


def _best_below(retriever: FilteredRetriever, query: QueryBundle, above: int) -> float | None:
    found = retriever.backend.search(
        retriever.collection,
        retriever.embed(query),
        None,
        retriever.qdrant_filter,
        1,
        above,
        None,
        with_payload=False,
    )
    return found[0].score if found else None
