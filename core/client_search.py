"""Dense and hybrid (dense + BM25, fused by the engine) searches through qdrant-client."""

from __future__ import annotations

from qdrant_client import QdrantClient, models

from scoperag.core.backend import (
    DENSE_VECTOR,
    FUSION_CANDIDATES,
    SPARSE_VECTOR,
    meaning_breaks_ties,
)
from scoperag.core.bm25 import query_vector


def search(
    client: QdrantClient,
    collection: str,
    dense: list[float],
    text: str | None,
    flt: models.Filter | None,
    limit: int,
    offset: int = 0,
    score_threshold: float | None = None,
    with_payload: bool = True,
) -> list[models.ScoredPoint]:
    """`VectorBackend.search` through qdrant-client (see there); `text` None: dense only."""
    if text is None:
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
    nearest = models.Prefetch(
        query=dense,
        using=DENSE_VECTOR,
        filter=flt,
        limit=candidates,
        score_threshold=score_threshold,
    )
    keywords = models.Prefetch(  # ranks `nearest`'s candidates: already filtered
        query=query_vector(text),
        using=SPARSE_VECTOR,
        limit=candidates,
        prefetch=[nearest],
    )
    fused = client.query_points(
        collection,
        prefetch=[nearest, keywords],
        query=models.FusionQuery(fusion=models.Fusion.DBSF),
        limit=limit,
        offset=offset,
        with_payload=with_payload,
    ).points
    if not fused:
        return []
    cosines = client.query_points(
        collection,
        query=dense,
        using=DENSE_VECTOR,
        query_filter=models.Filter(must=[models.HasIdCondition(has_id=[p.id for p in fused])]),
        limit=len(fused),
        with_payload=False,
    ).points
    score = {point.id: point.score for point in cosines}
    return meaning_breaks_ties(
        [(point.score, point.model_copy(update={"score": score[point.id]})) for point in fused]
    )


def count_above(
    client: QdrantClient,
    collection: str,
    dense: list[float],
    flt: models.Filter | None,
    score_threshold: float,
    cap: int,
) -> int:
    """`VectorBackend.count_above` through qdrant-client: an ids-only dense query, counted."""
    return len(search(client, collection, dense, None, flt, cap, 0, score_threshold, False))
