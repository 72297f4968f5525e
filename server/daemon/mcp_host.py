"""MCP sessions on connections to the resident engine (`daemon.mcp`): the server a
`scoperag serve` in process would run, with the door's own settings, over the
connection's lines instead of stdio (FastMCP's stdio transport, lines checked as on stdio)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socketserver
import threading
from collections.abc import Callable
from typing import Any

import anyio
from fastmcp import FastMCP
from pydantic import ValidationError

from scoperag.core.config.settings import Settings, describe_config_error
from scoperag.core.engine.sharing import wire
from scoperag.core.errors import ScoperagError
from scoperag.server.daemon import locate
from scoperag.server.runtime import Runtime

log = logging.getLogger("scoperag.daemon")
SESSION_THREADS = 256
DOOR_FIELDS = {name.removeprefix("SCOPERAG_").lower() for name in locate.PER_SESSION}
# lists a door's connection among the resident engine's clients (`Resident.attach`)
Attach = Callable[[socketserver.StreamRequestHandler, dict[str, Any]], None]


def door_settings(params: dict[str, Any]) -> dict[str, str]:
    """The door's own settings of a session request (`locate.door_settings`)."""
    given = params.get("settings")
    if not isinstance(given, dict):
        return {}
    return {k: v for k, v in given.items() if k in DOOR_FIELDS and isinstance(v, str)}


def session_settings(base: Settings, door: dict[str, str]) -> Settings:
    """`base` with the door's own settings (its profiles, from `serve --profiles` or
    SCOPERAG_PROFILES; its SCOPERAG_ALLOWED_DIRS)."""
    if not door:
        return base
    try:
        return Settings(data_dir=base.data_dir, **door)
    except ValidationError as exc:
        where = {"profiles": ("--profiles", door.get("profiles"))}
        raise ScoperagError(f"Invalid configuration: {describe_config_error(exc, where)}") from None


class Sessions:
    """Every MCP session of the resident engine on one event loop (its own thread), each door's
    settings served by one server built on first use and shared by the sessions that ask for
    them (as streamable HTTP shares one server among its sessions)."""

    def __init__(self, base: Settings) -> None:
        self.base, self.lock = base, threading.Lock()
        self.servers: dict[str, FastMCP] = {}
        self.loop = asyncio.new_event_loop()
        threading.Thread(
            target=self.loop.run_forever, name="scoperag-sessions", daemon=True
        ).start()
        asyncio.run_coroutine_threadsafe(_more_threads(), self.loop).result()

    def server(self, door: dict[str, str]) -> FastMCP:
        """The server of a door's settings (`door_settings`)."""
        from scoperag.server.mcp.app import build_server

        key = json.dumps(door, sort_keys=True)
        with self.lock:
            if key not in self.servers:
                self.servers[key] = build_server(Runtime(session_settings(self.base, door)))
            return self.servers[key]

    def serve(
        self, handler: socketserver.StreamRequestHandler, request: dict, attach: Attach
    ) -> None:
        """Answer the request, then run the session until the door closes the connection;
        `attach` lists the door among the resident engine's clients."""
        from scoperag.server.mcp.stdio_lines import serve_checked_lines

        params = request.get("params") or {}
        attach(handler, {**params, "kind": "mcp"})
        try:
            mcp = self.server(door_settings(params))
        except Exception as exc:
            wire.send(handler.wfile, {"id": request.get("id"), "error": wire.error_data(exc)})
            return
        wire.send(handler.wfile, {"id": request.get("id"), "result": {"pid": os.getpid()}})
        session = serve_checked_lines(mcp, handler.rfile, handler.wfile)
        try:
            asyncio.run_coroutine_threadsafe(session, self.loop).result()
        except Exception:  # a session's failure ends that session alone
            log.exception("MCP session of pid %s ended by an error", params.get("pid"))


async def _more_threads() -> None:
    """Room for many sessions' readers (each waits for its door's next line in a worker thread)
    beside the tools' calls (each runs in one)."""
    anyio.to_thread.current_default_thread_limiter().total_tokens = SESSION_THREADS
