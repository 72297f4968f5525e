"""Dense and hybrid (dense + BM25, fused by the engine) searches through qdrant-client."""

from __future__ import annotations

from qdrant_client import QdrantClient, models

from scoperag.core.embedding.bm25 import query_vector
from scoperag.core.engine.backend import NEIGHBOUR_BATCH, meaning_breaks_ties, unique_pairs
from scoperag.core.engine.search_request import (
    FUSION_CANDIDATES,
    Branches,
    BranchHit,
    DateBoost,
    SearchRequest,
    candidate_union,
)
from scoperag.core.engine.vector_names import DENSE_VECTOR, SPARSE_VECTOR

FAR_PAST = -1e12  # the time of a point without one: no date boost reaches it


def search(
    client: QdrantClient, request: SearchRequest, flt: models.Filter | None, hybrid: bool
) -> list[models.ScoredPoint]:
    """`VectorBackend.search`'s page through qdrant-client (see there), under `flt` (the
    request's filter narrowed to what readers may see); `hybrid` False: dense only."""
    collection, dense = request.collection, request.dense
    text = request.text if hybrid else None
    limit, offset, with_payload = request.limit, request.offset, request.with_payload
    score_threshold, boost = request.score_threshold, request.date_boost
    if not text and boost is None:
        return client.query_points(
            collection,
            query=dense,
            using=DENSE_VECTOR,
            query_filter=flt,
            limit=limit,
            offset=offset,
            score_threshold=score_threshold,
            with_payload=with_payload,
        ).points
    candidates = max(offset + limit, FUSION_CANDIDATES)
    nearest = client.query_points(
        collection,
        query=dense,
        using=DENSE_VECTOR,
        query_filter=flt,
        limit=candidates,
        score_threshold=score_threshold,
        with_payload=False,
    ).points
    if text and request.keyword_candidates:
        nearest = candidate_union(nearest, keyword_candidates(client, request, flt, candidates))
    cosines = {point.id: point.score for point in nearest}
    if not cosines:
        return []
    # The fusion ranks exactly these candidates by meaning and by keywords (see `edge_search`).
    among = models.Filter(must=[models.HasIdCondition(has_id=list(cosines))])
    branches = [
        models.Prefetch(
            query=dense,
            using=DENSE_VECTOR,
            filter=among,
            limit=len(cosines),
            params=models.SearchParams(exact=True),
        )
    ]
    if text:
        branches.append(
            models.Prefetch(
                query=query_vector(text), using=SPARSE_VECTOR, filter=among, limit=len(cosines)
            )
        )
    query: models.Query | None = models.FusionQuery(fusion=models.Fusion.DBSF) if text else None
    if boost is not None:
        if text:
            branches = [models.Prefetch(prefetch=branches, query=query, limit=len(cosines))]
        query = _boosted(boost)
    fused = client.query_points(
        collection,
        prefetch=branches,
        query=query,
        limit=limit,
        offset=offset,
        with_payload=with_payload,
    ).points
    return meaning_breaks_ties(
        [(point.score, point.model_copy(update={"score": cosines[point.id]})) for point in fused]
    )


def _boosted(boost: DateBoost) -> models.FormulaQuery:
    """The prefetch's score plus the date's Gaussian boost by distance from its period (as
    `edge_search._boosted`)."""
    distance = models.MaxExpression(
        max=[
            0.0,
            models.SumExpression(sum=[boost.start, models.NegExpression(neg=boost.key)]),
            models.SumExpression(sum=[boost.key, -boost.end]),
        ]
    )
    decay = models.GaussDecayExpression(
        gauss_decay=models.DecayParamsExpression(
            x=distance, target=0.0, scale=boost.scale, midpoint=0.5
        )
    )
    return models.FormulaQuery(
        formula=models.SumExpression(
            sum=["$score", models.MultExpression(mult=[boost.weight, decay])]
        ),
        defaults={boost.key: FAR_PAST},
    )


