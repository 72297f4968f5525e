"""`SharedBackend`: the embedded engine opened here (`Owner`), or reached through the process
that has it open; when that one goes away, a call takes over and is made once more (operations
are idempotent: upsert by id, delete by filter, and the generation changes of
`core.engine.generations`)."""

from __future__ import annotations

import contextlib
import copy
import threading
import time
from typing import Any

from scoperag.core.config.settings import Settings
from scoperag.core.engine.backend import VectorBackend
from scoperag.core.engine.collections import open_backend
from scoperag.core.engine.generations import Generations
from scoperag.core.engine.operations import EngineOperations, implemented
from scoperag.core.engine.sharing import wire
from scoperag.core.engine.sharing.channel import Connection, OwnerUnreachableError
from scoperag.core.engine.sharing.dispatch import Dispatch
from scoperag.core.engine.sharing.owner import Owner, engine_dir, read_record
from scoperag.core.errors import ScoperagError, StoreLockedError

TAKEOVER_SECONDS = 30.0  # how long to wait for a new owner to listen before giving up
# what a collection is (not what it holds): read once per version of its collection.json
DEFINITION = frozenset(
    {"collection_exists", "collection_metadata", "has_keywords", "payload_indexes"}
)


@implemented(EngineOperations, lambda backend, op, args, kwargs: backend.call(op, *args, **kwargs))
class SharedBackend(VectorBackend):
    """Every `EngineOperations` operation, run here (owner) or in the owner process (attached):
    each is `call(name, ...)`."""

    def __init__(self, settings: Settings) -> None:
        self.settings, self.name = settings, settings.effective_backend
        self.folder = engine_dir(settings)
        self.generations = _Generations(self)  # type: ignore[misc]  # replaces the cached one
        self._lock = threading.Lock()  # of the fields below but `_cache`
        self._owner: Dispatch | None = None
        self._record: dict[str, Any] | None = None  # the answering owner's, while attached
        self._connections: dict[int, Connection] = {}  # by calling thread; replaced on takeover
        self._cache: dict[tuple[str, str], tuple[Any, Any]] = {}
        self._open()

    @property
    def role(self) -> str:
        """`owner` if this process holds the engine, else `attached`."""
        return "owner" if self._owner is not None else "attached"

    @property
    def owner(self) -> Owner | None:
        """The server of the store's socket, if this process owns a store it may write."""
        return self._owner if isinstance(self._owner, Owner) else None

    def _open(self) -> None:
        """Open the engine and serve it, or attach to the process that has it open."""
        deadline = time.monotonic() + TAKEOVER_SECONDS
        while True:
            try:
                engine = open_backend(self.settings)
            except StoreLockedError:
                record = read_record(self.folder)
                with contextlib.suppress(OwnerUnreachableError):  # stale, starting or leaving
                    if record is not None:
                        connection = Connection(record)
                        self._record = connection.owner
                        self._connections = {threading.get_ident(): connection}
                        return
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
                continue
            if getattr(engine, "read_only", False):
                self._owner = Dispatch(engine, writable=False)
                return
            try:
                self._owner = Owner(engine, self.folder)
            except BaseException:
                engine.close()
                raise
            return

    def call(self, op: str, *args: Any, **kwargs: Any) -> Any:
        """Run `op` where the engine is open (a `DEFINITION` read once per version of it)."""
        if op in DEFINITION:
            return self._known(op, *args, **kwargs)
        return self._anywhere(op, args, kwargs)

    def _anywhere(self, op: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run `op` here or in the owner; once more after a takeover if the owner left."""
        connections = self._connections
        try:
            return self._run(op, args, kwargs)
        except OwnerUnreachableError:
            if self._owner is not None:
                raise
            with self._lock:  # the first thread to fail reconnects; the others use its work
                if self._connections is connections and self._record is not None:
                    self._close_connections()
                    self._open()
        return self._run(op, args, kwargs)

    def _run(self, op: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        owner = self._owner
        if owner is not None:
            return owner.run(op, args, kwargs)
        params = {"args": wire.encode(list(args)), "kwargs": wire.encode(kwargs)}
        return wire.decode(self._connection().call(op, params))

    def _connection(self) -> Connection:
        """This thread's connection to the current owner (opened on its first call)."""
        thread = threading.get_ident()
        connection = self._connections.get(thread)
        if connection is not None and not connection.broken:
            return connection
        with self._lock:
            if self._record is None:
                raise ScoperagError(f"The store at {self.folder} was closed in this process.")
            if connection is not None:
                connection.close()
            connection = self._connections[thread] = Connection(self._record)
        return connection

    def _close_connections(self) -> None:
        connections, self._connections = self._connections, {}
        for connection in connections.values():
            connection.close()

    def _known(self, op: str, collection: str) -> Any:
        """`op` on `collection`, read once per version of its collection.json on Edge (a
        collection re-created or re-written, e.g. by `add_keywords`, is a new version)."""
        if self.name != "edge":
            return self._anywhere(op, (collection,), {})
        try:
            info = (self.folder / collection / "collection.json").stat()
            version: Any = (info.st_ino, info.st_size, info.st_mtime_ns)
        except OSError:
            version = None
        if op == "collection_exists" and version is None:
            return False
        cached = self._cache.get((op, collection))
        if cached is None or cached[0] != version:
            answer = self._anywhere(op, (collection,), {})
            cached = self._cache[(op, collection)] = (version, answer)
        return copy.deepcopy(cached[1])

    @property
    def engine(self) -> VectorBackend:
        """The open engine itself, without the sharing layer; owner only."""
        if self._owner is None:
            raise ScoperagError(f"Only the process that owns the store at {self.folder} has it.")
        return self._owner.engine

    def close(self) -> None:
        """Stop serving and release the engine (owner), or disconnect (attached)."""
        with self._lock:
            owner, self._owner, self._record = self._owner, None, None
            self._close_connections()
        if owner is not None:
            owner.stop()
            owner.engine.close()


@implemented(
    Generations,
    lambda registry, op, args, kwargs: registry.call(f"generations.{op}", *args, **kwargs),
)
class _Generations(Generations):
    """The owner's generation registry, changed only there under its lock."""

    def __init__(self, backend: SharedBackend) -> None:
        self.call = backend.call
