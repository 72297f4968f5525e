"""The table of engine operations, and how one engine runs them for many threads at once.

An operation is `backend.<method>` (a `VectorBackend` method) or `store.<method>` (a method of
the LlamaIndex vector store of the collection given first). Every abstract method of
`VectorBackend` is an operation by construction, so methods added to the interface flow through
the owner without touching this file; an operation not listed in `READS` counts as a write.

Concurrency: reads run in parallel on Qdrant Edge (its calls release the GIL: two threads give
1.5x the exact queries/s of one on two cores); writes run one at a time. qdrant-client's local
mode is plain Python without locks, so there every operation runs one at a time.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

from scoperag.core.backend import VectorBackend
from scoperag.core.disk_space import ensure_room
from scoperag.core.errors import InvalidParameterError

_NOT_FORWARDED = {"vector_store", "close"}
BACKEND_OPS = sorted(set(VectorBackend.__abstractmethods__) - _NOT_FORWARDED)
STORE_OPS = ["add", "query", "delete", "delete_nodes", "get_nodes", "clear"]
OPERATIONS = [f"backend.{name}" for name in BACKEND_OPS] + [f"store.{name}" for name in STORE_OPS]
READS = {
    "backend.list_collections",
    "backend.collection_exists",
    "backend.collection_metadata",
    "backend.payload_indexes",
    "backend.scroll",
    "backend.points",
    "backend.count",
    "backend.facet",
    "backend.key_values",
    "backend.has_keywords",
    "backend.search",
    "store.query",
    "store.get_nodes",
}
FREES_SPACE = {"backend.delete_collection"}  # removes files only: allowed on a full disk


class LockedEngine:
    """Runs operations on one open engine: reads concurrently where it allows, writes alone."""

    def __init__(self, engine: VectorBackend) -> None:
        self.engine = engine
        self._writes = threading.Lock()
        self._parallel_reads = engine.name == "edge"

    def call(self, op: str, args: tuple[Any, ...] | list[Any], kwargs: dict[str, Any]) -> Any:
        """Run `op`; an iterator result (e.g. `points`) is read to the end inside the lock."""
        if op not in OPERATIONS:
            raise InvalidParameterError("op", op, ", ".join(OPERATIONS))
        if op in READS and self._parallel_reads:
            return _materialise(self._run(op, args, kwargs))
        with self._writes:
            if op not in READS | FREES_SPACE:  # disk watermark (core.disk_space)
                ensure_room(getattr(self.engine, "root", None))  # None: no files here to fill
            return _materialise(self._run(op, args, kwargs))

    def _run(self, op: str, args: tuple[Any, ...] | list[Any], kwargs: dict[str, Any]) -> Any:
        kind, _, name = op.partition(".")
        if kind == "store":
            collection, *rest = args
            return getattr(self.engine.vector_store(collection), name)(*rest, **kwargs)
        return getattr(self.engine, name)(*args, **kwargs)


def _materialise(result: Any) -> Any:
    return list(result) if isinstance(result, Iterator) else result
