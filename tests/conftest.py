"""Shared fixtures: an isolated data dir per test, one loaded model per session, shared/data,
the profiles' stores built from it once per engine, and threads whose failures fail the test."""

from __future__ import annotations

import functools
import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# each process opens the store itself, module fixtures too (tests/test_daemon.py unsets it)
os.environ["SCOPERAG_IN_PROCESS"] = "1"

from fastmcp import FastMCP  # noqa: E402

from scoperag.core.config.settings import Settings  # noqa: E402
from scoperag.core.contracts.memory import MemoryPayload  # noqa: E402
from scoperag.core.embedding.embedders import Embedder  # noqa: E402
from scoperag.pipelines.book import Book, ingest_book, read_book  # noqa: E402
from scoperag.pipelines.memories import import_memories, make_memory, store_memories  # noqa: E402
from scoperag.server.runtime import Runtime  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
# ../shared/data beside the repository, or beside the folder of worktrees (/work/wt/<name>)
SHARED_DATA = next(
    (
        path
        for path in (REPO.parent / "shared" / "data", REPO.parents[1] / "shared" / "data")
        if path.is_dir()
    ),
    REPO.parent / "shared" / "data",
)


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own data and cache dirs, and no stray SCOPERAG_* settings."""
    for name in list(os.environ):
        if name.startswith("SCOPERAG_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("SCOPERAG_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SCOPERAG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SCOPERAG_IN_PROCESS", "1")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data; absent means skip, except under CI where it is a failure."""
    if not SHARED_DATA.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{SHARED_DATA} is missing: CI must run with shared/ beside the repo")
        pytest.skip(f"{SHARED_DATA} is not here; these tests need the shared real data")
    return SHARED_DATA


# Engines every store-backed test runs on (the conformance suite): the embedded engines, plus a
# Qdrant server when SCOPERAG_QDRANT_URL is set in the environment that starts pytest.
BACKENDS = ["local", "edge"]
SERVER_URL = os.environ.get("SCOPERAG_QDRANT_URL")
if SERVER_URL:
    BACKENDS.append("server")


