"""Re-ingestion is atomic for readers on every engine: the old version or the new one, never a
mix, while a source is replaced and after an ingestion killed at any moment
(`core.engine.generations`)."""

from __future__ import annotations

import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo
from qdrant_client import models

from scoperag.core.contracts.books import COLLECTION
from scoperag.core.engine.generations import GENERATION_KEY, REGISTRY_KEY
from scoperag.pipelines.book import book_chunks, ingest_book, read_book
from scoperag.pipelines.store import stamped
from scoperag.retrievers.book_lookup import BookLookup
from scoperag.retrievers.filtered import FilteredRetriever
from scoperag.server.runtime import Runtime

if TYPE_CHECKING:
    from conftest import Worker

BOOK_ID = "pride"


def _visible(runtime: Runtime) -> tuple[int, set[str], int | None]:
    """What readers see: chunks counted, generations among the search hits, sentences listed."""
    backend = runtime.backend
    hits = FilteredRetriever(backend, runtime.embedder, COLLECTION, top_k=50).retrieve("Bennet")
    generations = {hit.node.metadata[GENERATION_KEY] for hit in hits}
    summary = BookLookup(backend).summary(BOOK_ID)
    return backend.count(COLLECTION, None), generations, summary and summary.sentences


def _version(runtime: Runtime, book_path: Path, last_chapter: int) -> list:
    """The embedded chunks of the first `last_chapter` chapters (not written)."""
    book = read_book(book_path, BOOK_ID, last_chapter=last_chapter)
    return list(book_chunks(book, runtime.embedder))


def _writer_gone(runtime: Runtime) -> None:
    """The registry's entries as a killed process leaves them: their writer's pid is gone."""
    ended = subprocess.Popen(["true"])
    ended.wait()
    registry = _engine(runtime).generations  # the registry where the engine is open
    writer = f"{socket.gethostname()}:{ended.pid}"
    entries = [
        entry.model_copy(update={"writer": writer}) for entry in registry.entries(COLLECTION)
    ]
    registry._save(COLLECTION, entries)


def _engine(runtime: Runtime) -> object:
    """The engine itself (the owner's, on the embedded engines)."""
    return getattr(runtime.backend, "engine", runtime.backend)


