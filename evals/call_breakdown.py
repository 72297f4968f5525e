"""How much engine work one tool call asks for: `bench_timing`'s engine proxy, counting."""

from __future__ import annotations

from typing import Any

from bench_timing import Clock, TimedBackend


class CountedBackend(TimedBackend):
    """`TimedBackend` that also counts the engine operations (and vector stores) asked for: a
    measure of work that, unlike time, other processes on the machine do not change."""

    def __init__(self, backend: Any, clock: Clock) -> None:
        super().__init__(backend, clock)
        self.calls = 0

    def vector_store(self, collection: str) -> Any:
        self.calls += 1
        return super().vector_store(collection)

    def search(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return super().search(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        attribute = super().__getattr__(name)
        if callable(attribute):
            self.calls += 1
        return attribute
