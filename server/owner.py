"""The owner side: serve the open engine to the data dir's other processes on a Unix socket.

The owner is the process holding the engine's lock (Edge: an flock on `<data dir>/edge/.lock`;
local mode: qdrant-client's lock). It serves `engine_service` over streamable HTTP on a Unix
domain socket (mode 0600) beside the lock, `owner.sock`; where that path would pass the 108-byte
limit of socket paths, under a 0700 directory of the temp dir named by a hash of the engine dir.
`owner.json` beside the lock records the socket, the pid and the command; it is written once
the socket listens, and a later owner replaces it (a crashed owner's record and socket are
stale: the lock died with the process, so the next owner removes them).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from scoperag.core.engine_ops import LockedEngine
from scoperag.core.errors import ScoperagError
from scoperag.core.settings import Settings

RECORD = "owner.json"
_SOCKET_NAME = "owner.sock"
_MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes with the final NUL; keep a margin
_START_SECONDS = 10.0


def engine_dir(settings: Settings) -> Path:
    """Where the embedded engine of `settings` keeps its files (and its lock)."""
    return settings.data_dir / ("edge" if settings.effective_backend == "edge" else "qdrant")


def socket_path(folder: Path) -> Path:
    """`folder/owner.sock`, or a short path in a private temp directory if that one is too long."""
    beside = folder / _SOCKET_NAME
    if len(os.fsencode(str(beside))) <= _MAX_SOCKET_PATH:
        return beside
    private = Path(tempfile.gettempdir()) / f"scoperag-{os.getuid()}"
    private.mkdir(mode=0o700, exist_ok=True)
    info = private.stat()
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise ScoperagError(
            f"{private} must belong to you with mode 0700 (it holds the store's socket); "
            "remove it, or use a shorter SCOPERAG_DATA_DIR."
        )
    digest = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:16]
    return private / f"{digest}.sock"


def read_record(folder: Path) -> dict[str, Any] | None:
    """The owner record in `folder`, if there is a readable one."""
    try:
        return json.loads((folder / RECORD).read_text())
    except (OSError, ValueError):
        return None


def _listen(path: Path) -> socket.socket:
    """A Unix socket at `path` that only this user can connect to (a stale file is replaced)."""
    path.unlink(missing_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    previous = os.umask(0o177)
    try:
        listener.bind(str(path))
    finally:
        os.umask(previous)
    os.chmod(path, 0o600)
    listener.listen(128)
    return listener


class OwnerServer:
    """The engine service on the owner's socket, run by uvicorn in a daemon thread."""

    def __init__(self, engine: LockedEngine, folder: Path) -> None:
        import uvicorn

        from scoperag.server.engine_service import build_engine_service

        self.engine = engine
        self.folder = folder
        self.socket = socket_path(folder)
        self.record = {
            "pid": os.getpid(),
            "command": " ".join(sys.argv),
            "socket": str(self.socket),
            "engine": engine.engine.name,
            "engine_dir": str(folder),
            "since": time.time(),
        }
        app = build_engine_service(engine, self.record).http_app(
            path="/mcp", stateless_http=True, json_response=True
        )
        config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=2)
        self._server = uvicorn.Server(config)
        listener = _listen(self.socket)
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self._server.serve(sockets=[listener])),
            name="scoperag-owner",
            daemon=True,
        )
        self._thread.start()
        deadline = time.monotonic() + _START_SECONDS
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                self.stop()
                raise ScoperagError(
                    f"The store's socket {self.socket} did not start listening; the store stays "
                    "closed. Check that the data dir is writable, then try again."
                )
            time.sleep(0.01)
        temporary = folder / f"{RECORD}.{os.getpid()}.tmp"
        temporary.write_text(json.dumps(self.record, indent=2))
        os.replace(temporary, folder / RECORD)

    def stop(self) -> None:
        """Stop listening and remove the record and socket (if a later owner has not)."""
        self._server.should_exit = True
        self._thread.join(5)
        current = read_record(self.folder)
        if current is not None and current.get("pid") == os.getpid():
            (self.folder / RECORD).unlink(missing_ok=True)
            self.socket.unlink(missing_ok=True)
