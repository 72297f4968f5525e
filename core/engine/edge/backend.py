"""`VectorBackend` on Qdrant Edge: the Qdrant engine in-process, one Edge shard per collection.

Damaged files are errors naming the collection (`core.engine.store_check`).

Layout under the root directory (`<data dir>/edge`):

    .lock                       held (flock) while a process has the store open
    <collection>/collection.json   dimension, collection metadata (e.g. the embedder), whether
                                the shard keeps BM25 vectors, the name of its shard folder and
                                its payload indexes (rewritten when one is made, so whatever is
                                known of a collection per version of this file stays true)
    <collection>/shard/         the Edge shard (segments, WAL, payload indexes, HNSW); `reindex`
                                builds a new one beside it and switches collection.json over

One process at a time, as with qdrant-client's local mode: a second one gets `StoreLockedError`
(and reaches the store through the first, see `scoperag.core.engine.sharing`). Threads of the
owner share it: shards are loaded once under a lock; Edge's own calls are thread-safe.
"""

from __future__ import annotations

import copy
import fcntl
import json
import shutil
import threading
import uuid
from pathlib import Path
from typing import IO, Any

import qdrant_edge as edge
from qdrant_client import models

from scoperag.core.embedding.vector_check import check_points
from scoperag.core.engine.backend import VectorBackend
from scoperag.core.engine.collection_embedder import searchable
from scoperag.core.engine.disk_space import ensure_room
from scoperag.core.engine.edge import neighbours as edge_neighbours
from scoperag.core.engine.edge import search as edge_search
from scoperag.core.engine.edge.collection import EdgeCollection
from scoperag.core.engine.edge.ledger import Ledger, LostWritesError, write_durably
from scoperag.core.engine.edge.read_only import ReadableCopies, lock_file
from scoperag.core.engine.edge.shard_config import SCHEMAS, shard_config
from scoperag.core.engine.operations import EngineOperations, implemented
from scoperag.core.engine.search_request import SearchRequest, SearchResult
from scoperag.core.engine.store_check import CheckedShard, load_shard, read_record
from scoperag.core.engine.vector_names import DENSE_VECTOR
from scoperag.core.errors import ScoperagError, StoreLockedError

_METADATA = "collection.json"
_SHARD = "shard"
# the operations a collection's `EdgeCollection` runs as they are (the collection's name first)
ON_COLLECTION = ("scroll", "points", "points_page", "count", "facet", "key_values", "delete")


class CollectionExistsError(ScoperagError):
    def __init__(self, collection: str) -> None:
        super().__init__(f"Collection '{collection}' already exists.")


def _on_collection(backend: EdgeBackend, op: str, args: tuple, kwargs: dict[str, Any]) -> Any:
    collection = args[0] if args else kwargs.pop("collection")
    return getattr(backend.edge_collection(collection), op)(*args[1:], **kwargs)


