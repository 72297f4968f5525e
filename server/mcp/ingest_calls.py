"""MCP ingest calls: the work runs in a worker thread and stops at its next progress report once
the call's deadline has passed (SCOPERAG_INGEST_DEADLINE_SECONDS) or its client abandoned it.

Every profile's ingest tool (in its profile's `tools` module) runs through `run_with_progress`,
reads only below SCOPERAG_ALLOWED_DIRS (`scoperag.core.config.paths`), and sends its progress
to the client as MCP progress notifications.

Pipelines report progress between units they write whole (a file, a document, a batch), or
while embedding before they write, so stopping there leaves every source either replaced or
untouched (`scoperag.core.engine.generations`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import anyio
from fastmcp import Context

from scoperag.core.config.ingest_limits import IngestLimits, ingest_limits
from scoperag.core.config.paths import allowed_path, files_to_ingest, regular_file
from scoperag.core.config.settings import Settings
from scoperag.core.errors import ScoperagError
from scoperag.core.progress import Progress

Result = TypeVar("Result")
BELOW_ALLOWED = "below SCOPERAG_ALLOWED_DIRS"  # where an ingest tool's paths must be
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


async def run_with_progress(
    ctx: Context, work: Callable[[Progress], Result], settings: Settings
) -> Result:
    """`work(progress)` in a worker thread, under the settings' ingestion caps, opening files
    only below the allowed folders; each progress call is a notification to the client. The
    work stops at its next progress call or pipeline checkpoint (between pages, chunks and
    batches) once the deadline passed or the client cancelled."""

    def run(signal: StopSignal) -> Result:
        def progress(done: int, total: int, note: str = "") -> None:
            signal.check()
            anyio.from_thread.run(ctx.report_progress, done, total, note or None)

        with ingest_limits(IngestLimits.of(settings, settings.allowed_dirs, signal.check)):
            return work(progress)

    return await run_stoppable(run, settings.ingest_deadline_seconds)


def allowed_file(settings: Settings, raw: str) -> Path:
    """The regular file `raw` names below the allowed directories, or a `ScoperagError` saying
    why."""
    return regular_file(raw, settings.allowed_dirs, "path")


def allowed_folders(settings: Settings, raws: list[str]) -> list[Path]:
    """Folders below the allowed directories whose `*.json` files all are too (links checked)."""
    files_to_ingest(raws, settings.allowed_dirs, ".json", settings.ingest_max_files)
    return [allowed_path(raw, settings.allowed_dirs, "paths") for raw in raws]
