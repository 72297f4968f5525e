"""Ingestions started from the UI: each runs its profile's ingest tool in a thread and keeps the
tool's progress notifications for the page to poll."""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from scoperag.core.errors import ScoperagError
from scoperag.server.tool_session import whole
from scoperag.server.ui.context import UiContext

KEPT = 50  # finished jobs remembered (the oldest are forgotten first)


@dataclass
class Job:
    """One tool call's progress: done of total, the last note, then its result or error."""

    id: int
    tool: str
    arguments: dict[str, Any]
    state: str = "running"  # running, done, failed
    done: float = 0
    total: float | None = None
    note: str = ""
    result: Any = None
    error: str | None = None
    started: float = field(default_factory=time.time)

    def view(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "tool": self.tool,
            "state": self.state,
            "done": whole(self.done),
            "total": whole(self.total),
            "note": self.note,
            "result": self.result,
            "error": self.error,
        }


class Jobs:
    """The UI's ingestions, by id."""

    def __init__(self) -> None:
        self._jobs: dict[int, Job] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def start(self, ctx: UiContext, tool: str, arguments: dict[str, Any]) -> Job:
        """Call `tool` in a new thread; its progress is kept on the returned job."""
        job = Job(next(self._ids), tool, arguments)
        with self._lock:
            self._jobs[job.id] = job
            for old in sorted(self._jobs)[:-KEPT]:
                if self._jobs[old].state != "running":
                    del self._jobs[old]

        async def progress(done: float, total: float | None, note: str | None) -> None:
            job.done, job.total, job.note = done, total, note or job.note

        def run() -> None:
            try:
                job.result = ctx.call(tool, arguments, progress)
                job.state = "done"
            except ScoperagError as exc:
                job.error, job.state = str(exc), "failed"
            except Exception as exc:  # shown on the page; the thread must not die silently
                job.error, job.state = f"{type(exc).__name__}: {exc}", "failed"

        threading.Thread(target=run, name=f"scoperag-ui-job-{job.id}", daemon=True).start()
        return job

    def get(self, job_id: int) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)
