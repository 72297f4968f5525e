"""`KeyValues`: reads kept between a collection's writes (a key's values, a filter's count).

Listing every value of a key (a facet over the whole index) costs milliseconds per thousand
values, an exact count of a broad filter at 100k points about as much; both change only when
points are written. Writes bracket themselves with `writing()`; a value read while a write runs
is returned but not kept, so a kept value is never older than the last write.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")
MAX_KEPT = 512  # distinct reads kept at once; the next one past it starts afresh


class KeyValues:
    """Reads of one collection (by a hashable key), dropped by every write."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version = 0  # odd while a write runs
        self._kept: dict[Hashable, tuple[int, Any]] = {}

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Around every write of the collection (upserts, deletes, payload, indexes)."""
        with self._lock:
            self._version += 1
            self._kept.clear()
        try:
            yield
        finally:
            with self._lock:
                self._version += 1
                self._kept.clear()

    def get(self, key: Hashable, read: Callable[[], T]) -> T:
        """The kept value of `key`, else `read()` (kept if no write ran meanwhile)."""
        with self._lock:
            version = self._version
            kept = self._kept.get(key)
        if kept is not None and kept[0] == version:
            return kept[1]
        values = read()
        with self._lock:
            if version == self._version and version % 2 == 0:
                if len(self._kept) >= MAX_KEPT:
                    self._kept.clear()
                self._kept[key] = (version, values)
        return values
