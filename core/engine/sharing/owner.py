"""The owner: the process holding the engine's lock runs every operation and serves the others
on a Unix socket; `owner.json` beside the lock names it while it listens (a crash leaves it stale:
the lock died with the process, so the next owner replaces it)."""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import socket
import socketserver
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scoperag.core.config.settings import Settings
from scoperag.core.engine.backend import VectorBackend
from scoperag.core.engine.disk_space import ensure_room
from scoperag.core.engine.operations import Operation
from scoperag.core.engine.sharing import wire
from scoperag.core.engine.sharing.dispatch import Dispatch
from scoperag.core.errors import ScoperagError

RECORD = "owner.json"


def engine_dir(settings: Settings) -> Path:
    """Where the embedded engine of `settings` keeps its files (and its lock)."""
    return settings.data_dir / ("edge" if settings.effective_backend == "edge" else "qdrant")


def socket_path(folder: Path) -> Path:
    """`folder/owner.sock`, or a short path in a private runtime directory if that is too long."""
    beside = folder / "owner.sock"
    if len(os.fsencode(str(beside))) <= 100:  # sun_path holds 108 bytes; keep a margin
        return beside
    private = Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir())
    private /= f"scoperag-{os.getuid()}"
    private.mkdir(mode=0o700, exist_ok=True)
    info = private.lstat()
    if info.st_uid != os.getuid() or info.st_mode & 0o077 or not private.is_dir():
        raise ScoperagError(
            f"{private} must be a directory of yours with mode 0700 (it holds the store's "
            "socket); remove it, or use a shorter SCOPERAG_DATA_DIR."
        )
    return private / f"{hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:16]}.sock"


def read_record(folder: Path) -> dict[str, Any] | None:
    """The owner record in `folder`, if there is a readable one."""
    try:
        return json.loads((folder / RECORD).read_text())
    except (OSError, ValueError):
        return None


