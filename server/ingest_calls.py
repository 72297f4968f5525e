"""MCP ingest calls: the work runs in a worker thread that stops between files once the call's
deadline has passed (SCOPERAG_INGEST_DEADLINE_SECONDS) or its client abandoned it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

import anyio

Result = TypeVar("Result")
StopReason = Callable[[], str | None]  # why to stop before the next file, or None to go on


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
                "(SCOPERAG_INGEST_DEADLINE_SECONDS); ingest the rest in another call"
            )
        return None


async def run_ingest(work: Callable[[StopReason], Result], deadline_seconds: float) -> Result:
    """`work(stop_reason)` in a worker thread. If the caller is cancelled, the work is told to
    stop and awaited (shielded), so nothing else writes to the engine while it winds down."""
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
