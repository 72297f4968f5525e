"""A warm-up that loads the handlers (`server/mcp/service_locator.py`) early in the background.

A profile's handlers (`module:Class(runtime)`) pull in the engine (qdrant-client too on local
mode or a server, and Edge searches too: filters are `qdrant_client.models`; the searches reach
the engine without LlamaIndex: `retrievers/searches.py`, `core/engine/node_payload.py`,
`postprocessors/sentence_runs.py`; ingestion loads it), and the query path the
embedding model: seconds of imports that `initialize` and `tools/list` must not wait for.
`serve` starts `start_warm_up` as soon as the server is built: a daemon thread that waits until
the client has its tool list (or `LIST_GRACE_SECONDS`: both run on the same interpreter lock, so
warming up earlier would slow `tools/list` down) and a moment more for a call sent straight
after it, then imports the handlers' modules and loads and warms the model. A call that arrives
meanwhile waits only for what it needs: the handlers (one import at a time, `IMPORTING`), and
the model if it embeds (about 0.4 s: one text is embedded by onnxruntime,
`core/embedding/onnx_encoder.py`; the batch session loads on the first batch), told so by a
progress notification (`StartUpMiddleware`).
"""

from __future__ import annotations

import contextlib
import importlib
import threading
import time
from typing import Any

from fastmcp.server.middleware import Middleware, MiddlewareContext

from scoperag.server.mcp.service_locator import HANDLER_MODULES, IMPORTING
from scoperag.server.runtime import Runtime

# arguments whose text a call embeds: such a call waits for the model
EMBEDDED_ARGUMENTS = ("query", "quote")
LOADING_NOTICE = "loading the embedding model (first call after start-up); the answer follows"
LIST_GRACE_SECONDS = 1.0  # the warm-up starts at the latest this long after the server is built
# after `tools/list`, a call the client sends straight away imports its own handler first: an
# import cannot be interrupted, and the warm-up's first (another profile's) may take seconds
FIRST_CALL_SECONDS = 0.25


def _give_way(runtime: Runtime) -> None:
    """Wait while tool calls run: they share the interpreter lock with the warm-up."""
    time.sleep(0.005)  # a first call waiting for its handler takes `IMPORTING` now
    while runtime.calls_running:
        time.sleep(0.01)


def _warm_up(runtime: Runtime, listed: threading.Event) -> None:
    if listed.wait(LIST_GRACE_SECONDS):
        time.sleep(FIRST_CALL_SECONDS)
    for module in list(HANDLER_MODULES):
        _give_way(runtime)
        with IMPORTING:
            importlib.import_module(module)
    _give_way(runtime)
    # Meanwhile a call that embeds loads the model itself; a failure here is reported by the
    # first call that needs the model.
    with contextlib.suppress(Exception):
        runtime.embedder.backend.embed_query("warm-up")  # loaded here, first-call costs paid


def start_warm_up(runtime: Runtime) -> threading.Thread:
    """Import the handlers, then load the model, in a daemon thread started now, which first
    waits for the client's `tools/list` (at most `LIST_GRACE_SECONDS`)."""
    thread = threading.Thread(
        target=_warm_up, args=(runtime, runtime.tools_listed), name="scoperag-warm-up", daemon=True
    )
    thread.start()
    return thread


class StartUpMiddleware(Middleware):
    """Marks the first `tools/list` answered (the warm-up's cue), counts the calls running (the
    warm-up gives way to them), and gives a call that will wait for the model still loading a
    progress notification saying so (when the client asked for progress)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    async def on_list_tools(self, context: MiddlewareContext, call_next: Any) -> Any:
        tools = await call_next(context)
        self.runtime.tools_listed.set()
        return tools

    async def on_call_tool(self, context: MiddlewareContext, call_next: Any) -> Any:
        arguments = context.message.arguments or {}
        embeds = any(arguments.get(name) for name in EMBEDDED_ARGUMENTS)
        if embeds and not self.runtime.embedder.loaded and context.fastmcp_context:
            await context.fastmcp_context.report_progress(0, None, LOADING_NOTICE)
        self.runtime.calls_running += 1  # on the event loop's thread only
        try:
            return await call_next(context)
        finally:
            self.runtime.calls_running -= 1