class Owner(Dispatch, socketserver.ThreadingUnixStreamServer):
    """The open engine: its operations, run for this process and, on a thread per connection,
    for the others. Reads run in parallel on Edge (its calls release the GIL), writes one at a
    time; local mode has no locks of its own, so there every operation runs alone."""

    daemon_threads, block_on_close, request_queue_size = True, False, 128

    def __init__(self, engine: VectorBackend, folder: Path) -> None:
        Dispatch.__init__(self, engine)
        self.folder, self.stopped = folder, False
        self.leaving = False  # `leave_if_unused` said yes: no connection is served from then on
        self.writes, self.guard = threading.Lock(), threading.Lock()  # guard: clients, stopped
        self._reads = contextlib.nullcontext() if engine.name == "edge" else self.writes
        self.clients: dict[socket.socket, dict[str, Any]] = {}  # connection -> who attached
        # method -> what takes a connection over from its first request on (the resident
        # engine's sessions, `server/daemon/`), for a peer of this user only
        self.services: dict[str, Callable[[socketserver.StreamRequestHandler, dict], None]] = {}
        path = socket_path(folder)
        path.unlink(missing_ok=True)  # a crashed owner's
        previous = os.umask(0o177)  # the socket is made with mode 0600
        try:
            socketserver.ThreadingUnixStreamServer.__init__(self, str(path), _Connection)
        finally:
            os.umask(previous)
        started = datetime.now(UTC).isoformat(timespec="milliseconds")
        self.record = {"pid": os.getpid(), "command": " ".join(sys.argv), "socket": str(path)}
        self.record |= {"engine": engine.name, "engine_dir": str(folder), "started": started}
        threading.Thread(target=self.serve_forever, name="scoperag-owner", daemon=True).start()
        temporary = folder / f"{RECORD}.{os.getpid()}.tmp"
        temporary.write_text(json.dumps(self.record, indent=2))
        os.replace(temporary, folder / RECORD)
        atexit.register(self.stop)  # an exit without `close` still hands the store on

    @contextlib.contextmanager
    def holding(self, op: str, declared: Operation) -> Iterator[None]:
        """A read holds the read barrier (and, on local mode, the one lock); a write holds the
        write lock and needs room on the disk (`core.engine.disk_space`), but
        `delete_collection`, which only frees space."""
        if not declared.writes:
            with self._reads, self.engine.generations.reads.reading():
                self._refuse_if_stopped()
                yield
            return
        with self.writes:
            self._refuse_if_stopped()
            if op != "delete_collection":
                ensure_room(getattr(self.engine, "root", None))  # None: no files here to fill
            yield

    def _refuse_if_stopped(self) -> None:
        if self.stopped:
            raise ScoperagError("The store is being closed by the process that owned it.")

    def answer(self, connection: socket.socket, request: dict[str, Any]) -> dict[str, Any]:
        """The answer to a request from another process; every failure goes back as itself."""
        method, params = request.get("method"), request.get("params") or {}
        try:
            if method == "hello":  # who answers, and who asks (`scoperag status` lists them)
                if params.get("attach"):
                    with self.guard:
                        self.clients[connection] = {k: params.get(k) for k in ("pid", "command")}
                result = self.record
            elif method == "status":
                with self.guard:  # one entry per process
                    found = {about["pid"]: about for about in self.clients.values() if about}
                result = {**self.record, "attached": [*found.values()], "operations": self.counts}
            else:
                args, kwargs = wire.decode([params.get("args", []), params.get("kwargs", {})])
                result = wire.encode(self.run(str(method), args, kwargs))
            return {"id": request.get("id"), "result": result}
        except Exception as exc:
            return {"id": request.get("id"), "error": wire.error_data(exc)}

    def leave_if_unused(self) -> bool:
        """True, and no new connection served from now on, if no connection is open: checked
        under the same lock a connection takes to be counted, so a request is never accepted
        by an owner that has decided to leave."""
        with self.guard:
            self.leaving = self.leaving or not self.clients
            return self.leaving

    def stop(self) -> None:
        """Drop every connection (their processes take over at once), wait for a write in
        progress, and remove the record and socket (unless a later owner has replaced them)."""
        with self.guard:
            if self.stopped:
                return
            self.stopped = True
            ends = [self.socket, *self.clients]
        for end in ends:  # the listener's shutdown also wakes `serve_forever`
            with contextlib.suppress(OSError):  # already closed by the other side
                end.shutdown(socket.SHUT_RDWR)
        self.shutdown()
        self.server_close()
        self.writes.acquire()  # for good: no write starts after this
        self.engine.generations.reads.wait_for_earlier_reads()
        current = read_record(self.folder)
        if current is not None and current.get("pid") == os.getpid():
            (self.folder / RECORD).unlink(missing_ok=True)
            Path(self.record["socket"]).unlink(missing_ok=True)


class _Connection(socketserver.StreamRequestHandler):
    """One connection from another process: its requests answered in order."""

    server: Owner

    def handle(self) -> None:
        owner = self.server
        with owner.guard:
            if owner.stopped or owner.leaving:
                return
            owner.clients[self.request] = {}
        try:
            while (request := wire.receive(self.rfile)) is not None:
                service = owner.services.get(str(request.get("method")))
                if service is not None and _peer_uid(self.request) == os.getuid():
                    service(self, request)  # the connection is the service's until it ends
                    return
                wire.send(self.wfile, owner.answer(self.request, request))
        except (OSError, ValueError, wire.WireError):
            pass  # the other process went away mid-message, or did not speak this protocol
        finally:
            with owner.guard:
                owner.clients.pop(self.request, None)


def _peer_uid(connection: socket.socket) -> int | None:
    """The user id of the process at the other end of `connection` (Linux's SO_PEERCRED)."""
    try:
        credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
    except (OSError, AttributeError):
        return None
    return int.from_bytes(credentials[4:8], sys.byteorder)
