"""MCP over stdio with stdin and stdout polled by the event loop, not worker threads.

The MCP SDK's `stdio_server()` reads stdin and writes stdout through `anyio.wrap_file`: each
line read, each write and each flush is a trip to a worker thread and back, and on a machine
whose idle cores sleep every trip waits for a core to wake (a do-nothing tool call over stdio:
2.27 ms with the trips, 1.83 ms without, `evals/stdio_transport.py`). Here
the same lines go through asyncio's pipe transports, which the event loop polls with the rest
of its I/O; the SDK's `stdio_server` still frames, parses and writes them: it takes these
streams as its stdin and stdout.

As in the SDK, file descriptors 0 and 1 point at /dev/null and stderr while the server runs, so
a handler or a child process that prints cannot corrupt the wire; both are restored on exit.
Where stdin or stdout is neither a pipe nor a socket (a terminal, a regular file), or on
Windows, the SDK's own transport runs: a person typing at a terminal does not need the speed,
and not every platform's selector polls terminals.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from typing import Any

from fastmcp import FastMCP
from fastmcp.server.context import reset_transport, set_transport
from mcp.server.stdio import stdio_server

# One JSON-RPC message is one line. A longer one is dropped with a warning (as the SDK drops a
# line it cannot parse); the loop stops reading stdin while twice this is buffered unread, so a
# client that sends faster than the server answers waits, as it would on the SDK's transport.
LINE_LIMIT = 64 * 2**20
_log = logging.getLogger(__name__)


class PipeLines:
    """The lines of a pipe as text, what the SDK's `stdio_server` iterates as its stdin."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    def __aiter__(self) -> PipeLines:
        return self

    async def __anext__(self) -> str:
        try:
            line = await self.reader.readline()
        except ValueError:  # longer than LINE_LIMIT: the SDK drops a line that does not parse
            _log.warning("dropped a message of more than %d bytes from stdin", LINE_LIMIT)
            return ""
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")  # as the SDK decodes stdin


class PipeText:
    """A pipe written as text, what the SDK's `stdio_server` writes and flushes as its stdout."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    async def write(self, text: str) -> None:
        self.writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self.writer.drain()  # waits until the pipe has taken every byte (no buffer limit)


async def serve_stdio(mcp: FastMCP) -> None:
    """Run `mcp` over stdio, as `FastMCP.run_stdio_async` does, on the loop-polled pipes.

    FastMCP has no public way to give its stdio run other streams: this repeats that method
    (FastMCP 4.1, which pyproject pins) with its two private members, the lifespan and the
    low-level server. The stdio tests fail if either moves."""
    token = set_transport("stdio")
    try:
        async with mcp._lifespan_manager(), pipe_stdio() as (read_stream, write_stream):
            low_level = mcp._mcp_server
            options = low_level.create_initialization_options()
            await low_level.run(read_stream, write_stream, options)
    finally:
        reset_transport(token)


@asynccontextmanager
async def pipe_stdio() -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's `stdio_server` streams, its stdin and stdout read and written by the loop."""
    if sys.platform == "win32" or not (_pollable(0) and _pollable(1)):
        async with stdio_server() as streams:
            yield streams
        return
    loop = asyncio.get_running_loop()
    async with AsyncExitStack() as stack:
        wire_in = stack.enter_context(_diverted(0, lambda: os.open(os.devnull, os.O_RDONLY)))
        wire_out = stack.enter_context(_diverted(1, lambda: os.dup(2)))
        reader = asyncio.StreamReader(limit=LINE_LIMIT)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb")
        )
        stack.callback(read_transport.close)
        write_transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb")
        )
        write_transport.set_write_buffer_limits(high=0)  # a flush returns once all is written
        stack.callback(write_transport.close)
        writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
        server = stdio_server(stdin=PipeLines(reader), stdout=PipeText(writer))
        yield await stack.enter_async_context(server)


def _pollable(fd: int) -> bool:
    """Whether `fd` is a pipe or a socket, what MCP clients launch servers with."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@contextmanager
def _diverted(fd: int, stand_in: Callable[[], int]) -> Iterator[int]:
    """A duplicate of `fd` (the wire) for a transport to own and close, while `fd` itself
    points at `stand_in()`; on exit `fd` is the wire again, in blocking mode (asyncio made it
    non-blocking, and other processes may share the pipe)."""
    wire = os.dup(fd)
    try:
        replacement = stand_in()
        try:
            os.dup2(replacement, fd)
        finally:
            os.close(replacement)
        yield os.dup(wire)
    finally:
        os.set_blocking(wire, True)
        os.dup2(wire, fd)
        os.close(wire)
