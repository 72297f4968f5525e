"""`VectorBackend.neighbours` on one Qdrant Edge shard: every visible point's nearest."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import qdrant_edge as edge
from qdrant_client import models

from scoperag.core.engine.backend import NEIGHBOUR_BATCH, unique_pairs
from scoperag.core.engine.edge.collection import EF_MAX
from scoperag.core.engine.edge.conversion import plain_id

if TYPE_CHECKING:
    from scoperag.core.engine.edge.collection import EdgeCollection

NEIGHBOURS_EXACT_BELOW = 2_000  # `neighbours` among fewer points compares them all
NEIGHBOUR_THREADS = min(4, os.cpu_count() or 1)  # `neighbours`' pages queried at once


def neighbours(
    store: EdgeCollection, flt: models.Filter | None, threshold: float, limit: int
) -> list[tuple[int | str, int | str, float]]:
    """`VectorBackend.neighbours` on an Edge shard (see there): the visible points matching
    `flt` are read with their dense vectors a page at a time, and each page's queries run as
    one planned `query_batch` of the engine, on NEIGHBOUR_THREADS threads (Edge's calls release
    the GIL), a few pages ahead of the reading at most."""
    edge_filter, dense = store.visible(flt), store.dense_vector_name
    params = _neighbour_plan(store, edge_filter, limit + 1)

    def nearest(points: list[Any]) -> list[tuple[Any, list[tuple[Any, float]]]]:
        queries = [
            edge.QueryRequest(
                limit=limit + 1,  # the point itself is among its nearest
                query=edge.Query.Nearest(point.vector[dense], using=dense),
                filter=edge_filter,
                params=params,
                score_threshold=threshold,
                with_payload=False,
            )
            for point in points
        ]
        answers = store.client.query_batch(edge.QueryBatchRequest(queries))
        return [
            (plain_id(point.id), [(plain_id(hit.id), hit.score) for hit in hits])
            for point, hits in zip(points, answers, strict=True)
        ]

    found: list[tuple[Any, list[tuple[Any, float]]]] = []
    with ThreadPoolExecutor(NEIGHBOUR_THREADS) as pool:
        pending: deque[Future[list[tuple[Any, list[tuple[Any, float]]]]]] = deque()
        for points in _pages(store, edge_filter, dense):
            pending.append(pool.submit(nearest, points))
            if len(pending) > NEIGHBOUR_THREADS:
                found += pending.popleft().result()
        for answer in pending:
            found += answer.result()
    return unique_pairs(found)


def _pages(store: EdgeCollection, edge_filter: edge.Filter | None, vector: str) -> Iterator[list]:
    """The points matching `edge_filter` with their `vector`, NEIGHBOUR_BATCH at a time."""
    cursor = None
    while True:
        points, cursor = store.client.scroll(
            edge.ScrollRequest(
                offset=cursor,
                limit=NEIGHBOUR_BATCH,
                filter=edge_filter,
                with_payload=False,
                with_vector=[vector],
            )
        )
        if points:
            yield points
        if cursor is None:
            return


def _neighbour_plan(
    store: EdgeCollection, edge_filter: edge.Filter | None, top_k: int
) -> edge.SearchParams:
    """Exact among few points (the cost grows with their square); else HNSW with a beam of
    `top_k` widened by the share of the points the filter keeps, as `plan_search` does. Near
    duplicates are each other's nearest, so the narrowest beam finds them: among 10,187
    passages, 2,716-2,718 of the 2,718 pairs at cosine >= 0.92 within a point's 20 nearest
    (evals/memory_duplicates_bench.py)."""
    matches = store.kept_count(edge_filter)
    if matches <= NEIGHBOURS_EXACT_BELOW:
        return edge.SearchParams(exact=True)
    share = matches / max(store.client.info().points_count, 1)
    return edge.SearchParams(hnsw_ef=min(EF_MAX, round(top_k / share)))
