"""MCP ingest calls: the work runs in a worker thread and stops at its next progress report once
the call's deadline has passed (SCOPERAG_INGEST_DEADLINE_SECONDS) or its client abandoned it.

Pipelines report progress between units they write whole (a file, a document, a batch), or
while embedding before they write, so stopping there leaves every source either replaced or
untouched (`scoperag.core.generations`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

import anyio

from scoperag.core.errors import ScoperagError

Result = TypeVar("Result")
StopReason = Callable[[], str | None]  # why to stop now, or None to go on


class IngestStoppedError(ScoperagError):
    """An ingestion that stopped before its end (deadline, or the client went away)."""

    def __init__(self, reason: str) -> None:
        super().__init__(
            f"Ingestion stopped: {reason}. What was written before is stored (each source "
            "whole or not at all); call again to ingest the rest."
        )


class StopSignal:
    """Says why an ingestion should stop: the deadline passed, or the client went away."""

    def __init__(self, deadline_seconds: float) -> None:
        self._deadline_seconds = deadline_seconds
        self._end = time.monotonic() + deadline_seconds
        self._abandoned = threading.Event()

    def abandon(self) -> None:
        self._abandoned.set()

    def __call__(self) -> str | None:
        if self._abandoned.is_set():
            return "the client cancelled the call"
        if time.monotonic() > self._end:
            return (
                f"the call's deadline of {self._deadline_seconds:g} s passed "
                "(SCOPERAG_INGEST_DEADLINE_SECONDS)"
            )
        return None

    def check(self) -> None:
        """Raise `IngestStoppedError` if the work should stop now."""
        if reason := self():
            raise IngestStoppedError(reason)


async def run_stoppable(work: Callable[[StopSignal], Result], deadline_seconds: float) -> Result:
    """`work(signal)` in a worker thread. If the caller is cancelled, the work is told to stop
    and awaited (shielded), so nothing else writes to the engine while it winds down."""
    signal = StopSignal(deadline_seconds)
    finished = threading.Event()

    def run() -> Result:
        try:
            return work(signal)
        finally:
            finished.set()

    try:
        return await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        signal.abandon()
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(finished.wait)
        raise
