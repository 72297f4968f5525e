"""Shared fixtures: an isolated data dir per test, one loaded model per session, shared/data."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from scoperag.core.config.settings import Settings  # noqa: E402
from scoperag.core.embedding.embedders import Embedder  # noqa: E402
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


@pytest.fixture
def cli_with_shared_model(embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    """The real `scoperag` CLI, with the session's loaded model instead of a second copy."""
    monkeypatch.setattr(
        "scoperag.server.runtime.Runtime", functools.partial(Runtime, embedder=embedder)
    )
    return CliRunner()
