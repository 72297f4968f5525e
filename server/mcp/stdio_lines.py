"""FastMCP's stdio transport with an answer for every line.

The MCP SDK's stdio reader decodes stdin with `errors="replace"` and hands a line it cannot
validate (a lone surrogate escape such as `\\ud800`, bytes that are not UTF-8, text that is not
JSON-RPC) to the session as a bare exception, which logs and drops it: the client waits out its
timeout. Here stdin is read as bytes and checked first; a bad line is answered at once with a
JSON-RPC error naming the problem, and every other line goes on to the SDK unchanged.
"""

from __future__ import annotations

import contextlib
import json
import os
from contextlib import contextmanager
from io import TextIOWrapper
from typing import TYPE_CHECKING, Any, BinaryIO

import anyio
from fastmcp.server.context import reset_transport, set_transport
from fastmcp.utilities.logging import temporary_log_level
from mcp import types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator

    from fastmcp import FastMCP

Answer = tuple[str | int | None, int, str]  # the request's id (if found), error code, message


def check_line(line: bytes) -> tuple[str | None, Answer | None]:
    """The line as text for the SDK, or the error to answer it with."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = line[exc.start : exc.start + 1].hex()
        problem = f"the line is not valid UTF-8 (byte 0x{bad} at offset {exc.start})"
        return None, (_request_id(line.decode("utf-8", "replace")), types.PARSE_ERROR, problem)
    if not text.strip():
        return None, None
    try:
        types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValueError as exc:
        return None, _answer(text, exc)
    return text, None


def _answer(text: str, exc: ValueError) -> Answer:
    try:
        parsed = json.loads(text)  # Python's parser takes lone surrogates; the SDK's does not
    except ValueError as not_json:
        return None, types.PARSE_ERROR, f"the line is not JSON: {not_json}"
    try:
        json.dumps(parsed, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as lone:
        code = ord(lone.object[lone.start])
        problem = (
            f"the line holds a lone surrogate escape (\\u{code:04x}), which is not a Unicode "
            "character: send the text as UTF-8, or a character past U+FFFF as a surrogate pair"
        )
        return _request_id(parsed), types.PARSE_ERROR, problem
    first = exc.errors()[0] if hasattr(exc, "errors") else {"loc": (), "msg": str(exc)}
    where = ".".join(map(str, first["loc"]))
    first = f"{where}: {first['msg']}" if where else first["msg"]
    problem = f"the line is JSON but not a JSON-RPC 2.0 message: {first}"
    return _request_id(parsed), types.INVALID_REQUEST, problem


def _request_id(parsed: Any) -> str | int | None:
    if isinstance(parsed, str):
        try:
            parsed = json.loads(parsed)
        except ValueError:
            return None
    found = parsed.get("id") if isinstance(parsed, dict) else None
    return found if isinstance(found, str | int) and not isinstance(found, bool) else None


class CheckedLines:
    """Stdin for the SDK's `stdio_server`: the good lines as text; a bad one is answered."""

    def __init__(self, wire: anyio.AsyncFile[bytes]) -> None:
        self._wire = wire
        self._answer: Callable[[SessionMessage], Awaitable[None]] | None = None
        self._ready = anyio.Event()

    def answer_through(self, send: Callable[[SessionMessage], Awaitable[None]]) -> None:
        """Write answers through the SDK's own writer (one writer: frames never tear)."""
        self._answer = send
        self._ready.set()

    def __aiter__(self) -> CheckedLines:
        return self

    async def __anext__(self) -> str:
        while line := await self._wire.readline():
            text, answer = check_line(line)
            if text is not None:
                return text
            if answer is not None:
                await self._ready.wait()
                request_id, code, problem = answer
                error = types.ErrorData(code=code, message=problem)
                message = types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
                await self._answer(SessionMessage(message))  # type: ignore[misc]
        raise StopAsyncIteration


@contextmanager
def _claimed_stdin() -> Iterator[int]:
    """A private copy of fd 0 for the wire; fd 0 reads the null device meanwhile, as the SDK
    does for the streams it claims, so children never read the client's messages."""
    wire = os.dup(0)
    os.set_inheritable(wire, False)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        yield wire
    finally:
        os.dup2(wire, 0)  # the wire's reader thread may still hold it: `wire` stays open


async def serve_checked_stdio(mcp: FastMCP, log_level: str | None = None) -> None:
    """What `FastMCP.run_stdio_async` does, with `CheckedLines` as the SDK's stdin."""
    with _claimed_stdin() as wire, temporary_log_level(log_level):
        await serve_checked_lines(mcp, os.fdopen(wire, "rb", closefd=False))


async def serve_checked_lines(
    mcp: FastMCP, wire_in: BinaryIO, wire_out: BinaryIO | None = None
) -> None:
    """One MCP session of `mcp` over `wire_in`'s lines (checked: `CheckedLines`), answered on
    `wire_out` (None: the SDK's stdout): stdio, or a connection to the resident engine."""
    token = set_transport("stdio")
    out = None if wire_out is None else TextIOWrapper(wire_out, encoding="utf-8")
    try:
        lines = CheckedLines(anyio.wrap_file(wire_in))
        served = stdio_server(stdin=lines, stdout=None if out is None else anyio.wrap_file(out))  # type: ignore[arg-type]
        async with mcp._lifespan_manager(), served as (read_stream, write_stream):
            lines.answer_through(write_stream.send)
            server = mcp._mcp_server
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        reset_transport(token)
        if out is not None:
            with contextlib.suppress(ValueError, OSError):
                out.detach()  # the connection's own, closed by its owner