@implemented(EngineOperations, _on_collection, ON_COLLECTION)
class EdgeBackend(VectorBackend):
    """Collections as Edge shards under one directory, opened on first use; the operations of
    `ON_COLLECTION` are its collections' own."""

    name = "edge"

    def __init__(self, root: Path, lock: IO[str] | None) -> None:
        self.root = root
        self._lock = lock
        self.read_only = lock is None  # `edge.read_only`: read from copies, refuse writes
        self._copies = ReadableCopies()
        self._loaded: dict[str, EdgeCollection] = {}
        self._loading = threading.Lock()
        self._records: dict[str, tuple[tuple[int, int, int], dict[str, Any]]] = {}

    @classmethod
    def open(cls, root: Path) -> EdgeBackend:
        """The store under `root`; `StoreLockedError` if another process has it open; read-only
        (no lock: nothing can change it) if `root` may not be written."""
        lock = lock_file(root)
        if lock is None:
            return cls(root, None)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            raise StoreLockedError(str(root)) from None
        return cls(root, lock)

    def _dir(self, collection: str) -> Path:
        if not collection or "/" in collection or collection.startswith("."):
            raise ScoperagError(
                f"Invalid collection name {collection!r}: use letters, digits, '-' and '_'."
            )
        return self.root / collection

    def edge_collection(self, collection: str) -> EdgeCollection:
        """The collection's engine operations on its shard, loaded on first use."""
        engine = self._loaded.get(collection)
        if engine is not None:
            return engine
        with self._loading:  # two threads must never load one shard twice
            if collection not in self._loaded:
                self._loaded[collection] = self._load(collection)
            return self._loaded[collection]

    def accept_loss(self, collection: str) -> int:
        """Serve a collection again after `LostWritesError`, keeping what it holds; its count."""
        with self._loading:
            if collection not in self._loaded:
                self._loaded[collection] = self._load(collection, accept_loss=True)
            return self._loaded[collection].client.info().points_count

    def _load(self, collection: str, accept_loss: bool = False) -> EdgeCollection:
        """Load the shard, checked for damage and against its ledger (`LostWritesError`)."""
        if not self.collection_exists(collection):
            raise ScoperagError(f"Collection '{collection}' does not exist.")
        record = self._record(collection)
        folder = self._dir(collection) / record.get("shard", _SHARD)
        if self.read_only:
            folder = self._copies.of(collection, folder)
        else:
            ensure_room(self.root, f"open collection '{collection}'")  # loading writes a WAL
        shard = load_shard(collection, folder, record["dimension"])  # checked first
        engine = self._on_shard(shard, collection, bool(record.get("keywords")), folder)
        try:
            engine.ledger.check(collection, engine.client.info().points_count, accept_loss)
        except LostWritesError:
            shard.close()  # not served: the next call checks again
            raise
        return engine

    def _on_shard(
        self, shard: edge.EdgeShard, collection: str, keywords: bool, folder: Path
    ) -> EdgeCollection:
        checked = CheckedShard(shard, collection, self._dir(collection))  # damage is an error
        hidden = lambda: self.generations.hidden(collection)  # noqa: E731
        return EdgeCollection(checked, collection, keywords, hidden, Ledger(folder))

    def _record(self, collection: str) -> dict[str, Any]:
        """collection.json, parsed once per version of the file (a read per query cost 0.3 ms).

        The file is only ever replaced whole (`write_durably`), so its inode, size and modification
        time identify a version: any rewrite, by this process or a tool working on the data dir
        while it was closed, is seen at the next call. Callers must not mutate the result.
        """
        path = self._dir(collection) / _METADATA
        stat = path.stat()
        version = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
        cached = self._records.get(collection)
        if cached is not None and cached[0] == version:
            return cached[1]
        record = read_record(collection, path)
        self._records[collection] = (version, record)
        return record

    def list_collections(self) -> list[str]:
        return sorted(path.parent.name for path in self.root.glob(f"*/{_METADATA}"))

    def collection_exists(self, collection: str) -> bool:
        return (self._dir(collection) / _METADATA).is_file()

    def create_collection(self, collection: str, dimension: int, metadata: dict[str, Any]) -> None:
        if self.collection_exists(collection):
            raise CollectionExistsError(collection)
        folder = self._dir(collection)
        shutil.rmtree(folder, ignore_errors=True)  # leftovers of an interrupted creation
        shard = edge.EdgeShard.create(str(folder / _SHARD), shard_config(dimension))
        self._loaded[collection] = self._on_shard(shard, collection, True, folder / _SHARD)
        record = {"dimension": dimension, "metadata": metadata, "keywords": True, "shard": _SHARD}
        write_durably(folder / _METADATA, record)
        self.generations.forget(collection)  # a new collection hides nothing

    def collection_metadata(self, collection: str) -> dict[str, Any]:
        return copy.deepcopy(self._record(collection)["metadata"])  # the cached one stays intact

    def has_keywords(self, collection: str) -> bool:
        return self.edge_collection(collection).keywords

    def add_keywords(self, collection: str) -> int:
        if self.has_keywords(collection):
            return 0
        record, old = self._record(collection), self.edge_collection(collection)
        folder, name = self._dir(collection), f"shard-{uuid.uuid4().hex[:8]}"
        for leftover in folder.glob("shard-*"):  # an interrupted reindex's unfinished copy
            shutil.rmtree(leftover)
        shard = edge.EdgeShard.create(str(folder / name), shard_config(record["dimension"]))
        new = self._on_shard(shard, collection, True, folder / name)
        for key, kind in self.payload_indexes(collection).items():
            shard.update(edge.UpdateOperation.create_field_index(key, SCHEMAS[kind]))
        copied = 0
        for page in old.points():
            ensure_room(self.root, f"copy the points of '{collection}' into a new shard")
            new.upsert_points(
                models.PointStruct(id=r.id, vector=r.vector, payload=r.payload) for r in page
            )
            copied += len(page)
        shard.flush()
        write_durably(folder / _METADATA, {**record, "keywords": True, "shard": name})  # the switch
        old.client.close()
        self._loaded[collection] = new
        shutil.rmtree(folder / record.get("shard", _SHARD))
        return copied

    def search(self, request: SearchRequest) -> SearchResult:
        if not searchable(self, request):
            return SearchResult(hits=[], exists=False, keywords=False)
        # the collection's filters hide what readers must not see
        return edge_search.search(self.edge_collection(request.collection), request)

    def neighbours(
        self, collection: str, flt: models.Filter | None, threshold: float, limit: int
    ) -> list[tuple[int | str, int | str, float]]:
        if not self.collection_exists(collection):
            return []
        return edge_neighbours.neighbours(self.edge_collection(collection), flt, threshold, limit)

    def update_collection_metadata(self, collection: str, changes: dict[str, Any]) -> None:
        path = self._dir(collection) / _METADATA
        stored = json.loads(path.read_text())
        stored["metadata"] = {**stored["metadata"], **changes}
        write_durably(path, stored)
        self.generations.forget(collection)  # a registry written through another process

    def payload_indexes(self, collection: str) -> dict[str, str]:
        schema = self.edge_collection(collection).client.info().payload_schema
        names = {kind: plain for plain, kind in SCHEMAS.items()}
        return {key: names[info.data_type] for key, info in schema.items()}

    def create_index(self, collection: str, key: str, schema: str) -> None:
        operation = edge.UpdateOperation.create_field_index(key, SCHEMAS[schema])
        self.edge_collection(collection).update(operation)
        indexes = self.payload_indexes(collection)
        write_durably(
            self._dir(collection) / _METADATA, {**self._record(collection), "indexes": indexes}
        )

    def delete_collection(self, collection: str) -> None:
        """Forget the metadata first (the collection is gone at once), then free the files."""
        with self._loading:
            engine = self._loaded.pop(collection, None)
        if engine is not None:
            engine.client.close()
        folder = self._dir(collection)
        (folder / _METADATA).unlink(missing_ok=True)
        self.generations.forget(collection)
        shutil.rmtree(folder, ignore_errors=True)

    def set_payload(self, collection: str, point_id: int | str, payload: dict[str, Any]) -> None:
        operation = edge.UpdateOperation.set_payload([point_id], payload)
        self.edge_collection(collection).update(operation)

    def upsert_points(self, collection: str, points: list[models.PointStruct]) -> None:
        engine = self.edge_collection(collection)
        check_points(points, DENSE_VECTOR, self._record(collection)["dimension"])
        engine.upsert_points(points)

    def close(self) -> None:
        for engine in self._loaded.values():
            engine.client.flush()
            engine.client.close()
        self._loaded.clear()
        self._copies.remove()
        if self._lock is not None:
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()
