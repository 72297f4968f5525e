"""An MCP session on a connection to the resident engine (`daemon.mcp`): the server a
`scoperag serve` in process would run, for the profiles the door asked for, over the
connection's lines instead of stdio (FastMCP's stdio transport, lines checked as on stdio)."""

from __future__ import annotations

import logging
import os
import socketserver
from collections.abc import Callable
from typing import Any

import anyio
from pydantic import ValidationError

from scoperag.core.config.settings import Settings, describe_config_error
from scoperag.core.engine.sharing import wire
from scoperag.core.errors import ScoperagError
from scoperag.server.runtime import Runtime

log = logging.getLogger("scoperag.daemon")
# lists a door's connection among the resident engine's clients (`Resident.attach`)
Attach = Callable[[socketserver.StreamRequestHandler, dict[str, Any]], None]


def session_settings(base: Settings, profiles: Any) -> Settings:
    """`base` with the profiles a door asked for (`serve --profiles`, SCOPERAG_PROFILES)."""
    if profiles in (None, ""):
        return base
    try:
        return Settings(data_dir=base.data_dir, profiles=profiles)
    except ValidationError as exc:
        where = {"profiles": ("--profiles", profiles)}
        raise ScoperagError(f"Invalid configuration: {describe_config_error(exc, where)}") from None


def serve(
    handler: socketserver.StreamRequestHandler, request: dict, attach: Attach, base: Settings
) -> None:
    """Answer the request, then run the session until the door closes the connection; `attach`
    lists the door among the resident engine's clients, `base` is its settings."""
    from scoperag.server.mcp.app import build_server
    from scoperag.server.mcp.stdio_lines import serve_checked_lines

    params = request.get("params") or {}
    attach(handler, {**params, "kind": "mcp"})
    try:
        runtime = Runtime(session_settings(base, params.get("profiles")))
        mcp = build_server(runtime)
    except Exception as exc:
        wire.send(handler.wfile, {"id": request.get("id"), "error": wire.error_data(exc)})
        return
    wire.send(handler.wfile, {"id": request.get("id"), "result": {"pid": os.getpid()}})
    try:
        anyio.run(serve_checked_lines, mcp, handler.rfile, handler.wfile)
    except Exception:  # a session's failure ends that session alone
        log.exception("MCP session of pid %s ended by an error", params.get("pid"))
    finally:
        runtime.close()  # its engine and model are the resident engine's: nothing closes
