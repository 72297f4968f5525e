"""Generations: re-ingesting a source swaps its old points for new ones atomically for readers.

Every point a pipeline writes carries the ingestion that wrote it (`ingest_id`) beside its
source (`doc_id`). A small registry in the collection's metadata lists the (sources,
generation) pairs readers must not see:

- `writing`: the new generation while it is being written (readers keep the old one);
- `retiring`: after the flip (one atomic metadata write), every other generation of those
  sources, until it is deleted.

Every read of every engine passes its filter through `with_hidden`: a search, a listing or a
count sees the old version or the new one, never a mix, also after a kill at any moment; a
killed ingestion's leftovers go at the collection's next write (`GenerationRegistry.recover`).
A change made once more after a takeover (`core.engine.sharing`) ends as the first did: `begin`
takes its id from the caller, the last commits are kept (`COMMITTED_KEY`), `abort` of a
generation already gone does nothing.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field
from qdrant_client import models

from scoperag.core.engine.operations import operation
from scoperag.core.errors import ScoperagError
from scoperag.core.filters.fields import narrowed

if TYPE_CHECKING:
    from scoperag.core.engine.operations import EngineOperations

GENERATION_KEY = "ingest_id"
SOURCE_KEY = "doc_id"  # where LlamaIndex's Qdrant payload layout keeps a node's ref_doc_id
REGISTRY_KEY = "scoperag_hidden"
COMMITTED_KEY = "scoperag_committed"  # the last generations committed, newest last
COMMITTED_KEPT = 64
STALE_AFTER = 24 * 3600  # an entry this old is a leftover whoever wrote it


class Hidden(BaseModel):
    """Points of `sources` readers must not see: generation `generation` while it is being
    written, or every other generation (except `keep_ids`) once it has replaced them."""

    sources: list[str]
    generation: str
    phase: Literal["writing", "retiring"]
    keep_ids: list[str] = Field(default_factory=list)
    spared: list[str] = Field(default_factory=list)  # generations being written it keeps
    writer: str = Field(default="", description="host:pid of the ingesting process.")
    started: float = Field(default=0.0, description="Unix time the ingestion began.")

    def abandoned(self) -> bool:
        """True if the process that wrote this entry is gone (or it is a day old)."""
        host, _, pid = self.writer.rpartition(":")
        if time.time() - self.started > STALE_AFTER or not pid.isdigit():
            return True
        if host != socket.gethostname():
            return False  # another machine's ingestion (a shared Qdrant server): not ours to end
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False

    def condition(self) -> models.Filter:
        """The points this entry hides, as one filter."""
        source = models.FieldCondition(key=SOURCE_KEY, match=models.MatchAny(any=self.sources))
        if self.phase == "writing":
            this = models.MatchValue(value=self.generation)
            return models.Filter(
                must=[source, models.FieldCondition(key=GENERATION_KEY, match=this)]
            )
        kept = models.MatchAny(any=[self.generation, *self.spared])
        keep = [models.HasIdCondition(has_id=self.keep_ids)] if self.keep_ids else []
        return models.Filter(
            must=[source], must_not=[models.FieldCondition(key=GENERATION_KEY, match=kept), *keep]
        )


def with_hidden(flt: models.Filter | None, hidden: Sequence[models.Filter]) -> models.Filter | None:
    """`flt` narrowed so no hidden point matches (unchanged when nothing is hidden).

    The one hook every read path calls: query, scroll, count and facet of every engine.
    """
    if not hidden:
        return flt
    return narrowed(flt, must_not=hidden)


class ReadBarrier:
    """Lets a registry change wait for the reads that began before it (and so may filter by
    the registry as it was): a read is never left seeing neither version, nor a mix."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._epoch = 0
        self._open: Counter[int] = Counter()  # reads in progress, by the epoch they began in

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._changed:
            epoch = self._epoch
            self._open[epoch] += 1
        try:
            yield
        finally:
            with self._changed:
                self._open[epoch] -= 1
                if not self._open[epoch]:
                    del self._open[epoch]
                    self._changed.notify_all()

    def wait_for_earlier_reads(self) -> None:
        with self._changed:
            self._epoch += 1
            self._changed.wait_for(lambda: min(self._open, default=self._epoch) >= self._epoch)


class Generations(ABC):
    """Begin, commit and abort generations; `replacing` runs an ingestion between them."""

    @operation(writes=True)
    @abstractmethod
    def begin(self, collection: str, sources: list[str], writer: str, generation: str) -> str:
        """Register `generation` of `sources`, hidden while it is written (kept as it is when
        registered already); its id."""

    @operation(writes=True)
    @abstractmethod
    def commit(self, collection: str, generation: str, keep_ids: list[str]) -> None:
        """Show `generation` and delete every other generation of its sources (but `keep_ids`
        and generations still being written), in one step for readers. Once more after it has
        succeeded, nothing changes."""

    @operation(writes=True)
    @abstractmethod
    def abort(self, collection: str, generation: str) -> None:
        """Delete what `generation` wrote and forget it (nothing to do if it is gone)."""

    @operation(writes=True)
    @abstractmethod
    def recover(self, collection: str) -> int:
        """Delete what ended ingestions left: generations whose writer is gone, and
        replacements whose commit was cut short (finished here); how many."""

    @contextmanager
    def replacing(
        self, collection: str, sources: Sequence[str], keep_ids: Sequence[str] = ()
    ) -> Iterator[str]:
        """Yields a new generation id for the caller to write `sources` under; on success the
        old generations (but `keep_ids`) are hidden in one step, then deleted; on failure the
        new points are. Readers see one complete version throughout."""
        writer = f"{socket.gethostname()}:{os.getpid()}"
        generation = self.begin(collection, list(sources), writer, uuid.uuid4().hex)
        try:
            yield generation
        except BaseException:
            self.abort(collection, generation)
            raise
        self.commit(collection, generation, list(keep_ids))


