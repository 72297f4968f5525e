"""A connection to the process that owns a data dir's engine: MCP over its Unix socket.

`EngineClient` is a FastMCP `Client` (streamable HTTP through an httpx transport bound to the
socket) kept in an event loop of its own, so synchronous code in any thread can call the owner's
`engine` tool and get the operation's result, or the same exception the engine raised.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from scoperag.core.engine_codec import decode, decode_error, encode
from scoperag.core.errors import ScoperagError

CONNECT_SECONDS = 10.0
CALL_SECONDS = 600.0  # a large upsert or a migration page can take minutes on a busy machine
STOPPED_CHECK_SECONDS = 2.0  # a call unanswered this long looks whether the owner is stopped


class OwnerUnreachableError(ScoperagError):
    """The owner process of the store did not answer (it exited, or is not listening yet)."""

    def __init__(self, socket: str, cause: BaseException) -> None:
        super().__init__(
            f"The process that owns the store did not answer on {socket} ({cause!r}); "
            "scoperag takes over the store or reconnects to its new owner by itself."
        )


class OwnerStoppedError(ScoperagError):
    """The owner process of the store is stopped (suspended), so it cannot answer."""

    def __init__(self, record: dict[str, Any]) -> None:
        pid = record.get("pid")
        super().__init__(
            f"The process that owns the store (pid {pid}: {record.get('command', '?')}) is "
            "stopped (suspended, e.g. by Ctrl+Z in its terminal), so it cannot answer. Resume "
            f"it (`fg` in its terminal, or `kill -CONT {pid}`) or end it, then call again; a "
            "write already sent to it runs when it resumes."
        )


def process_stopped(pid: Any) -> bool:
    """Whether process `pid` is stopped by a signal or a tracer (Linux's /proc; False where
    that cannot be read)."""
    try:
        stat = Path(f"/proc/{int(pid)}/stat").read_text()
    except (OSError, TypeError, ValueError):
        return False
    return stat.rsplit(")", 1)[-1].split()[:1] in (["T"], ["t"])


class EngineClient:
    """Calls on the owner's engine service, from any thread of this process."""

    def __init__(self, record: dict[str, Any], attach: bool = True) -> None:
        """Connect to the owner `record` (`owner.json`) names; `attach` registers this process
        with the owner (`scoperag status` lists it)."""
        self.record = record
        self.socket = record["socket"]
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="scoperag-owner-client", daemon=True
        )
        self._thread.start()
        self._closing: asyncio.Event | None = None
        self._client: Any = None
        ready: Future[None] = Future()
        self._held = asyncio.run_coroutine_threadsafe(self._hold(ready), self._loop)
        try:
            ready.result(CONNECT_SECONDS)
            if attach:
                self._tool("attach", {"pid": os.getpid(), "command": " ".join(sys.argv)})
        except Exception as exc:
            self.close()
            raise OwnerUnreachableError(self.socket, exc) from None

    async def _hold(self, ready: Future[None]) -> None:
        """Keep the MCP session open until `close`."""
        import httpx2
        from fastmcp import Client
        from fastmcp.client.transports import StreamableHttpTransport

        def http_client(**kwargs: Any) -> httpx2.AsyncClient:
            return httpx2.AsyncClient(
                transport=httpx2.AsyncHTTPTransport(uds=self.socket), **kwargs
            )

        self._closing = asyncio.Event()
        transport = StreamableHttpTransport(
            "http://localhost/mcp", httpx_client_factory=http_client
        )
        try:
            async with Client(transport, timeout=CALL_SECONDS) as client:
                self._client = client
                ready.set_result(None)
                await self._closing.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    def _tool(self, name: str, arguments: dict[str, Any]) -> str:
        call = self._client.call_tool(name, arguments, raise_on_error=False)
        future = asyncio.run_coroutine_threadsafe(call, self._loop)
        try:
            result = self._answer(future)
        except OwnerStoppedError:
            raise
        except Exception as exc:
            raise OwnerUnreachableError(self.socket, exc) from None
        text = result.content[0].text if result.content else ""
        if result.is_error:
            raise decode_error(text)
        return text

    def _answer(self, future: Future[Any]) -> Any:
        """The call's result: a busy owner has `CALL_SECONDS`, a stopped one fails it at once."""
        deadline = time.monotonic() + CALL_SECONDS
        while True:
            left = deadline - time.monotonic()
            try:
                return future.result(max(0.0, min(STOPPED_CHECK_SECONDS, left)))
            except TimeoutError:
                if process_stopped(self.record.get("pid")):
                    future.cancel()
                    raise OwnerStoppedError(self.record) from None
                if left <= STOPPED_CHECK_SECONDS:
                    raise

    def call(self, op: str, args: tuple[Any, ...] | list[Any], kwargs: dict[str, Any]) -> Any:
        """Run `op` in the owner; its result, or the exception the engine raised there."""
        arguments = {
            "op": op,
            "args": json.dumps(encode(list(args))),
            "kwargs": json.dumps(encode(kwargs)),
        }
        return decode(json.loads(self._tool("engine", arguments)))

    def status(self) -> dict[str, Any]:
        """The owner's description of itself and of the processes attached to it."""
        return json.loads(self._tool("status", {}))

    def close(self) -> None:
        """Say goodbye to the owner (if it still listens) and stop this client's loop."""
        if self._client is not None:
            with contextlib.suppress(Exception):  # the owner may be gone: nothing to tell it
                self._tool("detach", {"pid": os.getpid()})
        if self._closing is not None:
            self._loop.call_soon_threadsafe(self._closing.set)
        with contextlib.suppress(Exception):  # a session broken by the owner's death ends so
            self._held.result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
