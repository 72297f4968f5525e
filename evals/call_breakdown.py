"""Where one tool call's time goes, besides `bench_timing`'s clock: the handler's own time (so
MCP = call time - handler time) and the number of engine operations a call asks for."""

from __future__ import annotations

import time
from typing import Any

from bench_timing import Clock, TimedBackend


class HandlerClock:
    """Seconds spent inside tool handlers: these methods of `service` (a class), patched."""

    def __init__(self, service: type, methods: list[str]) -> None:
        self.seconds = 0.0
        for name in methods:
            setattr(service, name, self._timed(getattr(service, name)))

    def _timed(self, method: Any) -> Any:
        def run(service: Any, params: Any) -> Any:
            began = time.perf_counter()
            try:
                return method(service, params)
            finally:
                self.seconds += time.perf_counter() - began

        return run


class CountedBackend(TimedBackend):
    """`TimedBackend` that also counts the engine operations (and vector stores) asked for: a
    measure of work that, unlike time, other processes on the machine do not change."""

    def __init__(self, backend: Any, clock: Clock) -> None:
        super().__init__(backend, clock)
        self.calls = 0

    def vector_store(self, collection: str) -> Any:
        self.calls += 1
        return super().vector_store(collection)

    def __getattr__(self, name: str) -> Any:
        attribute = super().__getattr__(name)
        if callable(attribute):
            self.calls += 1
        return attribute
