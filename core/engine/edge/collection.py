"""`EdgeCollection`: one collection's engine operations on its open Qdrant Edge shard.

Writes, query-less reads (`scroll` with order_by, `count`, `facet`, `key_values`) and the
search plan, in qdrant-client's types, narrowed to the points readers may see
(`core.engine.generations`). No LlamaIndex here: the tools reach the engine through this
class alone, so a freshly started server answers without importing LlamaIndex.
`core.engine.vector_store` puts LlamaIndex's vector store API on top; `core.engine.edge.search`
runs the searches."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from functools import partial
from typing import Any

import qdrant_edge as edge
from qdrant_client import models

from scoperag.core.embedding.bm25 import document_vector, node_text
from scoperag.core.engine.backend import ALL_VALUES
from scoperag.core.engine.edge.conversion import (
    plain_id,
    to_edge_filter,
    to_edge_order_by,
    to_edge_vectors,
    to_record,
)
from scoperag.core.engine.edge.ledger import Ledger
from scoperag.core.engine.generations import with_hidden
from scoperag.core.engine.key_values import KeyValues
from scoperag.core.engine.vector_names import DENSE_VECTOR, SPARSE_VECTOR

_PAGE = 1024
# HNSW beam: EF_PER_SHARE / a filter's share, in [EF_MIN, EF_MAX]: recall@10 >= 0.99 (engine.md)
EF_PER_SHARE, EF_MIN, EF_MAX = 128, 256, 1024
EXACT_BELOW = 20_000  # a filter matching fewer points is searched exactly (cost grows with them)
BATCH_SIZE = 256  # points per upsert operation


class EdgeCollection:
    """The points of one collection in an open Edge shard (LlamaIndex's Qdrant payload layout).

    `hidden` gives the conditions of the points no read may return (`core.engine.generations`);
    `ledger`, where given, records the point count after every acknowledged write."""

    dense_vector_name = DENSE_VECTOR

    def __init__(
        self,
        shard: edge.EdgeShard,
        name: str,
        keywords: bool = False,
        hidden: Callable[[], list[models.Filter]] = list,
        ledger: Ledger | None = None,
    ) -> None:
        self.client = shard
        self.name = name
        self.keywords = keywords  # the shard keeps BM25 sparse vectors (`SPARSE_VECTOR`)
        self.hidden = hidden
        self.ledger = ledger
        self._values = KeyValues()  # reads kept between writes

    # writing

    def upsert_points(self, points: Iterable[models.PointStruct]) -> None:
        """Write points in qdrant-client's shape (vectors included; BM25 ones computed where
        missing)."""
        edge_points = [self._edge_point(point) for point in points]
        with self._acknowledged():
            for start in range(0, len(edge_points), BATCH_SIZE):
                batch = edge_points[start : start + BATCH_SIZE]
                self.client.update(edge.UpdateOperation.upsert_points(batch))
            if edge_points:
                self.client.optimize()

    def _edge_point(self, point: models.PointStruct) -> edge.Point:
        vector, payload = point.vector, point.payload or {}
        if self.keywords and isinstance(vector, dict) and SPARSE_VECTOR not in vector:
            vector = {**vector, SPARSE_VECTOR: document_vector(node_text(payload))}
        return edge.Point(point.id, to_edge_vectors(vector), payload)

    def delete(self, flt: models.Filter) -> None:
        edge_filter = to_edge_filter(flt)
        matches = edge.CountRequest(exact=True, filter=edge_filter)
        with self._acknowledged(lambda: self.client.count(matches)):
            self.client.update(edge.UpdateOperation.delete_points_by_filter(edge_filter))

    def update(self, operation: edge.UpdateOperation) -> None:
        with self._acknowledged():
            self.client.update(operation)

    @contextmanager
    def _acknowledged(self, deleting: Callable[[], int] | None = None) -> Iterator[None]:
        """Around every write: drops what `key_values`/`kept_count` kept and, once the write
        returns, records the point count in the ledger. A delete first records the count it may
        fall to (`deleting()` points fewer), so being killed mid-delete is no loss."""
        ledger = self.ledger
        with ledger.lock if ledger else nullcontext(), self._values.writing():
            if ledger and deleting:
                ledger.record(self.client.info().points_count - deleting(), count_write=False)
            yield
            if ledger:
                ledger.record(self.client.info().points_count)

    # reading

    def scroll(
        self,
        flt: models.Filter | None,
        limit: int,
        offset: int = 0,
        order_by: models.OrderBy | None = None,
        with_vectors: bool = False,
    ) -> list[models.Record]:
        """Visible points matching `flt`, skipping `offset`, ordered by `order_by` (else by id)."""
        edge_filter = self.visible(flt)
        if order_by is not None:
            # The order has no cursor: the points skipped are read too, but by id alone, and the
            # page's own points are then fetched whole (a page deep in the order reads `limit`
            # payloads, not `offset + limit`).
            request = edge.ScrollRequest(
                limit=offset + limit,
                filter=edge_filter,
                order_by=to_edge_order_by(order_by),
                with_payload=offset == 0,
                with_vector=with_vectors and offset == 0,
            )
            records, _ = self.client.scroll(request)
            if offset:
                ids = [record.id for record in records[offset:]]
                found = self.by_id(ids, with_vectors)
                records = [found[point_id] for point_id in ids if point_id in found]
            return [to_record(record) for record in records]
        found: list[Any] = []
        cursor = None
        while len(found) < offset + limit:
            batch, cursor = self.client.scroll(
                edge.ScrollRequest(
                    offset=cursor,
                    limit=min(offset + limit - len(found), _PAGE),
                    filter=edge_filter,
                    with_payload=True,
                    with_vector=with_vectors,
                )
            )
            found += batch
            if cursor is None:
                break
        return [to_record(record) for record in found[offset:]]

    def by_id(
        self, ids: list[Any], with_vectors: bool = False, with_payload: bool | list[str] = True
    ) -> dict[Any, Any]:
        """These points with their payloads (or these keys of them) and vectors if asked, by
        the engine's ids; a point deleted since its id was read is missing."""
        return {point.id: point for point in self.client.retrieve(ids, with_payload, with_vectors)}

    def points(self, batch_size: int = 512) -> Iterator[list[models.Record]]:
        """Every point with its vectors and payload, a page at a time (for migrations)."""
        cursor = None
        while True:
            batch, cursor = self.client.scroll(
                edge.ScrollRequest(
                    offset=cursor, limit=batch_size, with_payload=True, with_vector=True
                )
            )
            if batch:
                yield [to_record(record) for record in batch]
            if cursor is None:
                return

    def points_page(
        self, cursor: int | str | None, limit: int
    ) -> tuple[list[models.Record], int | str | None]:
        """Up to `limit` visible points from `cursor` on, in id order, and the next cursor."""
        request = edge.ScrollRequest(
            offset=cursor,
            limit=limit,
            filter=self.visible(None),
            with_payload=True,
            with_vector=True,
        )
        batch, following = self.client.scroll(request)
        return [to_record(point) for point in batch], (
            None if following is None else plain_id(following)
        )

    def count(self, flt: models.Filter | None = None) -> int:
        """Exact count of the visible points matching `flt`, kept until the next write."""
        return self.kept_count(self.visible(flt))

    def kept_count(self, edge_filter: edge.Filter | None) -> int:
        """`count_edge`, kept until the collection's next write (keyed by the filter's Debug
        text: every condition and value, the hidden generations' included)."""
        key = ("count", repr(edge_filter))
        return self._values.get(key, partial(self.count_edge, edge_filter))

    def count_edge(self, edge_filter: edge.Filter | None) -> int:
        """Exact count; without a filter (so nothing hidden either) the shard's point count."""
        if edge_filter is None:
            return self.client.info().points_count
        return self.client.count(edge.CountRequest(exact=True, filter=edge_filter))

    def facet(self, key: str, flt: models.Filter | None = None, limit: int = 10) -> dict[Any, int]:
        """Value -> number of points, most frequent first (needs a keyword/integer/bool index)."""
        request = edge.FacetRequest(key, limit=limit, exact=True, filter=self.visible(flt))
        return self._facet(request)

    def key_values(self, key: str) -> list[Any]:
        """Every value indexed under `key` (hidden points' too), kept until the next write."""
        request = edge.FacetRequest(key, limit=ALL_VALUES, exact=False)
        return self._values.get(key, lambda: list(self._facet(request)))

    def _facet(self, request: edge.FacetRequest) -> dict[Any, int]:
        response = self.client.facet(request)
        return {hit.value: hit.count for hit in response.hits}

    # search plans

    def visible(self, flt: models.Filter | None) -> edge.Filter | None:
        """`flt` in Edge's types, narrowed to the points readers may see."""
        return to_edge_filter(with_hidden(flt, self.hidden()))

    def plan_search(self, edge_filter: edge.Filter | None, top_k: int) -> edge.SearchParams:
        """Search params chosen so top-k matches exact search.

        HNSW with the default beam loses recall when a filter keeps a large share of the points
        but not all of them; few points (filtered or not) are cheaper to search exactly. The
        engine's estimate of the matches (microseconds) settles the common narrow case; an
        estimate above EXACT_BELOW is checked with an exact count (kept until the next write),
        as estimates of conditions on keys without an index can be far too high."""
        share = 1.0
        if edge_filter is not None:
            estimate = self.client.count(edge.CountRequest(exact=False, filter=edge_filter))
            matches = estimate if estimate <= EXACT_BELOW else self.kept_count(edge_filter)
            if matches <= EXACT_BELOW:
                return edge.SearchParams(exact=True)
            share = min(1.0, matches / max(self.client.info().points_count, 1))
        elif self.client.info().points_count <= EXACT_BELOW:  # no cheaper than a beam of EF_MIN
            return edge.SearchParams(exact=True)
        return edge.SearchParams(
            hnsw_ef=min(EF_MAX, max(EF_MIN, top_k, round(EF_PER_SHARE / share)))
        )
