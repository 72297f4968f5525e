"""`serve`'s warm-up: the model loads in the background; only calls that embed wait for it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import pytest
from fastmcp import Client

from scoperag.core.embedding import embedders as embeddings
from scoperag.core.embedding.embedders import Embedder
from scoperag.pipelines.memories import make_memory, store_memories
from scoperag.server.mcp.app import build_server
from scoperag.server.mcp.warm_up import LOADING_NOTICE, start_warm_up
from scoperag.server.runtime import Runtime


@pytest.fixture
def gated_model_load(monkeypatch: pytest.MonkeyPatch, embedder: Embedder) -> threading.Event:
    """The real model loader, held back until the returned event is set (the session's shared
    model loaded before)."""
    _ = embedder.backend
    gate = threading.Event()
    gate.loaders = []  # type: ignore[attr-defined]
    load = embeddings._FACTORIES["local"]

    def held_back(settings: object) -> object:
        gate.loaders.append(threading.current_thread().name)  # type: ignore[attr-defined]
        assert gate.wait(120), "the test never released the model load"
        return load(settings)

    monkeypatch.setitem(embeddings._FACTORIES, "local", held_back)
    return gate


async def test_query_less_answers_while_the_model_loads(
    make_runtime: Callable[..., Runtime], gated_model_load: threading.Event
) -> None:
    """A tag search answers before the model has loaded; a search with a query waits for the
    model, then answers (the first answer after launch must not wait for imports
    it does not need)."""
    writer = make_runtime(profiles=["memory"])
    memory = make_memory("The cache lives in a sqlite file.", tags=["storage"])
    store_memories(writer.backend, writer.embedder, [memory])
    writer.close()
    runtime = Runtime(writer.settings)  # a new process's runtime: its model not loaded yet
    warm_up = start_warm_up(runtime)
    try:
        async with Client(build_server(runtime)) as client:
            await client.list_tools()  # as clients do first: the warm-up's cue
            for _ in range(1200):  # the warm-up imports every handler, then loads the model
                if gated_model_load.loaders:  # type: ignore[attr-defined]
                    break
                await asyncio.sleep(0.1)
            assert gated_model_load.loaders == ["scoperag-warm-up"]  # type: ignore[attr-defined]
            tagged = await client.call_tool("search", {"tags": ["storage"], "mode": "tag"})
            assert "sqlite" in tagged.content[0].text
            assert not runtime.embedder.loaded  # answered without the model
            notices: list[str | None] = []

            async def on_progress(done: float, total: float | None, message: str | None) -> None:
                notices.append(message)

            searching = asyncio.create_task(
                client.call_tool("search", {"query": "cache file"}, progress_handler=on_progress)
            )
            for _ in range(100):
                if notices:
                    break
                await asyncio.sleep(0.1)
            assert notices == [LOADING_NOTICE]  # told why it waits
            assert not searching.done()  # waits for the model the warm-up is loading
            gated_model_load.set()
            found = await asyncio.wait_for(searching, timeout=120)
            assert "sqlite" in found.content[0].text
    finally:
        gated_model_load.set()
        warm_up.join(timeout=120)
        runtime.close()