def keyword_candidates(
    client: QdrantClient, request: SearchRequest, flt: models.Filter | None, depth: int
) -> list[models.ScoredPoint]:
    """BM25's own `depth` best candidates under `flt`, with their cosines, those at or above
    the request's floor: one query, the BM25 prefetch rescored by the dense vector."""
    return client.query_points(
        request.collection,
        prefetch=models.Prefetch(
            query=query_vector(request.text or ""), using=SPARSE_VECTOR, filter=flt, limit=depth
        ),
        query=request.dense,
        using=DENSE_VECTOR,
        limit=depth,
        score_threshold=request.score_threshold,
        with_payload=False,
    ).points


def count_above(
    client: QdrantClient, request: SearchRequest, flt: models.Filter | None, cap: int
) -> int:
    """The candidates `VectorBackend.search` counts with `count_cap`, through qdrant-client:
    an ids-only dense query, counted."""
    ids_only = request.model_copy(
        update={"limit": cap, "offset": 0, "with_payload": False, "date_boost": None}
    )
    return len(search(client, ids_only, flt, hybrid=False))


def neighbours(
    client: QdrantClient,
    collection: str,
    flt: models.Filter | None,
    threshold: float,
    limit: int,
) -> list[tuple[int | str, int | str, float]]:
    """`VectorBackend.neighbours` through qdrant-client (see there), under `flt` (narrowed to
    what readers may see): the points are read with their dense vectors a page at a time, and
    each page's queries go as one `query_batch_points` (by vector: a query by id makes local
    mode check a filter leaving the point out on every point: 3.5 times the CPU)."""
    found: list[tuple[int | str, list[tuple[int | str, float]]]] = []
    cursor = None
    while True:
        points, cursor = client.scroll(
            collection,
            scroll_filter=flt,
            limit=NEIGHBOUR_BATCH,
            offset=cursor,
            with_payload=False,
            with_vectors=[DENSE_VECTOR],
        )
        requests = [
            models.QueryRequest(
                query=point.vector[DENSE_VECTOR],  # type: ignore[index]
                using=DENSE_VECTOR,
                filter=flt,
                score_threshold=threshold,
                limit=limit + 1,  # the point itself is among its nearest
                with_payload=False,
            )
            for point in points
        ]
        if requests:
            answers = client.query_batch_points(collection, requests)
            found += [
                (point.id, [(hit.id, hit.score) for hit in answer.points])
                for point, answer in zip(points, answers, strict=True)
            ]
        if cursor is None:
            return unique_pairs(found)


def branches(
    client: QdrantClient, request: SearchRequest, flt: models.Filter | None, hybrid: bool
) -> Branches:
    """Each ranking alone under `flt`, `prefetch_limit` deep (see `edge_search._branches`)."""
    depth, floor, text = request.prefetch_limit, request.score_threshold, request.text
    everything = request.model_copy(
        update={
            "limit": depth,
            "offset": 0,
            "score_threshold": None,
            "with_payload": False,
            "date_boost": None,
        }
    )
    dense = search(client, everything, flt, hybrid=False)
    found = Branches(prefetch_limit=depth, floor=floor, dense=_ranking(dense))
    if not hybrid or not text:
        return found
    keywords = client.query_points(
        request.collection,
        query=query_vector(text),
        using=SPARSE_VECTOR,
        query_filter=flt,
        limit=depth,
        with_payload=False,
    ).points
    candidates = everything.model_copy(update={"score_threshold": floor})
    fused = search(client, candidates, flt, hybrid=True)
    found.bm25 = _ranking(keywords)
    found.keyword_candidates = request.keyword_candidates
    found.fused = [BranchHit(id=hit.id, score=hit.order_value or 0.0) for hit in fused]
    return found


def _ranking(points: list[models.ScoredPoint]) -> list[BranchHit]:
    return [BranchHit(id=point.id, score=point.score) for point in points]
