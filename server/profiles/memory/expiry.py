"""memory profile: memories past their `expires_at` (what `scoperag prune memory --expired`
removes) and the counts `scoperag list memory` shows (current, superseded, expired)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qdrant_client import models

from scoperag.core.contracts.memory import (
    COLLECTION,
    CONTENT_HASH,
    EXPIRED,
    SUPERSEDED,
    current_memories,
)
from scoperag.core.filters.fields import Condition, FieldType, FilterableField, build_filter

if TYPE_CHECKING:
    from scoperag.core.engine.backend import VectorBackend

MOST_PRUNED = 100_000  # expired memories listed (and deleted) by one prune
_AMONG = FilterableField(
    name="hashes",
    key=CONTENT_HASH.payload_key,
    field_type=FieldType.KEYWORD,
    condition=Condition.ANY,
    description="Only these memories.",
)


def _expired(now: float, hashes: list[str] | None = None) -> models.Filter:
    """Memories whose expiry is at or before `now` (of these hashes, when given)."""
    found = build_filter([_AMONG], {_AMONG.name: hashes}, EXPIRED.parts(now).must)
    assert found is not None  # the expiry condition is always there
    return found


def expired(backend: VectorBackend, now: float | None = None) -> list[dict[str, Any]]:
    """The payloads of the memories expired at `now` (default: now), soonest expired first."""
    if not backend.collection_exists(COLLECTION):
        return []
    found = backend.scroll(COLLECTION, _expired(now or time.time()), MOST_PRUNED)
    payloads = [record.payload or {} for record in found]
    return sorted(payloads, key=lambda p: (p["expires_ts"], p["content_hash"]))


def prune(
    backend: VectorBackend, data_dir: Path, hashes: list[str], now: float | None = None
) -> int:
    """Delete these memories where they are still expired, each as `delete_version` does (the
    version it replaced takes its place); how many were deleted."""
    from scoperag.server.profiles.memory.versions import delete_version

    if not hashes or not backend.collection_exists(COLLECTION):
        return 0
    found = backend.scroll(COLLECTION, _expired(now or time.time(), hashes), MOST_PRUNED)
    still = [(record.payload or {})["content_hash"] for record in found]
    return sum(delete_version(backend, data_dir, hash_) for hash_ in still)


def states(backend: VectorBackend, collection: str) -> dict[str, int]:
    """How many memories are current, superseded (kept, hidden) and expired, now."""
    now = time.time()
    superseded = SUPERSEDED.parts(True)
    return {
        "current": backend.count(
            collection, models.Filter(must=current_memories(now, False, False))
        ),
        "superseded": backend.count(collection, models.Filter(must_not=superseded.must_not)),
        "expired": backend.count(collection, _expired(now)),
    }
