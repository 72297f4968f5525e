"""An MCP session on a connection to the resident engine (`daemon.mcp`): the server a
`scoperag serve` in process would run, with the door's own settings, over the
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
from scoperag.server.daemon import locate
from scoperag.server.runtime import Runtime

log = logging.getLogger("scoperag.daemon")
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
        runtime = Runtime(session_settings(base, door_settings(params)))
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
