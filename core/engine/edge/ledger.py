"""The write ledger: a collection's acknowledged point count, kept durably beside its shard.

After each acknowledged write the owner records `{"points": N, "sequence": S}` (the shard's
point count and the number of writes acknowledged) in `<shard>/scoperag-ledger.json`, under the
collection's write lock. Opening the collection compares the shard's count with it: fewer
points than acknowledged is a loss (e.g. a cut write-ahead log), refused with `LostWritesError`;
more is an unacknowledged write that made it, which is fine. A delete records the count it
may fall to before it runs, so a crash in the middle of one is not taken for a loss.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from scoperag.core.errors import ScoperagError

FILE = "scoperag-ledger.json"


class LostWritesError(ScoperagError):
    """A collection holds fewer points than its acknowledged writes left in it."""

    def __init__(self, collection: str, expected: int, found: int, path: Path) -> None:
        self.collection, self.expected, self.found = collection, expected, found
        super().__init__(
            f"Collection '{collection}' at {path} holds {found} points, but its acknowledged "
            f"writes left {expected}: {expected - found} acknowledged points are lost (its "
            "write-ahead log was cut or its files were replaced). It is not served. Restore the "
            "collection from an export or a backup of that folder, or ingest its sources again; "
            f"to keep what is left, run `scoperag check --accept-loss {collection}`. "
            "`scoperag check` lists every collection's state."
        )


class Ledger:
    """The ledger file of one shard folder; `record` is called with writes held off."""

    def __init__(self, shard: Path) -> None:
        self.path = shard / FILE
        self.lock = threading.Lock()  # held across a write and its record
        stored = read(self.path)
        self.sequence = int(stored.get("sequence", 0)) if stored else 0

    def expected(self) -> int | None:
        """The points the acknowledged writes left; None without a ledger (a store from before
        the ledger, whose first record sets it)."""
        stored = read(self.path)
        return None if stored is None else int(stored["points"])

    def check(self, collection: str, found: int, accept: bool = False) -> None:
        """`LostWritesError` if `found` is below what the ledger expects; records a missing one
        (or, with `accept`, any one: the user has seen the loss and keeps what is left)."""
        expected = None if accept else self.expected()
        if expected is None:
            self.record(found, count_write=False)
        elif found < expected:
            raise LostWritesError(collection, expected, found, self.path.parent.parent)

    def record(self, points: int, count_write: bool = True) -> None:
        """Write the ledger atomically and durably (temporary file, fsync, rename, fsync)."""
        self.sequence += count_write
        write_durably(self.path, {"points": points, "sequence": self.sequence})


def read(path: Path) -> dict[str, Any] | None:
    """The ledger in `path`, or None if there is none (an unreadable one counts as none)."""
    try:
        stored = json.loads(path.read_bytes())
        return (
            stored if isinstance(stored, dict) and isinstance(stored.get("points"), int) else None
        )
    except (OSError, ValueError):
        return None


def write_durably(path: Path, data: dict[str, Any]) -> None:
    """Replace `path` with `data` as JSON; on return the new file survives a power cut."""
    temporary = path.with_name(f"{path.name}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(descriptor, json.dumps(data, indent=2).encode())
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    os.replace(temporary, path)
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
