"""sha256 digests of files, hashed once per file identity (path, size, mtime_ns).

The digests are remembered in a JSON file of the cache dir (`SCOPERAG_CACHE_DIR`), so a warm
start pays a `stat` per file; a cache that cannot be read or written only means hashing again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path

CACHE_FILE = "file-digests.json"


def sha256_of(path: Path) -> str:
    """The file's sha256, hex (about 0.1 s for 90 MB)."""
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


class DigestCache:
    """Digests by file identity, kept in `folder` (None: kept nowhere, every file hashed)."""

    def __init__(self, folder: Path | None) -> None:
        self.path = folder / CACHE_FILE if folder is not None else None
        self._entries: dict[str, dict] | None = None

    def digest(self, path: Path) -> str:
        """The file's sha256: remembered if the file is as it was when hashed, else hashed."""
        stat = path.stat()
        key = str(path.resolve())
        identity = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
        entry = self._load().get(key)
        if entry is not None and {k: entry.get(k) for k in identity} == identity:
            return entry["sha256"]
        found = sha256_of(path)
        self._load()[key] = {**identity, "sha256": found}
        self._save()
        return found

    def _load(self) -> dict[str, dict]:
        if self._entries is None:
            self._entries = {}
            if self.path is not None:
                try:
                    data = json.loads(self.path.read_text(encoding="utf-8"))
                    if isinstance(data, dict):
                        self._entries = {k: v for k, v in data.items() if isinstance(v, dict)}
                except (OSError, ValueError):
                    pass  # absent or unreadable: hashed again, then written anew
        return self._entries

    def _save(self) -> None:
        """Write the digests whole (a reader never sees half a file); a cache dir that cannot
        be written is left alone."""
        if self.path is None:
            return
        temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_text(json.dumps(self._entries, indent=1), encoding="utf-8")
            os.replace(temporary, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                temporary.unlink(missing_ok=True)
