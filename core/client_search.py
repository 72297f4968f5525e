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
    """`VectorBackend.search` through qdrant-client (see there); `text` None: dense only; `flt`
    in qdrant-client's models."""
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
    client: QdrantClient,
    collection: str,
    dense: list[float],
    flt: models.Filter | None,
    score_threshold: float,
    cap: int,
) -> int:
    """The count `VectorBackend.search_counted` gives, through qdrant-client: an ids-only dense
    query, counted."""
    return len(search(client, collection, dense, None, flt, cap, 0, score_threshold, False))
