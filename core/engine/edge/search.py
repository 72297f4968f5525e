"""Dense and hybrid (dense + BM25, fused by the engine) searches on one Qdrant Edge shard."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import qdrant_edge as edge
from qdrant_client import models

from scoperag.core.embedding.bm25 import query_vector
from scoperag.core.engine.backend import meaning_breaks_ties
from scoperag.core.engine.edge.conversion import plain_id, to_edge_vectors
from scoperag.core.engine.search_request import (
    FUSION_CANDIDATES,
    Branches,
    BranchHit,
    DateBoost,
    SearchRequest,
    SearchResult,
    candidate_union,
)
from scoperag.core.engine.vector_names import SPARSE_VECTOR

if TYPE_CHECKING:
    from scoperag.core.engine.edge.collection import EdgeCollection

FAR_PAST = -1e12  # the time of a point without one: no date boost reaches it


def search(store: EdgeCollection, request: SearchRequest) -> SearchResult:
    """`VectorBackend.search` on an Edge shard of an existing collection (see there)."""
    if request.count_cap is None:
        hits, count = _page(store, request), None
    else:
        hits, count = _counted(store, request, request.count_cap)
    branches = _branches(store, request) if request.explain else None
    return SearchResult(
        hits=hits, exists=True, keywords=store.keywords, count=count, branches=branches
    )


def _branches(store: EdgeCollection, request: SearchRequest) -> Branches:
    """Each ranking alone under the request's filter, `prefetch_limit` deep: dense without the
    floor, BM25 of the text, and the fusion of every candidate the page was fused from."""
    edge_filter = store.visible(request.filter)
    depth, floor = request.prefetch_limit, request.score_threshold
    dense = _nearest(store, request.dense, edge_filter, depth, 0, None, False)
    branches = Branches(prefetch_limit=depth, floor=floor, dense=_ranking(dense))
    text = request.text
    if text is None or not _hybrid(store, text):
        return branches
    keywords = store.client.query(
        edge.QueryRequest(
            limit=depth,
            query=edge.Query.Nearest(to_edge_vectors(query_vector(text)), using=SPARSE_VECTOR),
            filter=edge_filter,
            with_payload=False,
        )
    )
    candidates = [point for point in dense if floor is None or point.score >= floor]
    if request.keyword_candidates:
        found = _keyword_candidates(store, request, edge_filter, depth)
        candidates = candidate_union(candidates, found)
        branches.keyword_candidates = True
    fused = _fused(store, request.dense, text, candidates, len(candidates), 0, False)
    branches.bm25 = _ranking(keywords)
    branches.fused = [BranchHit(id=hit.id, score=hit.order_value or 0.0) for hit in fused]
    return branches


def _ranking(points: list[Any]) -> list[BranchHit]:
    return [BranchHit(id=plain_id(point.id), score=point.score) for point in points]


def _page(store: EdgeCollection, request: SearchRequest) -> list[models.ScoredPoint]:
    edge_filter = store.visible(request.filter)  # narrowed to what readers may see
    dense, limit, offset, floor = (
        request.dense,
        request.limit,
        request.offset,
        request.score_threshold,
    )
    text = request.text if _hybrid(store, request.text) else None
    if text or request.date_boost:
        candidates = max(offset + limit, FUSION_CANDIDATES)
        nearest = _nearest(store, dense, edge_filter, candidates, 0, floor, False)
        if text and request.keyword_candidates:
            found = _keyword_candidates(store, request, edge_filter, candidates)
            nearest = candidate_union(nearest, found)
        boost, payload = request.date_boost, request.with_payload
        return _fused(store, dense, text, nearest, limit, offset, payload, boost)
    points = _nearest(store, dense, edge_filter, limit, offset, floor, request.with_payload)
    return [_scored(point, point.score) for point in points]


def _counted(
    store: EdgeCollection, request: SearchRequest, cap: int
) -> tuple[list[models.ScoredPoint], int]:
    """One ids-only nearest-neighbour query settles the count and the candidates; the page's
    payloads come by id (or with the fusion)."""
    edge_filter = store.visible(request.filter)
    dense, limit, offset, floor = (
        request.dense,
        request.limit,
        request.offset,
        request.score_threshold,
    )
    depth = offset + limit
    nearest = _nearest(store, dense, edge_filter, max(depth, cap), 0, floor, False)
    text = request.text if _hybrid(store, request.text) else None
    if text or request.date_boost:
        candidates = nearest[: max(depth, FUSION_CANDIDATES)]
        if text and request.keyword_candidates:
            found = _keyword_candidates(store, request, edge_filter, len(candidates))
            candidates = candidate_union(candidates, found)
        boost, payload = request.date_boost, request.with_payload
        page = _fused(store, dense, text, candidates, limit, offset, payload, boost)
    else:
        page = _with_payloads(store, nearest[offset:depth], request.with_payload)
    return page, min(len(nearest), cap)


def _hybrid(store: EdgeCollection, text: str | None) -> bool:
    return bool(text and text.strip() and store.keywords)


def _keyword_candidates(
    store: EdgeCollection, request: SearchRequest, edge_filter: edge.Filter | None, depth: int
) -> list[Any]:
    """BM25's own `depth` best candidates under the filter, with their cosines, those at or
    above the request's floor: one query, the BM25 prefetch rescored by the dense vector."""
    return store.client.query(
        edge.QueryRequest(
            limit=depth,
            query=edge.Query.Nearest(list(request.dense), using=store.dense_vector_name),
            prefetches=[
                edge.Prefetch(
                    limit=depth,
                    query=edge.Query.Nearest(
                        to_edge_vectors(query_vector(request.text or "")), using=SPARSE_VECTOR
                    ),
                    filter=edge_filter,
                )
            ],
            score_threshold=request.score_threshold,
            with_payload=False,
        )
    )


