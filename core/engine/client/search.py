"""Dense and hybrid (dense + BM25, fused by the engine) searches through qdrant-client."""

from __future__ import annotations

from qdrant_client import QdrantClient, models

from scoperag.core.embedding.bm25 import query_vector
from scoperag.core.engine.backend import meaning_breaks_ties
from scoperag.core.engine.search_request import (
    FUSION_CANDIDATES,
    Branches,
    BranchHit,
    SearchRequest,
)
from scoperag.core.engine.vector_names import DENSE_VECTOR, SPARSE_VECTOR


def search(
    client: QdrantClient, request: SearchRequest, flt: models.Filter | None, hybrid: bool
) -> list[models.ScoredPoint]:
    """`VectorBackend.search`'s page through qdrant-client (see there), under `flt` (the
    request's filter narrowed to what readers may see); `hybrid` False: dense only."""
    collection, dense, text = request.collection, request.dense, request.text
    limit, offset, with_payload = request.limit, request.offset, request.with_payload
    score_threshold = request.score_threshold
    if not hybrid or not text:
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
    cosines = {point.id: point.score for point in nearest}
    if not cosines:
        return []
    # The fusion ranks exactly these candidates by meaning and by keywords (see `edge_search`).
    among = models.Filter(must=[models.HasIdCondition(has_id=list(cosines))])
    fused = client.query_points(
        collection,
        prefetch=[
            models.Prefetch(
                query=dense,
                using=DENSE_VECTOR,
                filter=among,
                limit=len(cosines),
                params=models.SearchParams(exact=True),
            ),
            models.Prefetch(
                query=query_vector(text),
                using=SPARSE_VECTOR,
                filter=among,
                limit=len(cosines),
            ),
        ],
        query=models.FusionQuery(fusion=models.Fusion.DBSF),
        limit=limit,
        offset=offset,
        with_payload=with_payload,
    ).points
    return meaning_breaks_ties(
        [(point.score, point.model_copy(update={"score": cosines[point.id]})) for point in fused]
    )


def count_above(
    client: QdrantClient, request: SearchRequest, flt: models.Filter | None, cap: int
) -> int:
    """The candidates `VectorBackend.search` counts with `count_cap`, through qdrant-client:
    an ids-only dense query, counted."""
    ids_only = request.model_copy(update={"limit": cap, "offset": 0, "with_payload": False})
    return len(search(client, ids_only, flt, hybrid=False))


def branches(
    client: QdrantClient, request: SearchRequest, flt: models.Filter | None, hybrid: bool
) -> Branches:
    """Each ranking alone under `flt`, `prefetch_limit` deep (see `edge_search._branches`)."""
    depth, floor, text = request.prefetch_limit, request.score_threshold, request.text
    everything = request.model_copy(
        update={"limit": depth, "offset": 0, "score_threshold": None, "with_payload": False}
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
    found.fused = [BranchHit(id=hit.id, score=hit.order_value or 0.0) for hit in fused]
    return found


def _ranking(points: list[models.ScoredPoint]) -> list[BranchHit]:
    return [BranchHit(id=point.id, score=point.score) for point in points]
