"""`scoperag serve` over stdio as a door: MCP lines relayed unchanged between the client (stdin,
stdout) and an MCP session in the resident engine (`daemon.mcp`).

If the resident engine goes away (killed, stopped, replaced by another version), each request
it had not answered is answered here with an error saying so (nothing it did not acknowledge
counts as done), a resident engine is started again, and the client's `initialize` is replayed
to it, so the client's session goes on.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import threading
from typing import Any

from scoperag.server.daemon import locate

REPLAYED = "scoperag-relay-initialize"  # the id of a replayed `initialize`: its answer is ours
PROTOCOL_META = "io.modelcontextprotocol/protocolVersion"  # a stateless request's version
RESULT_TYPES = "2026-07-28"  # the first protocol version whose results carry `resultType`
GONE = (
    "The resident engine (scoperag daemon) ended before answering this request, so nothing of "
    "it is acknowledged; a new one has started: call again."
)


class Relay:
    """One client's relay; `run` returns when the client closes stdin and the answers are out."""

    def __init__(self, profiles: str | None) -> None:
        self.settings = {**locate.door_settings(), **({"profiles": profiles} if profiles else {})}
        self.lock = threading.Lock()  # of the connection, the replay and the requests pending
        self.out = threading.Lock()
        self.initialize: dict[str, Any] | None = None
        self.initialized: bytes | None = None
        self.protocol = ""  # the version `initialize` agreed on (stateless requests name theirs)
        self.pending: dict[tuple[str, Any], tuple[str, str]] = {}  # id -> method, version
        self.closing = False
        self.line = self._connect()

    def _connect(self) -> locate.Line:
        line, _ = locate.session("daemon.mcp", {"settings": self.settings})
        line.socket.settimeout(None)
        return line

    def run(self) -> None:
        down = threading.Thread(target=self._down, name="scoperag-relay", daemon=True)
        down.start()
        stdin = sys.stdin.buffer
        while raw := stdin.readline():
            self._note(raw)
            with self.lock:
                line = self.line
                with contextlib.suppress(OSError):  # the reader sees the end, answers the pending
                    line.writer.write(raw)
                    line.writer.flush()
        self.closing = True
        with self.lock, contextlib.suppress(OSError):
            self.line.socket.shutdown(socket.SHUT_WR)
        down.join()

    def _note(self, raw: bytes) -> None:
        """Remember the client's `initialize` (to replay; a stateless session has none) and the
        requests it waits for."""
        try:
            message = json.loads(raw)
        except ValueError:
            return
        if not isinstance(message, dict) or "method" not in message:
            return
        if message["method"] == "initialize":
            self.initialize = message
        elif message["method"] == "notifications/initialized":
            self.initialized = raw
        if "id" in message:
            meta = (message.get("params") or {}).get("_meta") or {}
            version = str(meta.get(PROTOCOL_META) or self.protocol)
            with self.lock:
                self.pending[_key(message["id"])] = (message["method"], version)

    def _write(self, raw: bytes) -> None:
        with self.out:
            sys.stdout.buffer.write(raw)
            sys.stdout.buffer.flush()

    def _down(self) -> None:
        """The engine's lines to stdout, until the end of the session."""
        line = self.line
        while True:
            try:
                raw = line.reader.readline()
            except OSError:
                raw = b""
            if not raw:
                if self.closing:
                    return
                line = self._recover(line)
                continue
            if not raw.strip():
                continue
            try:
                message = json.loads(raw)
            except ValueError:
                message = None
            if isinstance(message, dict) and "id" in message and "method" not in message:
                if message["id"] == REPLAYED:
                    continue
                if self.initialize is not None and message["id"] == self.initialize.get("id"):
                    self.protocol = str((message.get("result") or {}).get("protocolVersion", ""))
                with self.lock:
                    self.pending.pop(_key(message["id"]), None)
            self._write(raw)

    def _recover(self, broken: locate.Line) -> locate.Line:
        """Answer what is pending, connect to a new resident engine, replay `initialize`."""
        with self.lock:
            broken.close()
            for key, (method, version) in self.pending.items():
                answer = {"jsonrpc": "2.0", "id": key[1], **_gone(method, version)}
                self._write(json.dumps(answer).encode())
                self._write(b"\n")
            self.pending.clear()
            try:
                self.line = self._connect()
            except (locate.DaemonUnavailableError, OSError) as exc:
                sys.stderr.write(f"scoperag serve: the resident engine is gone: {exc}\n")
                sys.stderr.flush()
                os._exit(1)  # this is the reader thread: the process ends here
            if self.initialize is not None:
                replay = {**self.initialize, "id": REPLAYED}
                self.line.writer.write(json.dumps(replay).encode() + b"\n")
                if self.initialized is not None:
                    self.line.writer.write(self.initialized)
                self.line.writer.flush()
            return self.line


def _gone(method: str, protocol: str) -> dict[str, Any]:
    """The answer to a request the resident engine left unanswered: a tool call's is a tool
    error (the agent reads it; tagged complete where the protocol version asks), another's a
    JSON-RPC error."""
    if method == "tools/call":
        result = {"content": [{"type": "text", "text": GONE}], "isError": True}
        tagged = {"resultType": "complete"} if protocol >= RESULT_TYPES else {}
        return {"result": {**result, **tagged}}
    return {"error": {"code": -32603, "message": GONE}}


def _key(request_id: Any) -> tuple[str, Any]:
    """A request id as a set member that keeps 1 and "1" apart."""
    return (type(request_id).__name__, request_id)
