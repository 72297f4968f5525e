"""An attached process's connection to the owner: synchronous JSON-RPC calls, one at a time,
watching the process that answered `hello` (a call unanswered for a second fails at once if it
is stopped; a new owner listens before it rewrites `owner.json`)."""

from __future__ import annotations

import contextlib
import itertools
import os
import select
import socket
import sys
import time
from pathlib import Path
from typing import Any

from scoperag.core.engine.sharing import wire
from scoperag.core.errors import ScoperagError

CONNECT_SECONDS = 10.0
CALL_SECONDS = 600.0  # a large upsert or a migration page can take minutes on a busy machine


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
    """One connection to the owner; `owner` is the record of the process that answered, and
    `broken` says a call failed mid-way (its answer may still come, so it is never reused)."""

    def __init__(self, record: dict[str, Any], attach: bool = True) -> None:
        self.path, self.owner, self._ids = record["socket"], record, itertools.count()
        self.broken = False
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._socket.settimeout(CALL_SECONDS)
        self._stream = self._socket.makefile("rwb")
        hello = {"pid": os.getpid(), "command": " ".join(sys.argv), "attach": attach}
        try:
            self._socket.connect(self.path)
            self.owner = self.call("hello", hello, wait=CONNECT_SECONDS)
        except OSError as exc:  # nothing listens there (a stale record)
            self.close()
            raise OwnerUnreachableError(self.path, exc) from None
        except BaseException:
            self.close()
            raise

    def call(self, method: str, params: dict[str, Any], wait: float = CALL_SECONDS) -> Any:
        """The result of `method`, or the error the owner raised, as its own class."""
        deadline = time.monotonic() + wait
        try:
            wire.send(self._stream, {"id": next(self._ids), "method": method, "params": params})
            while not select.select([self._socket], [], [], 1.0)[0]:  # watch a quiet owner
                if process_stopped(self.owner.get("pid")):
                    raise OwnerStoppedError(self.owner)
                if time.monotonic() > deadline:
                    raise TimeoutError(f"no answer in {wait:.0f} s")
            answer = wire.receive(self._stream)
            if answer is None:
                raise ConnectionResetError("the owner closed the connection")
        except (OSError, ValueError) as exc:
            self.broken = True
            raise OwnerUnreachableError(self.path, exc) from None
        except BaseException:
            self.broken = True
            raise
        if "error" in answer:
            raise wire.raised(answer["error"])
        return answer.get("result")

    def close(self) -> None:
        with contextlib.suppress(OSError):  # a write the owner never read is dropped
            self._stream.close()
        self._socket.close()


def owner_status(record: dict[str, Any]) -> dict[str, Any]:
    """The owner's description of itself and of the processes attached to it (not attaching)."""
    connection = Connection(record, attach=False)
    try:
        return connection.call("status", {})
    finally:
        connection.close()
