"""What `scoperag serve` does for a person at a terminal: one line on stderr saying what it
speaks and how to add it to a client, and a clean stop on the first Ctrl+C.

Over a pipe (an MCP client launching the server) nothing is printed: stdout carries MCP only.
"""

from __future__ import annotations

import shlex
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastmcp import FastMCP

STOPPED_BY_CTRL_C = 130  # a shell's exit status for a process ended by SIGINT


def announcement(transport: str, url: str | None, profiles: str | None) -> str:
    """The line `serve` prints on a terminal: what it speaks, where, how to add it to a client."""
    serve = "scoperag serve" + (f" --profiles {shlex.quote(profiles)}" if profiles else "")
    if transport == "http":
        return (
            f"scoperag: MCP over streamable HTTP at {url} (Ctrl+C stops); add it to a client "
            f"with: claude mcp add --transport http scoperag {url}"
        )
    return (
        "scoperag: MCP over stdio, for an MCP client to launch, not for typing (Ctrl+C stops); "
        f"add it to a client with: claude mcp add scoperag -- {serve}"
    )


def announce(transport: str, url: str | None = None, profiles: str | None = None) -> None:
    """Print `announcement` to stderr when a person is there to read it: stdin is a terminal
    (stdio) or stderr is (HTTP)."""
    watched = sys.stdin if transport == "stdio" else sys.stderr
    if watched.isatty():
        print(announcement(transport, url, profiles), file=sys.stderr, flush=True)


def serve_stdio(mcp: FastMCP) -> None:
    """Serve `mcp` on FastMCP's stdio transport, every line answered (`stdio_lines`), until
    stdin closes or the first Ctrl+C."""
    import anyio

    from scoperag.server.mcp.stdio_lines import serve_checked_stdio

    run_until_ctrl_c(lambda: anyio.run(serve_checked_stdio, mcp, "WARNING"))


def run_until_ctrl_c(serve: Callable[[], None]) -> None:
    """Run `serve` (the stdio server) in a daemon thread until it returns, or until Ctrl+C,
    which raises `SystemExit(130)` (the caller's `finally` still closes the store).

    The stdio transport reads stdin in a worker thread that no cancellation reaches: a server
    whose event loop ran in the main thread would wait for one more line from the terminal
    before stopping. Here the main thread only waits, so the first Ctrl+C ends the wait, the
    caller closes the store, and the process exits without joining the reader.
    """
    failure: list[BaseException] = []

    def target() -> None:
        try:
            serve()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
            failure.append(exc)

    thread = threading.Thread(target=target, name="scoperag-stdio", daemon=True)
    thread.start()
    try:
        thread.join()
    except KeyboardInterrupt:
        raise SystemExit(STOPPED_BY_CTRL_C) from None
    if failure:
        raise failure[0]
