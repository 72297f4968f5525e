"""An in-process MCP session on its own event loop thread, callable from synchronous code: what
the Python API, the web UI and the CLI's `eval` call tools through.

The tools run exactly as for an MCP client (FastMCP's in-memory `Client`: same validation,
middleware and errors). The session's loop runs in a worker thread, so a call works the same
from a script and from a notebook cell, whose thread already runs an event loop.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from fastmcp import Client, FastMCP
from fastmcp.tools import Tool
from pydantic import BaseModel

from scoperag.core.errors import ScoperagError
from scoperag.core.progress import ProgressBar as Bar

T = TypeVar("T")
# receives (progress, total, message) of each progress notification of a call
ProgressHandler = Callable[[float, float | None, str | None], Awaitable[None]]
# the thread a session's loop runs in, and so its in-memory server
THREAD_NAME = "scoperag-tools"


class ToolCallError(ScoperagError):
    """A tool refused a call or failed: the message is the tool's own, as an MCP client sees it."""

    def __init__(self, tool: str, message: str) -> None:
        self.tool = tool
        super().__init__(message)


def result_value(tool: Tool, structured: dict[str, Any] | None) -> Any:
    """A tool's structured result as its result model (a dict where the tool declares none)."""
    model = tool.return_type
    if isinstance(model, type) and issubclass(model, BaseModel) and structured is not None:
        return model.model_validate(structured)
    return structured


class _AnsweredErrors(logging.Filter):
    """Leaves out the server's log line about a call a session refused or failed: the caller
    gets it as `ToolCallError`. A record with a traceback (an unexpected failure) stays."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.threadName == THREAD_NAME and not record.exc_info)


logging.getLogger("fastmcp.server.server").addFilter(_AnsweredErrors())


class ToolSession:
    """Holds one `Client(mcp)` session open until `close()`."""

    def __init__(self, mcp: FastMCP, progress: bool = True) -> None:
        self.progress = progress
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name=THREAD_NAME, daemon=True
        )
        self._thread.start()
        self._client: Client | None = None
        self._opened = threading.Event()
        self._stop: asyncio.Event | None = None
        self._session = asyncio.run_coroutine_threadsafe(self._hold(mcp), self._loop)
        self._opened.wait()
        if self._session.done():  # the session failed to open: raise why
            self._session.result()
        self.tools: dict[str, Tool] = {
            tool.name: tool for tool in self.run(mcp.list_tools(run_middleware=False))
        }

    async def _hold(self, mcp: FastMCP) -> None:
        self._stop = asyncio.Event()
        try:
            async with Client(mcp) as client:
                self._client = client
                self._opened.set()
                await self._stop.wait()
        finally:
            self._opened.set()

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run `work` on the session's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(work, self._loop).result()

    def call(
        self, name: str, arguments: dict[str, Any], progress: ProgressHandler | None = None
    ) -> Any:
        """Call tool `name`: its result model, or `ToolCallError` with the tool's message.
        `progress` receives the call's progress notifications (default: a bar, if enabled)."""
        return self.run(self._call(name, arguments, progress))

    async def _call(
        self, name: str, arguments: dict[str, Any], progress: ProgressHandler | None = None
    ) -> Any:
        client = self._client
        if client is None:  # set before the constructor returns; None only after a failed start
            raise RuntimeError("the tool session is not open")
        bar = ProgressBar(name) if self.progress and progress is None else None
        try:
            result = await client.call_tool(
                name, arguments, raise_on_error=False, progress_handler=progress or bar
            )
        finally:
            if bar is not None:
                bar.close()
        if result.is_error:
            text = " ".join(getattr(part, "text", "") for part in result.content)
            raise ToolCallError(name, text)
        return result_value(self.tools[name], result.structured_content)

    def close(self) -> None:
        """End the session and stop its loop (idempotent)."""
        if not self._thread.is_alive():
            return
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        try:
            self._session.result()
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
            self._loop.close()


class ProgressBar:
    """MCP progress notifications drawn by `scoperag.core.progress.ProgressBar` through
    tqdm.auto (a widget in Jupyter, text elsewhere); it appears with the first notification, so
    calls without progress show none."""

    def __init__(self, label: str) -> None:
        self._bar = Bar(label, auto=True)

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self._bar(whole(progress), whole(total), message or "")  # type: ignore[arg-type]

    def close(self) -> None:
        self._bar.close()


def whole(value: float | None) -> float | int | None:
    """A count sent as a JSON number (MCP progress is a float) as the int it is, so a bar shows
    `3/117`, not `3.0/117.0`."""
    return int(value) if isinstance(value, float) and value.is_integer() else value
