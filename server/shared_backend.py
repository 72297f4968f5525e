"""`SharedBackend`: a data dir's embedded engine, held here or reached through its owner.

The first process that needs the engine opens it (taking its lock) and serves it to the others
(`OwnerServer`); every other process forwards each operation to that owner (`EngineClient`).
Both run the same operations of `scoperag.core.engine_ops`, so results and errors are the same.
When the owner goes away, the next call of an attached process fails to reach it: that process
then takes the lock and serves (or connects to whoever did first), and the call is made once
more; operations are idempotent (upsert by id, delete by filter), so nothing is done twice.
"""

from __future__ import annotations

import abc
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from scoperag.core.backend import VectorBackend
from scoperag.core.collections import open_backend
from scoperag.core.engine_ops import BACKEND_OPS, LockedEngine
from scoperag.core.errors import ScoperagError, StoreLockedError
from scoperag.core.remote_backend import (
    EngineClient,
    OwnerStoppedError,
    OwnerUnreachableError,
    process_stopped,
)
from scoperag.core.settings import Settings
from scoperag.server.owner import OwnerServer, engine_dir, read_record

if TYPE_CHECKING:
    from scoperag.server.shared_vector_store import SharedVectorStore

TAKEOVER_SECONDS = 30.0  # how long to wait for a new owner to listen before giving up


class SharedBackend(VectorBackend):
    """Every `VectorBackend` operation, run here (owner) or in the owner process (attached)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.name = settings.effective_backend
        self.folder = engine_dir(settings)
        self._switch = threading.Lock()
        self._owner: OwnerServer | None = None
        self._client: EngineClient | None = None
        self._connect()

    @property
    def role(self) -> str:
        """`owner` if this process holds the engine, else `attached`."""
        return "owner" if self._owner is not None else "attached"

    def _connect(self) -> None:
        """Open the engine and serve it, or connect to the process that has it open."""
        deadline = time.monotonic() + TAKEOVER_SECONDS
        while True:
            try:
                engine = open_backend(self.settings)
            except StoreLockedError as locked:
                record = read_record(self.folder)
                if record is not None:
                    if process_stopped(record.get("pid")):
                        raise OwnerStoppedError(record) from None
                    try:
                        self._client = EngineClient(record)
                        return
                    except OwnerUnreachableError:
                        pass  # a stale record, or an owner that is starting up or going away
                if time.monotonic() > deadline:
                    raise locked
                time.sleep(0.05)
                continue
            try:
                self._owner = OwnerServer(LockedEngine(engine), self.folder)
            except BaseException:
                engine.close()
                raise
            return

    def _call(self, op: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run `op` where the engine is open; once more after a takeover if the owner left."""
        client = self._client
        try:
            return self._run(op, args, kwargs)
        except OwnerUnreachableError:
            if client is None:
                raise
            self._reconnect(client)
        return self._run(op, args, kwargs)

    def _run(self, op: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        owner, client = self._owner, self._client
        if owner is not None:
            return owner.engine.call(op, args, kwargs)
        if client is None:
            raise ScoperagError(f"The store at {self.folder} was closed in this process.")
        return client.call(op, args, kwargs)

    def _reconnect(self, failed: EngineClient) -> None:
        """Take over the store, or attach to its new owner; once per loss, whichever thread."""
        with self._switch:
            if self._client is not failed:
                return  # another thread has reconnected already (or the store was closed)
            self._client = None
            failed.close()
            self._connect()

    def vector_store(self, collection: str) -> SharedVectorStore:
        """LlamaIndex's vector store over the collection, its calls run where the engine is
        open (LlamaIndex is imported here, not for the tools' searches)."""
        from scoperag.server.shared_vector_store import SharedVectorStore

        return SharedVectorStore(collection, self._call)

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
            owner, client = self._owner, self._client
            self._owner = self._client = None
        if owner is not None:
            owner.stop()
            owner.engine.engine.close()
        if client is not None:
            client.close()


def _forward(op: str) -> Callable[..., Any]:
    def method(self: SharedBackend, *args: Any, **kwargs: Any) -> Any:
        return self._call(op, args, kwargs)

    method.__name__ = op.partition(".")[2]
    method.__doc__ = f"`{op}`, in the process that owns the engine."
    return method


for _name in BACKEND_OPS:  # one forwarder per operation of the table: new ones come for free
    setattr(SharedBackend, _name, _forward(f"backend.{_name}"))
abc.update_abstractmethods(SharedBackend)
