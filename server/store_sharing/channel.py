"""The attached end of the owner's socket: one connection, synchronous JSON-RPC calls.

`hello` on connecting answers with the record of the process that actually listens (a new
owner listens before it rewrites `owner.json`), and that process is the one watched: a call
unanswered for a second fails at once if it is stopped, and a closed connection is an
`OwnerUnreachableError`, on which `SharedBackend` takes over or reconnects.
"""

from __future__ import annotations

import itertools
import json
import os
import select
import socket
import sys
import time
from pathlib import Path
from typing import Any

from scoperag.core.errors import ScoperagError
from scoperag.server.store_sharing import wire

CONNECT_SECONDS = 10.0
CALL_SECONDS = 600.0  # a large upsert or a migration page can take minutes on a busy machine
STOPPED_CHECK_SECONDS = 1.0  # a call unanswered this long looks whether the owner is stopped


class OwnerUnreachableError(ScoperagError):
    """The owner process of the store did not answer (it exited, or is not listening yet)."""

    def __init__(self, socket_path: str, cause: BaseException) -> None:
        super().__init__(
            f"The process that owns the store did not answer on {socket_path} ({cause!r}); "
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
    """Whether process `pid` is stopped by a signal or a tracer (Linux's /proc)."""
    try:
        stat = Path(f"/proc/{int(pid)}/stat").read_text()
    except (OSError, TypeError, ValueError):
        return False
    return stat.rsplit(")", 1)[-1].split()[:1] in (["T"], ["t"])


class Connection:
    """One connection to the owner: synchronous JSON-RPC calls, one at a time."""

    def __init__(self, record: dict[str, Any], attach: bool = True) -> None:
        """Connect to the socket `record` names and say hello; `owner` is then the record of
        the process that answered (the file may still name the previous owner)."""
        self.path = str(record["socket"])
        self._ids = itertools.count()
        self._buffer = bytearray()
        self.owner = record
        self.broken = False  # a call failed mid-way: its answer may still come, so never reuse
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._socket.connect(self.path)
            hello = {"pid": os.getpid(), "command": " ".join(sys.argv), "attach": attach}
            self.owner = self.call("hello", hello, wait=CONNECT_SECONDS)
        except OwnerStoppedError:
            self.close()
            raise
        except (OSError, OwnerUnreachableError) as exc:
            self.close()
            raise OwnerUnreachableError(self.path, exc) from None

    def call(self, method: str, params: dict[str, Any], wait: float = CALL_SECONDS) -> Any:
        """The result of `method`, or the error the owner raised as its own class."""
        message = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        try:
            self._socket.sendall(json.dumps(message, separators=(",", ":")).encode() + b"\n")
            answer = json.loads(self._line(wait))
        except (OSError, ValueError) as exc:
            self.broken = True
            raise OwnerUnreachableError(self.path, exc) from None
        except BaseException:
            self.broken = True
            raise
        if "error" in answer:
            raise wire.raised(answer["error"])
        return answer.get("result")

    def _line(self, wait: float) -> bytes:
        """The next line from the owner; a stopped owner fails the call within a second."""
        deadline = time.monotonic() + wait
        while (end := self._buffer.find(b"\n")) < 0:
            ready, _, _ = select.select([self._socket], [], [], STOPPED_CHECK_SECONDS)
            if not ready:
                if process_stopped(self.owner.get("pid")):
                    raise OwnerStoppedError(self.owner)
                if time.monotonic() > deadline:
                    raise TimeoutError(f"no answer in {wait:.0f} s")
                continue
            chunk = self._socket.recv(1 << 20)
            if not chunk:
                raise ConnectionResetError("the owner closed the connection")
            self._buffer += chunk
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        return line

    def close(self) -> None:
        self._socket.close()


def owner_status(record: dict[str, Any]) -> dict[str, Any]:
    """The owner's description of itself and of the processes attached to it (not attaching)."""
    connection = Connection(record, attach=False)
    try:
        return connection.call("status", {})
    finally:
        connection.close()
