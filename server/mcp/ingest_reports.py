"""The per-file lines of a multi-file ingest result: every file ingested, and the first 100
skipped (the result's `skipped` counts them all), so a call over many bad files stays small."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from scoperag.core.config.ingest_limits import MAX_PROBLEMS

FILES_DESCRIPTION = (
    f"Each file ingested, and the first {MAX_PROBLEMS} skipped (`skipped` counts all)."
)


class FileOutcome(Protocol):
    @property
    def ok(self) -> bool: ...


def file_entries(reports: Sequence[FileOutcome]) -> list[dict[str, Any]]:
    """Each report's set fields, for the files ingested and the first skipped ones."""
    entries, skipped = [], 0
    for report in reports:
        if not report.ok:
            skipped += 1
            if skipped > MAX_PROBLEMS:
                continue
        entries.append({k: v for k, v in vars(report).items() if v not in (None, [])})
    return entries
