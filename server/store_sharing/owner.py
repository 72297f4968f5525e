"""The owner side: serve the open engine to the data dir's other processes on a Unix socket.

The owner is the process holding the engine's lock (Edge: an flock on `<data dir>/edge/.lock`;
local mode: qdrant-client's lock). It listens on `owner.sock` beside the lock (mode 0600), or,
where that path would pass the 108-byte limit of socket paths, in a private directory of
`$XDG_RUNTIME_DIR` (else of the temp dir). Each connection gets a thread that answers
JSON-RPC requests (`wire`) one at a time. `owner.json` beside the lock records the socket, pid
and start time once the socket listens; a clean stop removes it, a crash leaves it stale (the
lock died with the process, so the next owner replaces it).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import socket
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scoperag.core.backend import VectorBackend
from scoperag.core.disk_space import ensure_room
from scoperag.core.errors import InvalidParameterError, ScoperagError
from scoperag.core.settings import Settings
from scoperag.server.store_sharing import wire

RECORD = "owner.json"
_MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes with the final NUL; keep a margin
READS = {
    "list_collections", "collection_exists", "collection_metadata", "payload_indexes",
    "scroll", "points", "count", "facet", "key_values", "has_keywords", "search",
}  # fmt: skip
WRITES = {
    "add_keywords", "create_collection", "update_collection_metadata", "create_index",
    "delete", "delete_collection", "set_payload", "upsert_points",
    "generations.begin", "generations.commit", "generations.abort", "generations.recover",
}  # fmt: skip
FREES_SPACE = {"delete_collection"}  # removes files only: allowed on a full disk


def engine_dir(settings: Settings) -> Path:
    """Where the embedded engine of `settings` keeps its files (and its lock)."""
    return settings.data_dir / ("edge" if settings.effective_backend == "edge" else "qdrant")


def socket_path(folder: Path) -> Path:
    """`folder/owner.sock`, or a short path in a private runtime directory if that is too long."""
    beside = folder / "owner.sock"
    if len(os.fsencode(str(beside))) <= _MAX_SOCKET_PATH:
        return beside
    runtime = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    private = Path(runtime) / f"scoperag-{os.getuid()}"
    private.mkdir(mode=0o700, exist_ok=True)
    info = private.lstat()
    if info.st_uid != os.getuid() or info.st_mode & 0o077 or not private.is_dir():
        raise ScoperagError(
            f"{private} must be a directory of yours with mode 0700 (it holds the store's "
            "socket); remove it, or use a shorter SCOPERAG_DATA_DIR."
        )
    digest = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:16]
    return private / f"{digest}.sock"


def read_record(folder: Path) -> dict[str, Any] | None:
    """The owner record in `folder`, if there is a readable one."""
    try:
        return json.loads((folder / RECORD).read_text())
    except (OSError, ValueError):
        return None


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Engine:
    """Runs operations on the open engine: reads in parallel on Edge (its calls release the
    GIL), writes one at a time; qdrant-client's local mode has no locks, so there every
    operation runs alone. `run` is the one place every write passes."""

    def __init__(self, engine: VectorBackend) -> None:
        self.engine = engine
        self.writes = threading.Lock()
        self._read_lock = contextlib.nullcontext() if engine.name == "edge" else self.writes
        self.counts: Counter[str] = Counter()  # operations run, by name (`scoperag status`)
        self._closing = False

    def run(self, op: str, args: list[Any] | tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run `op`; an iterator result (e.g. `points`) is read to the end inside the lock."""
        target = self._operation(op)
        self.counts[op] += 1
        if op in READS:
            with self._read_lock, self.engine.generations.reads.reading():
                return _materialised(self._open(target)(*args, **kwargs))
        with self.writes:
            if op not in FREES_SPACE:  # the disk watermark (core.disk_space)
                ensure_room(getattr(self.engine, "root", None))  # None: no files here to fill
            return _materialised(self._open(target)(*args, **kwargs))

    def _open(self, target: Callable[..., Any]) -> Callable[..., Any]:
        if self._closing:
            raise ScoperagError("The store is being closed by the process that owned it.")
        return target

    def close(self) -> None:
        """Refuse new operations, wait for those running, and keep writes locked for good."""
        self.writes.acquire()
        self._closing = True
        self.engine.generations.reads.wait_for_earlier_reads()

    def _operation(self, op: str) -> Callable[..., Any]:
        if op not in READS and op not in WRITES:
            raise InvalidParameterError("op", op, ", ".join(sorted(READS | WRITES)))
        kind, _, name = op.rpartition(".")
        if kind == "generations":
            return getattr(self.engine.generations, name)
        return getattr(self.engine, name)


