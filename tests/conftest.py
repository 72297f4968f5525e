"""Shared fixtures: an isolated data dir per test, one loaded model per session, shared/data."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from core.embeddings import Embedder  # noqa: E402
from core.settings import Settings  # noqa: E402
from server.runtime import Runtime  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = (REPO / ".." / "shared" / "data").resolve()


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own data dir and no stray SCOPERAG_* settings from the shell."""
    for name in list(os.environ):
        if name.startswith("SCOPERAG_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("SCOPERAG_DATA_DIR", str(tmp_path / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data; absent means skip, except under CI where it is a failure."""
    if not SHARED_DATA.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{SHARED_DATA} is missing: CI must run with shared/ beside the repo")
        pytest.skip(f"{SHARED_DATA} is not here; these tests need the shared real data")
    return SHARED_DATA


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The packaged MiniLM model, loaded once for the whole session."""
    return Embedder(Settings(data_dir=Path("/nonexistent-unused")))


@pytest.fixture(scope="session")
def make_runtime(
    embedder: Embedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[..., Runtime]]:
    """Factory of runtimes on fresh data dirs that share the session's model."""
    opened: list[Runtime] = []

    def make(**settings: object) -> Runtime:
        settings.setdefault("data_dir", tmp_path_factory.mktemp("store"))
        runtime = Runtime(Settings(**settings), embedder=embedder)
        opened.append(runtime)
        return runtime

    yield make
    for runtime in opened:
        runtime.close()