def _fused(
    store: EdgeCollection,
    dense: list[float],
    text: str | None,
    nearest: list[Any],
    limit: int,
    offset: int,
    with_payload: bool | list[str],
    boost: DateBoost | None = None,
) -> list[models.ScoredPoint]:
    """The candidates (each with its cosine) ranked by meaning and keywords, fused by the
    engine (DBSF); without `text`, by meaning alone; with `boost`, that score plus the date's
    boost (a formula query)."""
    cosines = {point.id: point.score for point in nearest}  # the engine's ids, not converted
    if not cosines:
        return []
    # The fusion ranks exactly these candidates by meaning and by keywords: both prefetches
    # read only their ids (the filter and floor are settled), so the nearest-neighbour
    # search runs once and the candidates' cosines are already known.
    among = edge.Filter(must=[edge.HasIdCondition(set(cosines))])
    branches = [
        edge.Prefetch(
            limit=len(cosines),
            query=edge.Query.Nearest(list(dense), using=store.dense_vector_name),
            filter=among,
            params=edge.SearchParams(exact=True),
        )
    ]
    if text:
        sparse = to_edge_vectors(query_vector(text))
        branches.append(
            edge.Prefetch(
                limit=len(cosines),
                query=edge.Query.Nearest(sparse, using=SPARSE_VECTOR),
                filter=among,
            )
        )
    query: Any = edge.Fusion.Dbsf() if text else None
    if boost is not None:
        if text:
            branches = [edge.Prefetch(limit=len(cosines), query=query, prefetches=branches)]
        query = _boosted(boost)
    fused = store.client.query(
        edge.QueryRequest(
            limit=limit,
            offset=offset,
            query=query,
            prefetches=branches,
            with_payload=with_payload,
        )
    )
    return meaning_breaks_ties(
        [(point.score, _scored(point, cosines[point.id])) for point in fused]
    )


def _boosted(boost: DateBoost) -> edge.Formula:
    """The prefetch's score plus the date's Gaussian boost by distance from its period."""
    when = edge.Expression.Variable(boost.key)
    distance = edge.Expression.Max(
        [
            edge.Expression.Constant(0.0),
            edge.Expression.Sum([edge.Expression.Constant(boost.start), edge.Expression.Neg(when)]),
            edge.Expression.Sum([when, edge.Expression.Constant(-boost.end)]),
        ]
    )
    decay = edge.Expression.Decay(
        edge.DecayKind.Gauss, distance, edge.Expression.Constant(0.0), 0.5, boost.scale
    )
    return edge.Formula(
        edge.Expression.Sum(
            [
                edge.Expression.Variable("$score"),
                edge.Expression.Mult([edge.Expression.Constant(boost.weight), decay]),
            ]
        ),
        defaults={boost.key: FAR_PAST},
    )


def _with_payloads(
    store: EdgeCollection, nearest: list[Any], with_payload: bool | list[str]
) -> list[models.ScoredPoint]:
    """These ids-only hits, in their order, with their payloads."""
    if not nearest:
        return []
    records = store.by_id([point.id for point in nearest], with_payload=with_payload)
    return [_scored(records[point.id], point.score) for point in nearest if point.id in records]


def _nearest(
    store: EdgeCollection,
    dense: list[float],
    edge_filter: edge.Filter | None,
    limit: int,
    offset: int,
    score_threshold: float | None,
    with_payload: bool | list[str],
) -> list[Any]:
    """The engine's dense nearest neighbours, as it returns them (ids, scores, payloads)."""
    return store.client.query(
        edge.QueryRequest(
            limit=limit,
            offset=offset,
            query=edge.Query.Nearest(list(dense), using=store.dense_vector_name),
            filter=edge_filter,
            params=store.plan_search(edge_filter, offset + limit),
            score_threshold=score_threshold,
            with_payload=with_payload,
        )
    )


def _scored(point: Any, score: float) -> models.ScoredPoint:
    return models.ScoredPoint(
        id=plain_id(point.id), version=0, score=score, payload=point.payload or None
    )
