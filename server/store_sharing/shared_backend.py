"""`SharedBackend`: a data dir's embedded engine, held here or reached through its owner.

The first process that needs the engine opens it (taking its lock) and serves it to the others
(`OwnerServer`); every other process sends each operation to that owner over its socket, one
connection per calling thread. Both run the operations through the owner's `Engine`, so
results and errors are the same. When the owner goes away, the next call of an attached process
takes the lock and serves (or connects to whoever did first) and is made once more; operations
are idempotent (upsert by id, delete by filter), so nothing is done twice. A collection's
existence, embedder record and keyword vectors are read once per version of its
`collection.json` (Edge), not asked of the engine on every call.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from scoperag.core.backend import VectorBackend
from scoperag.core.collections import open_backend
from scoperag.core.errors import ScoperagError, StoreLockedError
from scoperag.core.generations import Generations
from scoperag.core.settings import Settings
from scoperag.server.store_sharing import wire
from scoperag.server.store_sharing.channel import Connection, OwnerUnreachableError
from scoperag.server.store_sharing.owner import Engine, OwnerServer, engine_dir, read_record

if TYPE_CHECKING:
    from qdrant_client import models

    from scoperag.core.search_request import SearchRequest, SearchResult

TAKEOVER_SECONDS = 30.0  # how long to wait for a new owner to listen before giving up


class _Generations(Generations):
    """The owner's generation registry, changed only there under its lock."""

    def __init__(self, backend: SharedBackend) -> None:
        self._backend = backend

    def begin(self, collection: str, sources: list[str], writer: str) -> str:
        return self._backend.call("generations.begin", collection, sources, writer)

    def commit(self, collection: str, generation: str, keep_ids: list[str]) -> None:
        self._backend.call("generations.commit", collection, generation, keep_ids)

    def abort(self, collection: str, generation: str) -> None:
        self._backend.call("generations.abort", collection, generation)

    def recover(self, collection: str) -> int:
        return self._backend.call("generations.recover", collection)


