"""An Edge store on a file system this process may not write: no lock, and every collection
read from a private copy.

Qdrant Edge 0.9 has no read-only load: `EdgeShard.load` opens the shard's storage files for
writing ("Failed to open mmap payload storage: Read-only file system"). So a collection of a
read-only store is copied, on first use, into a private temporary folder removed at close, and
loaded from there. Copying costs time and room in proportion to the collection: a collection
over `COPY_LIMIT` bytes is refused with a message saying so (docs/engine.md).
"""

from __future__ import annotations

import errno
import shutil
import tempfile
from pathlib import Path
from typing import IO

from scoperag.core.engine.disk_space import ensure_room
from scoperag.core.errors import ScoperagError

COPY_LIMIT = 1 << 30  # bytes of one collection's shard copied for reading
_NOT_WRITABLE = (errno.EROFS, errno.EACCES, errno.EPERM)


def lock_file(root: Path) -> IO[str] | None:
    """`root/.lock` opened for locking, or None when `root` exists but may not be written."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        return (root / ".lock").open("a")
    except OSError as exc:
        if exc.errno in _NOT_WRITABLE and root.is_dir():
            return None
        raise


class ReadableCopies:
    """Private copies of a read-only store's shards, in one temporary folder."""

    def __init__(self) -> None:
        self.folder: Path | None = None

    def of(self, collection: str, shard: Path) -> Path:
        """A loadable copy of `shard`; refused past `COPY_LIMIT`."""
        size = sum(path.stat().st_size for path in shard.rglob("*") if path.is_file())
        if size > COPY_LIMIT:
            raise ScoperagError(
                f"Collection '{collection}' at {shard} is on a read-only file system and holds "
                f"{size / 2**20:.0f} MiB: Qdrant Edge must open its files for writing, so "
                f"scoperag reads such a collection from a copy, up to {COPY_LIMIT // 2**20} MiB. "
                "Make the data dir writable, or copy it somewhere writable and point "
                "SCOPERAG_DATA_DIR at the copy."
            )
        if self.folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix="scoperag-read-only-"))
        ensure_room(self.folder, f"copy read-only collection '{collection}'")
        target = self.folder / collection / shard.name
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(shard, target)
        return target

    def remove(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None
