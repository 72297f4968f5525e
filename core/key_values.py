"""`KeyValues`: the values each payload key holds, kept between a collection's writes.

Listing every value of a key (a facet over the whole index) costs milliseconds per thousand
values; the list changes only when points are written. Writes bracket themselves with
`writing()`; a list read while a write runs is returned but not kept, so the kept list is
never older than the last write.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


class KeyValues:
    """Per-key value lists of one collection, dropped by every write."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version = 0  # odd while a write runs
        self._kept: dict[str, tuple[int, list[Any]]] = {}

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

    def get(self, key: str, read: Callable[[], list[Any]]) -> list[Any]:
        """The kept list of `key`, else `read()` (kept if no write ran meanwhile)."""
        with self._lock:
            version = self._version
            kept = self._kept.get(key)
        if kept is not None and kept[0] == version:
            return kept[1]
        values = read()
        with self._lock:
            if version == self._version and version % 2 == 0:
                self._kept[key] = (version, values)
        return values
