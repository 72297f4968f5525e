"""The engine errors scoperag tells apart by message: each check fails if the engine's message
(or the exception it raises) changes, so the adapter in `core/engine/error_kinds.py` follows."""

from __future__ import annotations

from pathlib import Path

import pytest
import qdrant_edge as edge
from qdrant_client import QdrantClient, models

from scoperag.core.engine.client.backend import QdrantClientBackend
from scoperag.core.engine.edge.backend import EdgeBackend
from scoperag.core.engine.edge.errors import MissingIndexError
from scoperag.core.engine.error_kinds import is_missing_index, is_store_locked
from scoperag.core.errors import StoreLockedError


def test_edge_order_by_and_facet_without_an_index_are_recognised(tmp_path: Path) -> None:
    backend = EdgeBackend.open(tmp_path)
    backend.create_collection("c", 3, {})
    point = models.PointStruct(id=1, vector={"text-dense": [1.0, 0.0, 0.0]}, payload={"n": 1})
    backend.upsert_points("c", [point])
    checked = backend.edge_collection("c").client  # the shard whose errors are translated
    order = edge.OrderBy("n", edge.Direction.Asc, None)
    requests = [
        lambda shard: shard.scroll(edge.ScrollRequest(limit=1, order_by=order)),
        lambda shard: shard.facet(edge.FacetRequest(key="n", limit=1)),
    ]
    for request, use in zip(requests, ("order_by", "facet"), strict=True):
        with pytest.raises(Exception) as raised:
            request(checked.shard)
        assert is_missing_index(raised.value), repr(raised.value)
        with pytest.raises(MissingIndexError, match=f"on 'n', which {use} needs"):
            request(checked)
    assert not is_missing_index(ValueError("no range index for this"))
    backend.close()


def test_a_local_folder_held_by_another_client_is_recognised(tmp_path: Path) -> None:
    holder = QdrantClient(path=str(tmp_path))
    try:
        with pytest.raises(RuntimeError) as raised:
            QdrantClient(path=str(tmp_path))
        assert is_store_locked(raised.value)
        with pytest.raises(StoreLockedError):
            QdrantClientBackend.local(tmp_path)
    finally:
        holder.close()
    assert not is_store_locked(RuntimeError("already accessed by another instance"))
