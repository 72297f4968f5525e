"""A page of ranked hits above a similarity floor, its exact total, and what the floor hid."""

from __future__ import annotations

from dataclasses import dataclass

from qdrant_client import models

from scoperag.core.collections import ready_for_reading
from scoperag.retrievers.searches import FilteredSearch, SearchQuery


@dataclass
class RankedPage:
    """One page of hits and the figures around it (scores are cosine similarities)."""

    hits: list[models.ScoredPoint]
    total: int  # hits at or above the floor, at most the cap
    hidden: int = 0  # points matching the filter below the floor (counted when the page is short)
    best_hidden: float | None = None  # the best cosine among them


LOWEST_COSINE = -1.0  # a floor at or below it keeps every point: no floor at all


def ranked_page(
    retriever: FilteredSearch, query: SearchQuery, min_score: float | None, cap: int
) -> RankedPage:
    """The retriever's page (its `offset` and `top_k`) above `min_score`, with the total.

    All engine work: with a floor, the page and the count of the hits above it (up to `cap`)
    come from one `search_counted`; without, the page is one query and the total a plain count
    of the filter's matches. When the page comes out short and a floor is set, the filter's
    matches are counted and the best one below the floor is fetched, so the caller can say
    what the floor hid.
    """
    if not ready_for_reading(retriever.backend, retriever.embedder, retriever.collection):
        return RankedPage(hits=[], total=0)
    floor = None if min_score is not None and min_score <= LOWEST_COSINE else min_score
    retriever.min_score = floor
    if floor is None:
        hits, above = retriever.points(query, checked=True), None
    else:
        hits, above = _page_and_count(retriever, query, floor, cap)
    size, offset = retriever.top_k, retriever.offset
    page_short = len(hits) < size
    if page_short and (hits or offset == 0):
        total = offset + len(hits)
    elif above is None:
        total = min(cap, retriever.backend.count(retriever.collection, retriever.qdrant_filter))
    else:
        total = above
    page = RankedPage(hits=hits, total=total)
    if page_short and floor is not None and total < cap:
        matches = retriever.backend.count(retriever.collection, retriever.qdrant_filter)
        page.hidden = max(0, matches - total)
        if page.hidden:
            page.best_hidden = _best_below(retriever, query, total)
    return page


def _page_and_count(
    retriever: FilteredSearch, query: SearchQuery, floor: float, cap: int
) -> tuple[list[models.ScoredPoint], int]:
    """The retriever's page and the hits at or above `floor` (up to `cap`), in one engine
    operation: on Qdrant Edge the count and the page's candidates are one ids-only query."""
    return retriever.backend.search_counted(
        retriever.collection,
        retriever.embed(query),
        retriever.keyword_text(query),
        retriever.qdrant_filter,
        retriever.top_k,
        retriever.offset,
        floor,
        cap,
    )


def _best_below(retriever: FilteredSearch, query: SearchQuery, above: int) -> float | None:
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