class SharedBackend(VectorBackend):
    """Every `VectorBackend` operation, run here (owner) or in the owner process (attached)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.name = settings.effective_backend
        self.folder = engine_dir(settings)
        self.generations = _Generations(self)  # type: ignore[misc]  # replaces the cached one
        self._switch = threading.Lock()
        self._owner: OwnerServer | None = None
        self._record: dict[str, Any] | None = None  # the owner's, while attached
        self._epoch = 0  # connections of an older epoch belong to a previous owner
        self._local = threading.local()
        self._cache: dict[tuple[str, str], tuple[Any, Any]] = {}
        self._open: set[Connection] = set()  # every thread's, closed with the backend
        self._switch_open = threading.Lock()
        self._connect()

    @property
    def role(self) -> str:
        """`owner` if this process holds the engine, else `attached`."""
        return "owner" if self._owner is not None else "attached"

    def _connect(self) -> None:
        """Open the engine and serve it, or attach to the process that has it open."""
        deadline = time.monotonic() + TAKEOVER_SECONDS
        while True:
            try:
                engine = open_backend(self.settings)
            except StoreLockedError as locked:
                record = read_record(self.folder)
                if record is not None:
                    try:
                        self._attach(Connection(record))
                        return
                    except OwnerUnreachableError:
                        pass  # a stale record, or an owner that is starting up or going away
                if time.monotonic() > deadline:
                    raise locked
                time.sleep(0.05)
                continue
            try:
                self._owner = OwnerServer(Engine(engine), self.folder)
            except BaseException:
                engine.close()
                raise
            return

    def _attach(self, connection: Connection) -> None:
        self._record = connection.owner
        self._epoch += 1
        self._keep(self._epoch, connection)

    def _connection(self) -> Connection:
        """This thread's connection to the current owner (opened on its first call)."""
        epoch, connection = getattr(self._local, "connection", (None, None))
        if connection is not None and epoch == self._epoch and not connection.broken:
            return connection
        if connection is not None:
            self._forget(connection)
        record = self._record
        if record is None:
            raise ScoperagError(f"The store at {self.folder} was closed in this process.")
        epoch, connection = self._epoch, Connection(record)
        self._keep(epoch, connection)
        return connection

    def _keep(self, epoch: int, connection: Connection) -> None:
        self._local.connection = (epoch, connection)
        with self._switch_open:
            self._open.add(connection)

    def _forget(self, connection: Connection) -> None:
        connection.close()
        with self._switch_open:
            self._open.discard(connection)

    def call(self, op: str, *args: Any, **kwargs: Any) -> Any:
        """Run `op` where the engine is open; once more after a takeover if the owner left."""
        epoch = self._epoch
        try:
            return self._run(op, args, kwargs)
        except OwnerUnreachableError:
            if self._owner is not None:
                raise
            self._reconnect(epoch)
        return self._run(op, args, kwargs)

    def _run(self, op: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        owner = self._owner
        if owner is not None:
            return owner.engine.run(op, args, kwargs)
        params = {"args": wire.encode(list(args)), "kwargs": wire.encode(kwargs)}
        return wire.decode(self._connection().call(op, params))

    def _reconnect(self, failed_epoch: int) -> None:
        """Take over the store, or attach to its new owner; once per loss, whichever thread."""
        with self._switch:
            if self._epoch != failed_epoch or (self._owner is None and self._record is None):
                return  # another thread has reconnected already (or the store was closed)
            self._epoch += 1
            self._connect()

    def _known(self, op: str, collection: str) -> Any:
        """`op` on `collection`, read once per version of its collection.json on Edge."""
        if self.name != "edge":
            return self.call(op, collection)
        try:
            info = (self.folder / collection / "collection.json").stat()
            version: Any = (info.st_ino, info.st_size, info.st_mtime_ns)
        except OSError:
            version = None
        if op == "collection_exists" and version is None:
            return False
        cached = self._cache.get((op, collection))
        if cached is not None and cached[0] == version:
            return copy.deepcopy(cached[1])
        value = self.call(op, collection)
        self._cache[(op, collection)] = (version, value)
        return copy.deepcopy(value)

    def collection_exists(self, collection: str) -> bool:
        return self._known("collection_exists", collection)

    def collection_metadata(self, collection: str) -> dict[str, Any]:
        return self._known("collection_metadata", collection)

    def has_keywords(self, collection: str) -> bool:
        return self._known("has_keywords", collection)

    def points(self, collection: str, batch_size: int = 512) -> Iterator[list[models.Record]]:
        return iter(self.call("points", collection, batch_size))

    # The other operations, as the owner's engine runs them (see `VectorBackend`).
    def list_collections(self, *a: Any, **k: Any) -> list[str]:
        return self.call("list_collections", *a, **k)

    def add_keywords(self, *a: Any, **k: Any) -> int:
        return self.call("add_keywords", *a, **k)

    def search(self, request: SearchRequest) -> SearchResult:
        return self.call("search", request)

    def create_collection(self, *a: Any, **k: Any) -> None:
        self.call("create_collection", *a, **k)

    def update_collection_metadata(self, *a: Any, **k: Any) -> None:
        self.call("update_collection_metadata", *a, **k)

    def payload_indexes(self, *a: Any, **k: Any) -> dict[str, str]:
        return self.call("payload_indexes", *a, **k)

    def create_index(self, *a: Any, **k: Any) -> None:
        self.call("create_index", *a, **k)

    def delete(self, *a: Any, **k: Any) -> None:
        self.call("delete", *a, **k)

    def delete_collection(self, *a: Any, **k: Any) -> None:
        self.call("delete_collection", *a, **k)

    def scroll(self, *a: Any, **k: Any) -> list[models.Record]:
        return self.call("scroll", *a, **k)

    def count(self, *a: Any, **k: Any) -> int:
        return self.call("count", *a, **k)

    def facet(self, *a: Any, **k: Any) -> dict[Any, int]:
        return self.call("facet", *a, **k)

    def key_values(self, *a: Any, **k: Any) -> list[Any]:
        return self.call("key_values", *a, **k)

    def set_payload(self, *a: Any, **k: Any) -> None:
        self.call("set_payload", *a, **k)

    def upsert_points(self, *a: Any, **k: Any) -> None:
        self.call("upsert_points", *a, **k)

    @property
    def engine(self) -> VectorBackend:
        """The open engine itself, without the sharing layer (benchmarks time it); owner only."""
        owner = self._owner
        if owner is None:
            raise ScoperagError(
                f"Only the process that owns the store at {self.folder} has its engine; this one "
                "reaches it through the owner (`scoperag status` names it)."
            )
        return owner.engine.engine

    def close(self) -> None:
        """Stop serving and release the engine (owner), or disconnect (attached)."""
        with self._switch:
            owner, self._owner, self._record = self._owner, None, None
            self._epoch += 1  # every thread's connection is dropped at its next call
        with self._switch_open:
            connections, self._open = self._open, set()
        for connection in connections:
            connection.close()
        if owner is not None:
            owner.stop()
            owner.engine.engine.close()