def _materialised(result: Any) -> Any:
    return list(result) if isinstance(result, Iterator) else result


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
    """The engine served on the owner's socket: a thread accepting, a thread per connection."""

    def __init__(self, engine: Engine, folder: Path) -> None:
        self.engine = engine
        self.folder = folder
        self.socket = socket_path(folder)
        self.record = {
            "pid": os.getpid(),
            "command": " ".join(sys.argv),
            "socket": str(self.socket),
            "engine": engine.engine.name,
            "engine_dir": str(folder),
            "started": datetime.now(UTC).isoformat(timespec="milliseconds"),
        }
        self._clients: dict[socket.socket, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._stopped = False
        self._listener = _listen(self.socket)
        threading.Thread(target=self._accept, name="scoperag-owner", daemon=True).start()
        temporary = folder / f"{RECORD}.{os.getpid()}.tmp"
        temporary.write_text(json.dumps(self.record, indent=2))
        os.replace(temporary, folder / RECORD)
        atexit.register(self.stop)  # an exit without `close` still hands the store on

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return  # `stop` shut the listener
            with self._lock:
                if self._stopped:
                    connection.close()
                    return
                self._clients[connection] = {}
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        stream = connection.makefile("rwb")
        try:
            while (request := wire.receive(stream)) is not None:
                wire.send(stream, self._answer(connection, request))
        except (OSError, ValueError):
            pass  # the other process went away mid-message: nothing to answer
        finally:
            with self._lock:
                self._clients.pop(connection, None)
            stream.close()
            connection.close()

    def _answer(self, connection: socket.socket, request: dict[str, Any]) -> dict[str, Any]:
        method, params = request.get("method"), request.get("params") or {}
        try:
            if method == "hello":  # who answers, and who asks (`scoperag status` lists them)
                if params.get("attach"):
                    about = {"pid": params.get("pid"), "command": params.get("command")}
                    with self._lock:
                        self._clients[connection] = about
                return {"id": request.get("id"), "result": self.record}
            if method == "status":
                counts = self.engine.counts
                status = {**self.record, "attached": self.attached(), "operations": counts}
                return {"id": request.get("id"), "result": status}
            args, kwargs = (
                wire.decode(params.get("args", [])),
                wire.decode(params.get("kwargs", {})),
            )
            result = wire.encode(self.engine.run(str(method), args, kwargs))
            return {"id": request.get("id"), "result": result}
        except Exception as exc:  # every failure goes back to the caller as itself
            return {"id": request.get("id"), "error": wire.error_data(exc)}

    def attached(self) -> list[dict[str, Any]]:
        """The live processes attached to this owner, one entry per process."""
        with self._lock:
            found = {about["pid"]: about for about in self._clients.values() if about}
        return [about for pid, about in found.items() if process_alive(int(pid))]

    def stop(self) -> None:
        """Stop listening, drop every connection (their processes take over at once), wait for
        a write in progress, and remove the record and socket (if a later owner has not)."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            connections = list(self._clients)
        for end in (self._listener, *connections):
            with contextlib.suppress(OSError):  # already closed by the other side
                end.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        self.engine.close()
        current = read_record(self.folder)
        if current is not None and current.get("pid") == os.getpid():
            (self.folder / RECORD).unlink(missing_ok=True)
            self.socket.unlink(missing_ok=True)
