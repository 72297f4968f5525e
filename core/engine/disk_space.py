"""The disk watermark: no engine write starts while the data dir's disk is nearly full.

Qdrant Edge writes through memory-mapped files created sparse (WAL segments and storage pages
of 32 MiB each) and its optimizer copies whole segments after an upsert: when the disk fills
under such a write, the process dies of SIGBUS with no message. So each write first checks the
free space under the data dir against a floor (`SCOPERAG_MIN_FREE_MB`) and is refused below it,
naming the data dir, the free space and the floor; reads go on, and writes work again as soon
as space is freed. Loading a shard replays and preallocates its WAL, so it is held to the same
floor.

Default floor, measured on tmpfs with 256-point upserts of 384-d vectors (evals/faults.py): one
upsert plus the optimizer's segment copy took up to 47 MiB at once, so a 32 MiB floor still ended
in SIGBUS while 48 MiB and more never did; 128 MiB keeps a margin for larger batches and segments.
"""

from __future__ import annotations

import os
from pathlib import Path

from scoperag.core.errors import InvalidParameterError, ScoperagError

MIN_FREE_ENV = "SCOPERAG_MIN_FREE_MB"
DEFAULT_MIN_FREE_MB = 128
MIB = 1024 * 1024


class DiskFullError(ScoperagError):
    """Free space under the data dir is below the floor: the write is refused, reads go on."""

    def __init__(self, path: Path, free: int, floor: int, action: str) -> None:
        self.path, self.free, self.floor = path, free, floor
        super().__init__(
            f"Refused to {action}: the disk holding {path} has {free / MIB:.1f} MiB free, below "
            f"the floor of {floor / MIB:.0f} MiB ({MIN_FREE_ENV}), under which the engine could "
            "meet a full disk mid-write and crash. Collections already open still answer reads; "
            f"free some space there (or lower {MIN_FREE_ENV}) and retry, no restart needed."
        )


def min_free_bytes() -> int:
    """The floor from `SCOPERAG_MIN_FREE_MB` (whole MiB, 0 turns the check off)."""
    given = os.environ.get(MIN_FREE_ENV)
    if given is None or not given.strip():
        return DEFAULT_MIN_FREE_MB * MIB
    try:
        value = int(given)
    except ValueError:
        value = -1
    if value < 0:
        raise InvalidParameterError(
            MIN_FREE_ENV, given, f"a whole number of MiB >= 0 (default {DEFAULT_MIN_FREE_MB})"
        )
    return value * MIB


def free_bytes(path: Path) -> int:
    """Bytes an unprivileged process may still write on the file system holding `path`."""
    stat = os.statvfs(path)
    return stat.f_bavail * stat.f_frsize


def ensure_room(path: Path | None, action: str = "write to the store") -> None:
    """Raise `DiskFullError` when the disk holding `path` has less free space than the floor
    (`path` None: the engine keeps no files here, e.g. a Qdrant server)."""
    if path is None:
        return
    floor = min_free_bytes()
    if floor == 0:
        return
    free = free_bytes(path)
    if free < floor:
        raise DiskFullError(path, free, floor, action)


def disk_full_message(path: Path) -> str:
    """What to say when a write under `path` met a full disk (ENOSPC)."""
    try:
        free = f"{free_bytes(path) / MIB:.1f} MiB free"
    except OSError:
        free = "free space unknown"
    return (
        f"The disk holding {path} is full ({free}): the store cannot be opened or written. "
        f"Free some space there and retry; writes need {min_free_bytes() // MIB} MiB free "
        f"({MIN_FREE_ENV})."
    )