class MemoEmbedder(Embedder):
    """The real model, with each distinct text embedded once per session.

    Every store-backed test runs once per engine; the second engine reuses the first one's
    vectors instead of spending minutes of CPU on the same texts.
    """

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self._memo: dict[str, list[float]] = {}

    def embed_texts(self, texts: list[str]) -> list[list[float]]:
        missing = list(dict.fromkeys(text for text in texts if text not in self._memo))
        if missing:
            self._memo.update(zip(missing, super().embed_texts(missing), strict=True))
        return [self._memo[text] for text in texts]


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The packaged MiniLM model, loaded once for the whole session."""
    return MemoEmbedder(Settings(data_dir=Path("/nonexistent-unused")))


@pytest.fixture(scope="session", params=BACKENDS)
def backend_name(request: pytest.FixtureRequest) -> str:
    """The engine under test; store-backed tests run once per engine."""
    return request.param


@pytest.fixture(scope="session")
def make_runtime(
    embedder: Embedder, backend_name: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[..., Runtime]]:
    """Factory of runtimes on fresh data dirs (on the engine under test) sharing one model."""
    opened: list[Runtime] = []

    def make(**settings: object) -> Runtime:
        settings.setdefault("data_dir", tmp_path_factory.mktemp("store"))
        if backend_name == "server":
            settings.setdefault("qdrant_url", SERVER_URL)
        else:
            settings.setdefault("backend", backend_name)
        runtime = Runtime(Settings(**settings), embedder=embedder)
        opened.append(runtime)
        return runtime

    yield make
    for runtime in opened:
        runtime.close()


# The stores of shared/data the profiles' tests search, each built once per engine.

BOOK_CHAPTERS = 3  # of Pride and Prejudice: 198 sentences, 50 chunks
PROBES = {  # created_at -> content: the first and last second of 2026-03-01 and its neighbours
    "2026-02-28T23:59:59Z": "Probe: the last second before March 2026 began.",
    "2026-03-01T00:00:00Z": "Probe: the very first second of the first of March 2026.",
    "2026-03-01T23:59:59Z": "Probe: the very last second of the first of March 2026.",
    "2026-03-02T00:00:00Z": "Probe: the first second of the second of March 2026.",
}


@pytest.fixture(scope="session")
def book_path(shared_data: Path) -> Path:
    return shared_data / "books" / "pg1342-pride-and-prejudice.txt"


@pytest.fixture(scope="session")
def book(book_path: Path) -> Book:
    return read_book(book_path, "pride", last_chapter=BOOK_CHAPTERS)


@pytest.fixture(scope="session")
def books_runtime(make_runtime: Callable[..., Runtime], book_path: Path) -> Runtime:
    """Chapters 1-3 ingested once per engine."""
    runtime = make_runtime(profiles=["books"])
    ingest_book(book_path, runtime.backend, runtime.embedder, "pride", last_chapter=BOOK_CHAPTERS)
    return runtime


@pytest.fixture(scope="session")
def pdf_runtime(make_runtime: Callable[..., Runtime], shared_data: Path) -> Runtime:
    """Every shared PDF ingested once per engine."""
    from scoperag.server.profiles.pdf.service import ingest_paths

    runtime = make_runtime(profiles=["pdf"])
    result = ingest_paths(runtime, [shared_data / "pdf"], None, None)
    assert result.ingested == len(list((shared_data / "pdf").glob("*.pdf"))) > 0
    assert result.skipped == 0
    return runtime


@pytest.fixture(scope="session")
def memories(shared_data: Path) -> list[MemoryPayload]:
    """What the memory store holds, as the pipeline reads it (the oracle of every test)."""
    raw = json.loads((shared_data / "memories" / "devbench_dataset.json").read_text())
    devbench = [
        make_memory(m["content"], m["tags"], m["memory_type"], m["created_at_iso"])
        for m in raw["memories"]
    ]
    probes = [
        make_memory(content, ["probe", "midnight"], "probe", created_at)
        for created_at, content in PROBES.items()
    ]
    return devbench + probes


@pytest.fixture(scope="session")
def memory_runtime(
    make_runtime: Callable[..., Runtime], shared_data: Path, memories: list[MemoryPayload]
) -> Runtime:
    """The devbench file imported and the probes stored, once per engine."""
    runtime = make_runtime(profiles=["memory"])
    report = import_memories(
        shared_data / "memories" / "devbench_dataset.json", runtime.backend, runtime.embedder
    )
    assert len(report.stored) == 30 and not report.skipped
    store_memories(runtime.backend, runtime.embedder, memories[30:])
    return runtime


@pytest.fixture(scope="session")
def memory_server(memory_runtime: Runtime) -> FastMCP:
    from scoperag.server.mcp.app import build_server

    return build_server(memory_runtime)


@pytest.fixture(scope="session")
def dnd_dir(shared_data: Path) -> Path:
    return shared_data / "dnd"


@pytest.fixture(scope="session")
def dnd_ingest(make_runtime: Callable[..., Runtime], dnd_dir: Path) -> tuple[Runtime, Any]:
    """The whole D&D data ingested once per engine (passing the parent folder of the documents)."""
    from scoperag.server.profiles.dnd.service import ingest_paths

    runtime = make_runtime(profiles=["dnd"])
    return runtime, ingest_paths(runtime, [dnd_dir], None)


@pytest.fixture
def cli_with_shared_model(embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    """The real `scoperag` CLI, with the session's loaded model instead of a second copy."""
    monkeypatch.setattr(
        "scoperag.server.runtime.Runtime", functools.partial(Runtime, embedder=embedder)
    )
    return CliRunner()


class Worker(threading.Thread):
    """A thread whose failure fails the test: `join` raises what its target raised, and an
    `AssertionError` if it is still running when `join`'s timeout has passed."""

    error: BaseException | None = None

    def run(self) -> None:
        try:
            super().run()
        except BaseException as exc:  # kept for `join`, which raises it in the test's thread
            self.error = exc

    def join(self, timeout: float | None = None) -> None:
        super().join(timeout)
        if self.is_alive():
            raise AssertionError(f"thread {self.name} still running after {timeout} s")
        if self.error is not None:
            raise self.error


@pytest.fixture
def worker() -> type[Worker]:
    """`Worker`: start a thread with `worker(target=...)`; its `join` raises its failure."""
    return Worker
