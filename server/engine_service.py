"""The MCP server an owner process runs so other processes on its data dir reach its engine.

Three tools: `engine` runs one operation of `scoperag.core.engine_ops` (arguments and result as
`scoperag.core.engine_codec` JSON), `attach`/`detach` keep the list of processes using the
store, and `status` reports the owner and them. Engine errors go back as tool errors carrying
the exception's class and message, so the caller raises the same error.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from typing import Any

import anyio
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError

from scoperag.core.engine_codec import decode, encode, encode_error
from scoperag.core.engine_ops import LockedEngine


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Attached:
    """Processes attached to the owner (pid -> command), pruned of those that have exited."""

    def __init__(self) -> None:
        self._processes: dict[int, str] = {}
        self._lock = threading.Lock()

    def add(self, pid: int, command: str) -> None:
        with self._lock:
            self._processes[pid] = command

    def remove(self, pid: int) -> None:
        with self._lock:
            self._processes.pop(pid, None)

    def live(self) -> dict[int, str]:
        with self._lock:
            for pid in [pid for pid in self._processes if not process_alive(pid)]:
                del self._processes[pid]
            return dict(self._processes)


def build_engine_service(engine: LockedEngine, owner: dict[str, Any]) -> FastMCP:
    """The owner's MCP server over `engine`; `owner` describes this process for `status`."""
    mcp = FastMCP("scoperag-owner")
    attached = Attached()

    @mcp.tool(name="engine", output_schema=None)
    async def engine_op(op: str, args: str, kwargs: str) -> str:
        """Run one engine operation; `args` and `kwargs` are engine-codec JSON."""
        try:
            decoded_args, decoded_kwargs = decode(json.loads(args)), decode(json.loads(kwargs))
            result = await anyio.to_thread.run_sync(engine.call, op, decoded_args, decoded_kwargs)
            return json.dumps(encode(result))
        except Exception as exc:  # every failure goes back to the caller as itself
            raise ToolError(encode_error(exc), log_level=logging.DEBUG) from None

    @mcp.tool(output_schema=None)
    def attach(pid: int, command: str) -> str:
        """Record a process that uses the store through this owner."""
        attached.add(pid, command)
        return "attached"

    @mcp.tool(output_schema=None)
    def detach(pid: int) -> str:
        """Forget a process that closed its connection."""
        attached.remove(pid)
        return "detached"

    @mcp.tool(output_schema=None)
    def status() -> str:
        """The owner (pid, command, socket, engine) and the processes attached to it."""
        processes = [{"pid": pid, "command": cmd} for pid, cmd in attached.live().items()]
        return json.dumps({**owner, "attached": processes})

    return mcp
