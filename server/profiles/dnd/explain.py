"""The dnd tools' explain: a search's hits in the engine's rankings and the name match, fused
by reciprocal rank; a lookup's hits by how their names matched."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from qdrant_client import models

from scoperag.core.engine.search_request import SearchResult
from scoperag.retrievers.explain import (
    SHOWN_DROPS,
    Candidates,
    Dropped,
    Explainer,
    FusedFigures,
    HitExplain,
    NameMatchFigures,
    Names,
    ResultExplain,
    filter_json,
)
from scoperag.retrievers.fusion import Ranked
from scoperag.retrievers.name_match import NameMatch
from scoperag.server.profiles.dnd.models import DndHit

# `NameMatch.match` as the explain's kind: a partial match is a name holding the query
KINDS = {"exact": "exact", "partial": "prefix", "fuzzy": "fuzzy"}


def name_figures(match: NameMatch | None) -> NameMatchFigures | None:
    if match is None:
        return None
    return NameMatchFigures(kind=KINDS[match.match], score=match.similarity)  # type: ignore[arg-type]


def explain_search(
    results: list[DndHit],
    fused: list[Ranked],
    limit: int,
    found: SearchResult,
    flt: models.Filter | None,
    names: dict[Hashable, NameMatch],
    identities: Names,
) -> ResultExplain:
    """Sets each result's explain (`fused`: every fused item, the results first); the result's.
    What the limit dropped is ranked as the hits are, by the reciprocal rank fusion."""
    why = Explainer(found, flt, names=identities)
    for rank, (hit, item) in enumerate(zip(results, fused, strict=False), 1):
        hit.explain = why.hit(item.key, rank, hit)
        hit.explain.name_match = name_figures(names.get(item.key))
    shown = {item.key for item in fused[:limit]}
    why.floor_drops()
    why.past_limit([(item.key, item.score) for item in fused], shown, "rrf")
    return why.result()


def explain_lookup(
    results: list[DndHit],
    flt: models.Filter | None,
    limit: int,
    matches: list[NameMatch] | None,
    left_out: list[tuple[Any, float | None, dict[str, Any]]],
    left_total: int,
) -> ResultExplain:
    """Sets each result's explain: by name match (`matches`) or alphabetical; `left_out`:
    (name or point id, score, what names it) of what the limit left out (`left_total` in
    all)."""
    how = {match.name: match for match in matches or []}
    for rank, hit in enumerate(results, 1):
        hit.explain = HitExplain(
            fused=FusedFigures(score=hit.score, rank=rank, method=hit.fusion or "name_order"),
            similarity=hit.similarity,
            name_match=name_figures(how.get(hit.name)),
        )
    what = "name" if matches is not None else "alphabetical"
    dropped = [
        Dropped(
            stage="limit",
            id=key,
            identity=named,
            reason=f"{what} rank {n}, past the limit of {limit}",
            score=score,
        )
        for n, (key, score, named) in enumerate(left_out, len(results) + 1)
    ]
    return ResultExplain(
        filter=filter_json(flt),
        prefetch_limit=limit,
        candidates=Candidates(dense=0, bm25=None),
        dropped=dropped[:SHOWN_DROPS],
        dropped_total=left_total,
    )
