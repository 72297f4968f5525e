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
import logging
import os
import selectors
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
_log = logging.getLogger(__name__)


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
    """The engine service on the owner's socket, run by uvicorn in a daemon thread.

    The socket listens at once (a process connecting waits in its backlog); the service starts
    on the first connection, so a command that opens the store while nobody attaches
    (`scoperag list`, a short ingest) never imports FastMCP and uvicorn (about 1 s).
    """

    def __init__(self, engine: LockedEngine, folder: Path) -> None:
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
        self._server: Any = None  # the uvicorn server, once the first process connected
        self._starting = threading.Lock()
        self._stopping = False
        self._listener = _listen(self.socket)
        self._wake, self._waker = socket.socketpair()  # `stop` ends the wait for a connection
        self._thread = threading.Thread(
            target=self._serve_when_called, name="scoperag-owner", daemon=True
        )
        self._thread.start()
        temporary = folder / f"{RECORD}.{os.getpid()}.tmp"
        temporary.write_text(json.dumps(self.record, indent=2))
        os.replace(temporary, folder / RECORD)

    def _serve_when_called(self) -> None:
        """Wait for the first connection (or `stop`), then serve until `stop`."""
        with selectors.DefaultSelector() as waiting:  # epoll: any file descriptor number
            for end in (self._listener, self._wake):
                waiting.register(end, selectors.EVENT_READ)
            waiting.select()
        try:
            with self._starting:
                if self._stopping:
                    return
                self._server = _uvicorn_server(self.engine, self.record)
            asyncio.run(self._server.serve(sockets=[self._listener]))
        except Exception:
            _log.exception(
                "The store's service on %s stopped; the store stays open here.", self.socket
            )
            self._listener.close()  # a process connecting is refused at once, not left waiting

    def stop(self) -> None:
        """Stop listening and remove the record and socket (if a later owner has not)."""
        with self._starting:
            self._stopping = True
            if self._server is not None:
                self._server.should_exit = True
        self._waker.send(b"x")
        self._thread.join(5)
        for end in (self._listener, self._wake, self._waker):
            end.close()
        current = read_record(self.folder)
        if current is not None and current.get("pid") == os.getpid():
            (self.folder / RECORD).unlink(missing_ok=True)
            self.socket.unlink(missing_ok=True)


def _uvicorn_server(engine: LockedEngine, record: dict[str, Any]) -> Any:
    """uvicorn serving `engine_service` over streamable HTTP (stateless, JSON answers)."""
    import uvicorn

    from scoperag.server.engine_service import build_engine_service

    app = build_engine_service(engine, record).http_app(
        path="/mcp", stateless_http=True, json_response=True
    )
    return uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=2))