class GenerationRegistry(Generations):
    """The hidden entries of each collection of one backend, changed under one lock.

    On the embedded engines only the process that owns the engine changes the registry, so
    its cache is the truth. `fresh=True` (a Qdrant server, which other processes may write)
    re-reads the registry before every read and change: there two processes changing it at
    the same moment can still overwrite each other's entry.
    """

    def __init__(self, backend: EngineOperations, fresh: bool = False) -> None:
        self._backend = backend
        self._fresh = fresh
        self._cache: dict[str, list[Hidden]] = {}
        self._lock = threading.RLock()
        self.reads = ReadBarrier()  # reads of the owner's engine run inside `reads.reading()`

    def entries(self, collection: str) -> list[Hidden]:
        if self._fresh or collection not in self._cache:
            raw = self._backend.collection_metadata(collection).get(REGISTRY_KEY) or []
            self._cache[collection] = [Hidden.model_validate(entry) for entry in raw]
        return self._cache[collection]

    def hidden(self, collection: str) -> list[models.Filter]:
        """Conditions of the points readers of `collection` must not see."""
        known = self._fresh or collection in self._cache
        if not known and not self._backend.collection_exists(collection):
            return []
        return [entry.condition() for entry in self.entries(collection)]

    def visible(self, collection: str, flt: models.Filter | None) -> models.Filter | None:
        return with_hidden(flt, self.hidden(collection))

    def forget(self, collection: str) -> None:
        """Drop the cached registry (the collection's metadata was written anew)."""
        self._cache.pop(collection, None)

    def _save(self, collection: str, entries: list[Hidden], committed: str = "") -> None:
        """One atomic metadata write: the registry switches as a whole or not at all (with
        `committed` added to the generations committed)."""
        changes: dict[str, object] = {REGISTRY_KEY: [entry.model_dump() for entry in entries]}
        if committed:
            done = [g for g in self.committed(collection) if g != committed] + [committed]
            changes[COMMITTED_KEY] = done[-COMMITTED_KEPT:]
        self._backend.update_collection_metadata(collection, changes)
        self._cache[collection] = entries

    def committed(self, collection: str) -> list[str]:
        """The last generations committed in `collection`, newest last."""
        return list(self._backend.collection_metadata(collection).get(COMMITTED_KEY) or [])

    def _finish(self, collection: str, retiring: Hidden) -> None:
        """Delete the generations `retiring` hides, then forget it, recorded as committed."""
        self._backend.delete(collection, retiring.condition())
        entries = [entry for entry in self.entries(collection) if entry != retiring]
        self._save(collection, entries, committed=retiring.generation)

    def _replace_entry(self, collection: str, old: Hidden | None, new: Hidden | None) -> None:
        entries = [entry for entry in self.entries(collection) if entry != old]
        self._save(collection, entries + ([new] if new else []))

    def _entry(self, collection: str, generation: str) -> Hidden:
        for entry in self.entries(collection):
            if entry.generation == generation and entry.phase == "writing":
                return entry
        raise ScoperagError(
            f"Generation {generation!r} of collection '{collection}' is not being written "
            "(its writer was taken for dead and its points deleted); ingest the source again."
        )

    def recover(self, collection: str) -> int:
        with self._lock:
            leftovers = [
                entry
                for entry in self.entries(collection)
                if entry.abandoned() or (entry.phase == "retiring" and not self._fresh)
            ]
            for entry in leftovers:
                if entry.phase == "retiring":
                    self._finish(collection, entry)
                else:
                    self._backend.delete(collection, entry.condition())
                    self._replace_entry(collection, entry, None)
        return len(leftovers)

    def _find(self, collection: str, generation: str) -> Hidden | None:
        return next((e for e in self.entries(collection) if e.generation == generation), None)

    def begin(self, collection: str, sources: list[str], writer: str, generation: str) -> str:
        with self._lock:
            if self._find(collection, generation) is not None:
                return generation  # made once more after a takeover: registered already
            self.recover(collection)
            writing = Hidden(
                sources=sources,
                generation=generation,
                phase="writing",
                writer=writer,
                started=time.time(),
            )
            self._replace_entry(collection, None, writing)
            self.reads.wait_for_earlier_reads()  # none may see the new points unhidden
        return writing.generation

    def commit(self, collection: str, generation: str, keep_ids: list[str]) -> None:
        with self._lock:
            found = self._find(collection, generation)
            if found is None and generation in self.committed(collection):
                return  # made once more after a takeover: committed already
            if found is not None and found.phase == "retiring":  # cut short after the flip
                self.reads.wait_for_earlier_reads()
                self._finish(collection, found)
                return
            writing = self._entry(collection, generation)
            others = [  # generations of these sources still being written keep their points
                entry.generation
                for entry in self.entries(collection)
                if entry.phase == "writing"
                and entry.generation != generation
                and set(entry.sources) & set(writing.sources)
            ]
            retiring = writing.model_copy(
                update={"phase": "retiring", "keep_ids": keep_ids, "spared": others}
            )
            self._replace_entry(collection, writing, retiring)  # the flip
            self.reads.wait_for_earlier_reads()  # none may still read the old version
            self._finish(collection, retiring)

    def abort(self, collection: str, generation: str) -> None:
        with self._lock:
            writing = self._find(collection, generation)
            if writing is None or writing.phase != "writing":
                return  # aborted already, or taken for dead and deleted by `recover`
            self._backend.delete(collection, writing.condition())
            self._replace_entry(collection, writing, None)
