"""A page of ranked hits above a similarity floor, its exact total, and what the floor hid."""

from __future__ import annotations

from dataclasses import dataclass

from qdrant_client import models

from scoperag.core.engine.search_request import SearchRequest
from scoperag.retrievers.searches import FilteredSearch, SearchQuery


@dataclass
class RankedPage:
    """One page of hits and the figures around it (scores are cosine similarities)."""

    hits: list[models.ScoredPoint]
    total: int  # hits at or above the floor, at most the cap
    hidden: int = 0  # points matching the filter below the floor (counted when the page is short)
    best_hidden: float | None = None  # the best cosine among them
    exists: bool = True  # False: the collection does not exist (no hits)


LOWEST_COSINE = -1.0  # a floor at or below it keeps every point: no floor at all


def ranked_page(
    retriever: FilteredSearch, query: SearchQuery, min_score: float | None, cap: int
) -> RankedPage:
    """The retriever's page (its `offset` and `top_k`) above `min_score`, with the total.

    All engine work: the page (with a floor, and the count of the hits above it up to `cap`)
    is one search; without a floor, the total is a plain count of the filter's matches when
    the page is full. When the page comes out short and a floor is set, the filter's matches
    are counted and the best one below the floor is fetched, so the caller can say what the
    floor hid.
    """
    floor = None if min_score is not None and min_score <= LOWEST_COSINE else min_score
    retriever.min_score = floor
    found = retriever.search(query, count_cap=None if floor is None else cap)
    if not found.exists:
        return RankedPage(hits=[], total=0, exists=False)
    hits, above = found.hits, found.count
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


def _best_below(retriever: FilteredSearch, query: SearchQuery, above: int) -> float | None:
    """The best cosine after the `above` hits at or above the floor: dense, no floor."""
    request = SearchRequest(
        collection=retriever.collection,
        dense=retriever.embed(query),
        filter=retriever.qdrant_filter,
        limit=1,
        offset=above,
        with_payload=False,
    )
    found = retriever.backend.search(request).hits
    return found[0].score if found else None
