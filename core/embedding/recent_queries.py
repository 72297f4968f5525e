"""The vectors of the most recently asked query texts, so asking one again skips the model.

A page past the first repeats its query, and one question is often asked of several profiles
or with other filters: each would embed the same text again (most of a ranked call's time).
The model is deterministic, so a kept vector is the one the model would give. Bounded, least
recently used first out; each caller gets its own list.
"""

from __future__ import annotations

import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable

KEPT_QUERIES = 512  # 384-d vectors kept as doubles: about 1.6 MB


class RecentQueries:
    """`vector(text)` from the model the first time, from memory while the text is recent."""

    def __init__(self, embed: Callable[[str], list[float]], size: int = KEPT_QUERIES) -> None:
        self._embed = embed
        self._size = size
        self._kept: OrderedDict[str, array] = OrderedDict()
        self._lock = threading.Lock()

    def vector(self, text: str) -> list[float]:
        with self._lock:
            kept = self._kept.get(text)
            if kept is not None:
                self._kept.move_to_end(text)
                return kept.tolist()
        vector = self._embed(text)  # outside the lock: other threads' queries do not wait
        with self._lock:
            self._kept[text] = array("d", vector)  # exact: Python floats are doubles
            self._kept.move_to_end(text)
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
        return list(vector)
