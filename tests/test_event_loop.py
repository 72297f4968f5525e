"""No call blocks the event loop: a profile's handlers load in a worker thread on first use."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import anyio
import httpx
import pytest
from fastmcp import Client

from scoperag.server.http.app import build_http_app
from scoperag.server.mcp import warm_up
from scoperag.server.mcp.app import build_server
from scoperag.server.runtime import Runtime


class Loading:
    """`started` is set once a profile's handlers begin to load; the load then blocks its
    thread (the heavy imports, simulated) until `finish` is set, or for `LONGEST` seconds."""

    LONGEST = 60.0

    def __init__(self) -> None:
        self.started, self.finish = threading.Event(), threading.Event()


@pytest.fixture
def slow_loading(monkeypatch: pytest.MonkeyPatch) -> Loading:
    loading = Loading()
    real_import = importlib.import_module

    def import_module(name: str, package: str | None = None) -> ModuleType:
        if name.endswith(".service"):
            loading.started.set()
            loading.finish.wait(Loading.LONGEST)
        return real_import(name, package)

    monkeypatch.setattr(warm_up.importlib, "import_module", import_module)
    return loading


async def _while_loading(loading: Loading, call: Callable, other: Callable) -> bool:
    """Runs `call`, then `other` once loading began, and lets loading finish once `other` is
    done; True if `other` finished first (a blocked loop would answer it only after the load
    gave up waiting)."""
    done: list[str] = []

    async def first() -> None:
        await call()
        done.append("call")

    async def second() -> None:
        while not loading.started.is_set():
            await anyio.sleep(0.01)
        try:
            await other()
            done.append("other")
        finally:
            loading.finish.set()

    async with anyio.create_task_group() as group:
        group.start_soon(first)
        group.start_soon(second)
    return done[0] == "other"


async def test_healthz_answers_while_the_first_docs_search_loads(
    make_runtime: Callable[..., Runtime], slow_loading: Loading
) -> None:
    """Regression: the first call built its profile's handlers on the loop, stalling /healthz."""
    runtime = make_runtime(profiles=["docs"])
    app = build_http_app(runtime, build_server(runtime))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://test"
    ) as http:
        health: list[int] = []

        async def search() -> None:
            await http.post("/v2/docs/search/l0", json={"query": "install"})

        async def healthz() -> None:
            health.append((await http.get("/healthz")).status_code)

        assert await _while_loading(slow_loading, search, healthz)
    assert health == [200]


async def test_another_session_answers_while_the_first_ingest_loads(
    make_runtime: Callable[..., Runtime], slow_loading: Loading, tmp_path: Path
) -> None:
    runtime = make_runtime(profiles=["pdf"], allowed_dirs=[tmp_path])
    server = build_server(runtime)
    async with Client(server) as first, Client(server) as second:

        async def ingest() -> None:
            await first.call_tool("qdrant-ingest-pdf", {"paths": [str(tmp_path)]})

        async def list_tools() -> None:
            assert await second.list_tools()

        assert await _while_loading(slow_loading, ingest, list_tools)
