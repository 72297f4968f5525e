"""A unique, deterministic newest-first key per memory, so pages are a total order.

Qdrant's `order_by` has one key and no tie-breaker: memories with equal timestamps came back in
an order that changed with the page size, repeating some and skipping others across pages. Each
memory gets `created_order = created_at in ms * 2**15 + slot`, where the slot counts the
memories already stored in that millisecond (one writer per data dir). Memories stored before
this key existed get one on the next newest-first read (ordered by time, then hash).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from qdrant_client import models

from scoperag.core.backend import VectorBackend
from scoperag.core.contracts.memory import COLLECTION, ORDER_KEY, TIME_KEY, MemoryPayload
from scoperag.core.errors import ScoperagError

SLOT_BITS = 15
SLOTS = 1 << SLOT_BITS  # memories per millisecond; years 1-9999 in ms * SLOTS fit in an int64


def order_base(timestamp: float) -> int:
    """The first order key of the millisecond of `timestamp` (Unix seconds)."""
    return math.floor(timestamp * 1000) << SLOT_BITS


def last_order_key(timestamp: float) -> int:
    """The last order key of the millisecond of `timestamp`: no memory created before
    `timestamp` has a larger one (where a newest-first read up to that moment may start)."""
    return order_base(timestamp) + SLOTS - 1


def _in_range(low: int, high: int) -> models.Filter:
    return models.Filter(
        must=[models.FieldCondition(key=ORDER_KEY, range=models.Range(gte=low, lte=high))]
    )


def _next_slot(backend: VectorBackend, base: int) -> int:
    last = backend.scroll(
        COLLECTION,
        _in_range(base, base + SLOTS - 1),
        limit=1,
        order_by=models.OrderBy(key=ORDER_KEY, direction=models.Direction.DESC),
    )
    return (last[0].payload or {})[ORDER_KEY] - base + 1 if last else 0


def assign_order(backend: VectorBackend, memories: Sequence[MemoryPayload]) -> None:
    """Set `created_order` of memories about to be written, after those already stored."""
    bases = [order_base(memory.created_at_ts) for memory in memories]
    if not bases:
        return
    stored = backend.count(COLLECTION, _in_range(min(bases), max(bases) + SLOTS - 1))
    slots: dict[int, int] = {}
    for memory, base in zip(memories, bases, strict=True):
        if base not in slots:
            slots[base] = _next_slot(backend, base) if stored else 0
        if slots[base] >= SLOTS:
            raise ScoperagError(
                f"More than {SLOTS} memories have the creation time {memory.created_at}; "
                "give them distinct times (to the millisecond)."
            )
        memory.created_order = base + slots[base]
        slots[base] += 1


def backfill_order(backend: VectorBackend) -> int:
    """Give memories stored without `created_order` one; returns how many were updated."""
    missing = models.Filter(
        must=[models.IsEmptyCondition(is_empty=models.PayloadField(key=ORDER_KEY))]
    )
    count = backend.count(COLLECTION, missing)
    if not count:
        return 0
    records = backend.scroll(COLLECTION, missing, limit=count)
    records.sort(
        key=lambda r: (
            (r.payload or {}).get(TIME_KEY, 0.0),
            (r.payload or {}).get("content_hash", ""),
        )
    )
    memories = [
        MemoryPayload.model_construct(
            created_at_ts=(r.payload or {}).get(TIME_KEY, 0.0),
            created_at=(r.payload or {}).get("created_at", ""),
        )
        for r in records
    ]
    assign_order(backend, memories)
    for record, memory in zip(records, memories, strict=True):
        backend.set_payload(COLLECTION, record.id, {ORDER_KEY: memory.created_order})
    return count