@contextmanager
def _killed_midway(runtime: Runtime, nodes: list) -> Iterator[None]:
    """Half of a new version written, then the ingestion abandoned as a kill leaves it: the
    registry says `writing`, no clean-up ran."""
    backend = runtime.backend
    replacement = backend.generations.replacing(COLLECTION, [BOOK_ID])
    generation = replacement.__enter__()
    backend.vector_store(COLLECTION).add(stamped(nodes[: len(nodes) // 2], generation))
    _writer_gone(runtime)
    yield


def test_a_kill_while_writing_leaves_the_old_version_whole(
    make_runtime: Callable[..., Runtime], book_path: Path
) -> None:
    """Regression: a kill in the write phase left 295 of 1,467 chunks listed as the whole book."""
    runtime = make_runtime(profiles=["books"])
    ingest_book(book_path, runtime.backend, runtime.embedder, BOOK_ID, last_chapter=2)
    before = _visible(runtime)
    assert before[0] > 0 and len(before[1]) == 1
    with _killed_midway(runtime, _version(runtime, book_path, 4)):
        assert _visible(runtime) == before
    data_dir = runtime.settings.data_dir
    runtime.close()
    reopened = make_runtime(profiles=["books"], data_dir=data_dir)
    assert _visible(reopened) == before  # the registry was persisted with the half version
    ingest_book(book_path, reopened.backend, reopened.embedder, BOOK_ID, last_chapter=4)
    clean = make_runtime(profiles=["books"])
    ingest_book(book_path, clean.backend, clean.embedder, BOOK_ID, last_chapter=4)
    after, expected = _visible(reopened), _visible(clean)
    assert (after[0], len(after[1]), after[2]) == (expected[0], 1, expected[2])
    assert reopened.backend.collection_metadata(COLLECTION)[REGISTRY_KEY] == []


def test_a_first_ingestion_killed_midway_lists_no_book(
    make_runtime: Callable[..., Runtime], book_path: Path
) -> None:
    runtime = make_runtime(profiles=["books"])
    ingest_book(book_path, runtime.backend, runtime.embedder, "other", last_chapter=1)
    with _killed_midway(runtime, _version(runtime, book_path, 2)):
        assert _visible(runtime)[2] is None
        assert list(BookLookup(runtime.backend).book_ids()) == ["other"]


def test_readers_during_a_replacement_see_one_whole_version(
    make_runtime: Callable[..., Runtime],
    book_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    worker: type[Worker],
) -> None:
    """A search, a count and the book listing taken while the new version is half written."""
    runtime = make_runtime(profiles=["books"])
    ingest_book(book_path, runtime.backend, runtime.embedder, BOOK_ID, last_chapter=2)
    before = _visible(runtime)
    store_type = type(runtime.backend.vector_store(COLLECTION))
    original_add = store_type.add
    half_written, resume = threading.Event(), threading.Event()

    def add_in_two_halves(self: object, nodes: list, **kwargs: object) -> list[str]:
        ids = original_add(self, nodes[: len(nodes) // 2])
        half_written.set()
        resume.wait(60)
        return ids + original_add(self, nodes[len(nodes) // 2 :])

    monkeypatch.setattr(store_type, "add", add_in_two_halves)
    writer = worker(
        target=ingest_book,
        args=(book_path, runtime.backend, runtime.embedder, BOOK_ID),
        kwargs={"last_chapter": 4},
    )
    writer.start()
    assert half_written.wait(120)
    during = _visible(runtime)
    resume.set()
    writer.join(120)
    after = _visible(runtime)
    assert during == before
    assert after[0] > before[0] and len(after[1]) == 1 and after[1] != before[1]


def test_a_kill_after_the_flip_shows_the_new_version_and_is_cleaned_next_time(
    make_runtime: Callable[..., Runtime], book_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = make_runtime(profiles=["books"])
    ingest_book(book_path, runtime.backend, runtime.embedder, BOOK_ID, last_chapter=1)
    backend = runtime.backend
    engine = type(_engine(runtime))
    real_delete = engine.delete

    class Killed(BaseException):
        pass

    def die_on_retire(self: object, collection: str, flt: models.Filter) -> None:
        if flt.must_not:  # the retirement of the old generation (after the flip)
            raise Killed
        real_delete(self, collection, flt)

    monkeypatch.setattr(engine, "delete", die_on_retire)
    with pytest.raises(Killed):
        ingest_book(book_path, backend, runtime.embedder, BOOK_ID, last_chapter=3)
    monkeypatch.setattr(engine, "delete", real_delete)
    clean = make_runtime(profiles=["books"])
    ingest_book(book_path, clean.backend, clean.embedder, BOOK_ID, last_chapter=3)
    expected = _visible(clean)
    assert _visible(runtime)[0::2] == expected[0::2]  # old points still stored, but hidden
    _writer_gone(runtime)
    assert backend.generations.recover(COLLECTION) == 1
    assert backend.count(COLLECTION, None) == expected[0]
    assert backend.collection_metadata(COLLECTION)[REGISTRY_KEY] == []


def _written(runtime: Runtime, source: str, nodes: list) -> tuple[str, object]:
    """A replacement of `source` begun and written, not yet committed: (generation, its end)."""
    replacement = runtime.backend.generations.replacing(COLLECTION, [source])
    generation = replacement.__enter__()
    copies = [node.model_copy(deep=True) for node in nodes]
    for node in copies:
        node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=source)
    runtime.backend.vector_store(COLLECTION).add(stamped(copies, generation))
    return generation, replacement


def _generations_of(runtime: Runtime, source: str) -> dict:
    flt = models.Filter(
        must=[models.FieldCondition(key="doc_id", match=models.MatchValue(value=source))]
    )
    counts = runtime.backend.facet(COLLECTION, GENERATION_KEY, flt, 10)
    return {str(generation).replace("-", ""): n for generation, n in counts.items()}  # local mode


def test_two_replacements_of_one_source_end_as_the_last_to_finish(
    make_runtime: Callable[..., Runtime], book_path: Path
) -> None:
    """Two ingestions of one source at once: readers see the old version, then the first to
    finish, then the last to finish, each whole; the first's clean-up keeps the second's points."""
    runtime = make_runtime(profiles=["books"])
    ingest_book(book_path, runtime.backend, runtime.embedder, BOOK_ID, last_chapter=1)
    old = _generations_of(runtime, BOOK_ID)
    nodes = _version(runtime, book_path, 2)
    first, first_end = _written(runtime, BOOK_ID, nodes)
    second, second_end = _written(runtime, BOOK_ID, nodes)
    assert _generations_of(runtime, BOOK_ID) == old
    first_end.__exit__(None, None, None)
    assert _generations_of(runtime, BOOK_ID) == {first: len(nodes)}
    second_end.__exit__(None, None, None)
    assert _generations_of(runtime, BOOK_ID) == {second: len(nodes)}
    assert runtime.backend.collection_metadata(COLLECTION)[REGISTRY_KEY] == []


def test_replacements_of_two_sources_at_once_keep_both(
    make_runtime: Callable[..., Runtime], book_path: Path
) -> None:
    runtime = make_runtime(profiles=["books"])
    ingest_book(book_path, runtime.backend, runtime.embedder, BOOK_ID, last_chapter=1)
    nodes = _version(runtime, book_path, 1)
    one, one_end = _written(runtime, "one", nodes)
    two, two_end = _written(runtime, "two", nodes)
    two_end.__exit__(None, None, None)
    one_end.__exit__(None, None, None)
    assert _generations_of(runtime, "one") == {one: len(nodes)}
    assert _generations_of(runtime, "two") == {two: len(nodes)}


def test_readers_never_see_nothing_nor_a_mix_while_two_writers_replace_a_source(
    make_runtime: Callable[..., Runtime], book_path: Path, worker: type[Worker]
) -> None:
    """Regression: a read that filtered by the registry as it was before a flip could run after
    the old points were deleted and find neither version. A change waits for such reads."""
    runtime = make_runtime(profiles=["books"])
    ingest_book(book_path, runtime.backend, runtime.embedder, BOOK_ID, last_chapter=1)
    nodes = _version(runtime, book_path, 1)
    seen: list[int] = []
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            seen.append(len(_generations_of(runtime, BOOK_ID)))

    def write() -> None:
        for _ in range(4):
            _, end = _written(runtime, BOOK_ID, nodes)
            end.__exit__(None, None, None)

    readers = [worker(target=read) for _ in range(2)]
    writers = [worker(target=write) for _ in range(2)]
    for thread in readers + writers:
        thread.start()
    for thread in writers:
        thread.join(300)
    done.set()
    for thread in readers:
        thread.join(60)
    assert seen and set(seen) == {1}
