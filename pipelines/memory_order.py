"""A unique, deterministic newest-first key per memory, so pages are a total order.

Qdrant's `order_by` has one key and no tie-breaker: memories with equal timestamps would come
back in an order that changes with the page size, repeating some and skipping others across
pages. Each memory gets `created_order = created_at in ms * 2**15 + slot`, where the slot counts
the memories already stored in that millisecond. Writers of one data dir, from any process or
thread, take turns (an flock on `memory-order.lock` in the data dir) to read the last slot and
write after it, so no two memories share a key. The engines compare range bounds as float64,
exact only to 2**53: every bound used here is the first key of a millisecond (a multiple of
2**15, exact as a float64), and keys inside one millisecond are compared as Python integers.
Memories an older version stored without a key get one at a process's first newest-first read
(ordered by time, then hash).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import math
from collections.abc import Iterator, Sequence
from pathlib import Path

from qdrant_client import models

from scoperag.core.contracts.memory import COLLECTION, ORDER_KEY, TIME_KEY, MemoryPayload
from scoperag.core.engine.backend import VectorBackend
from scoperag.core.errors import ReadOnlyStoreError, ScoperagError

SLOT_BITS = 15
SLOTS = 1 << SLOT_BITS  # memories per millisecond; years 1-9999 in ms * SLOTS fit in an int64
LOCK_FILE = "memory-order.lock"


def order_base(timestamp: float) -> int:
    """The first order key of the millisecond of `timestamp` (Unix seconds)."""
    return math.floor(timestamp * 1000) << SLOT_BITS


def order_bound(timestamp: float) -> int:
    """The first order key of the millisecond after `timestamp`: every memory created up to
    `timestamp` has a smaller one (where a newest-first read up to that moment may start)."""
    return order_base(timestamp) + SLOTS


@contextlib.contextmanager
def writers_take_turns(data_dir: Path) -> Iterator[None]:
    """Hold the data dir's order-key lock: one writer at a time, from any process or thread;
    `ReadOnlyStoreError` if the data dir may not be written."""
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        lock = (data_dir / LOCK_FILE).open("a")
    except OSError as exc:
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM) and data_dir.is_dir():
            raise ReadOnlyStoreError(str(data_dir)) from None
        raise
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or the process dies
        yield


def _milliseconds(low: int, high: int) -> models.Filter:
    """Keys of the milliseconds whose first keys are `low` to `high` (exact float64 bounds)."""
    return models.Filter(
        must=[models.FieldCondition(key=ORDER_KEY, range=models.Range(gte=low, lt=high + SLOTS))]
    )


def _next_slot(backend: VectorBackend, base: int) -> int:
    """The slot after the last one taken in the millisecond starting at key `base`."""
    newest = backend.scroll(
        COLLECTION,
        _milliseconds(base, base),
        limit=1,
        order_by=models.OrderBy(key=ORDER_KEY, direction=models.Direction.DESC),
    )
    return (newest[0].payload or {})[ORDER_KEY] - base + 1 if newest else 0


def assign_order(backend: VectorBackend, memories: Sequence[MemoryPayload]) -> None:
    """Set `created_order` of memories about to be written, after those already stored; call
    it inside `writers_take_turns` and write the memories before leaving it."""
    bases = [order_base(memory.created_at_ts) for memory in memories]
    if not bases:
        return
    stored = backend.count(COLLECTION, _milliseconds(min(bases), max(bases)))
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


def backfill_order(backend: VectorBackend, data_dir: Path) -> int:
    """Give memories stored without `created_order` one; returns how many were updated."""
    missing = models.Filter(
        must=[models.IsEmptyCondition(is_empty=models.PayloadField(key=ORDER_KEY))]
    )
    if not backend.count(COLLECTION, missing):
        return 0
    with writers_take_turns(data_dir):
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
