"""Reciprocal rank fusion of ranked lists, without building nodes.

The ranking LlamaIndex's `QueryFusionRetriever` gives in `reciprocal_rank` mode with one query
(`tests/test_dnd_tools.py` pins it): each list is ordered by its own scores, an item scores
1 / (rank + 60) in every list holding it, and the sums rank the items. The tools fuse points
here, so only the hits returned become nodes; notebooks can use LlamaIndex's.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import Any, NamedTuple

RRF_K = 60.0  # the constant of the RRF paper, and LlamaIndex's


class Ranked(NamedTuple):
    """One item of a ranked list: what identifies it, its score in that list, and the item."""

    key: Hashable
    score: float | None
    item: Any


def reciprocal_rank_fusion(rankings: Iterable[Sequence[Ranked]], limit: int) -> list[Ranked]:
    """The `limit` best items of all lists by fused score, best first (score: the fused one)."""
    fused: dict[Hashable, float] = {}
    items: dict[Hashable, Any] = {}
    for ranking in rankings:
        ordered = sorted(ranking, key=lambda ranked: ranked.score or 0.0, reverse=True)
        for rank, ranked in enumerate(ordered):
            items[ranked.key] = ranked.item
            fused[ranked.key] = fused.get(ranked.key, 0.0) + 1.0 / (rank + RRF_K)
    best = sorted(fused.items(), key=lambda pair: pair[1], reverse=True)[:limit]
    return [Ranked(key, score, items[key]) for key, score in best]
