"""Finding the data dir's resident engine, or starting it, with the standard library alone (a
door starts in tens of milliseconds): `daemon.json` in the data dir names its socket (the store
owner's), version and settings; `connect` replaces one of another version and starts one where
none answers, one starter at a time (`daemon.lock`)."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

RECORD, LOG, START_LOCK = "daemon.json", "daemon.log", "daemon.lock"
PROTOCOL = 1  # what crosses the socket between a door and the resident engine
START_SECONDS = 60.0  # a cold start on a busy machine: imports, the engine's open
STOP_SECONDS = 30.0
# chosen per door (a client's own profiles and readable folders), not per resident engine;
# and the door's own switch
PER_SESSION = ("SCOPERAG_PROFILES", "SCOPERAG_ALLOWED_DIRS")
DOOR_ONLY = ("SCOPERAG_IN_PROCESS",)
NOT_SERVED = ("SCOPERAG_DAEMON_IDLE_SECONDS",)  # how it runs, not what it serves


class DaemonUnavailableError(Exception):
    """No resident engine can serve this caller: the reason says why (the caller then runs in
    its own process)."""


def data_dir() -> Path:
    """SCOPERAG_DATA_DIR (absolute), else the user data dir, as `Settings` finds it."""
    given = os.environ.get("SCOPERAG_DATA_DIR")
    if given:
        return Path(given).expanduser().absolute()
    import platformdirs

    return Path(platformdirs.user_data_dir("scoperag"))


def version() -> str:
    """The package's version and the door protocol's: a resident engine of another is replaced."""
    from importlib.metadata import version as installed

    return f"{installed('scoperag')}+door{PROTOCOL}"


def daemon_env(folder: Path) -> dict[str, str]:
    """The environment the resident engine of `folder` runs with: this process's, less the
    per-session and door-only settings."""
    env = {k: v for k, v in os.environ.items() if k not in PER_SESSION + DOOR_ONLY}
    env["SCOPERAG_DATA_DIR"] = str(folder)
    return env


def door_settings() -> dict[str, str]:
    """This door's own settings (`PER_SESSION`), by settings field name: a session applies
    them over the resident engine's."""
    return {
        name.removeprefix("SCOPERAG_").lower(): os.environ[name]
        for name in PER_SESSION
        if os.environ.get(name)
    }


def fingerprint(env: dict[str, str]) -> str:
    """A digest of the SCOPERAG_* settings of `env`: a caller whose differ is not served."""
    settings = sorted(
        (k, v) for k, v in env.items() if k.startswith("SCOPERAG_") and k not in NOT_SERVED
    )
    return hashlib.sha256(json.dumps(settings).encode()).hexdigest()[:16]


def in_process_asked() -> bool:
    """SCOPERAG_IN_PROCESS is set (to anything but 0/false/no/empty)."""
    return os.environ.get("SCOPERAG_IN_PROCESS", "").lower() not in ("", "0", "false", "no")


def unavailable_reason(folder: Path) -> str | None:
    """Why no resident engine may serve `folder`, if so: a Qdrant server (nothing embedded to
    hold), or a data dir this user may not write (its store is opened read-only, in process)."""
    if os.environ.get("SCOPERAG_QDRANT_URL") or os.environ.get("SCOPERAG_BACKEND") == "server":
        return "the store is a Qdrant server"
    existing = next((p for p in (folder / "edge", folder, *folder.parents) if p.exists()), None)
    if existing is None or not os.access(existing, os.W_OK | os.X_OK):
        return f"{folder} is read-only for this user"
    return None


def read_record(folder: Path) -> dict[str, Any] | None:
    try:
        record = json.loads((folder / RECORD).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


class Line:
    """A JSON-lines connection to the store's socket."""

    def __init__(self, path: str, timeout: float | None = 10.0) -> None:
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.socket.settimeout(timeout)
        try:
            self.socket.connect(path)
        except OSError:
            self.socket.close()
            raise
        self.reader, self.writer = self.socket.makefile("rb"), self.socket.makefile("wb")
        self._ids = iter(range(1, 1 << 62))

    def send(self, message: dict[str, Any]) -> None:
        self.writer.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        self.writer.flush()

    def receive(self) -> dict[str, Any] | None:
        line = self.reader.readline()
        return json.loads(line) if line else None

    def request(self, method: str, params: dict[str, Any]) -> Any:
        """`method`'s result; its error's message as `DaemonUnavailableError`."""
        self.send({"id": next(self._ids), "method": method, "params": params})
        answer = self.receive()
        if answer is None:
            raise ConnectionResetError("the resident engine closed the connection")
        if "error" in answer:
            raise DaemonUnavailableError(str(answer["error"].get("message")))
        return answer.get("result")

    def close(self) -> None:
        for end in (self.reader, self.writer, self.socket):
            with contextlib.suppress(OSError):
                end.close()


def session(method: str, params: dict[str, Any], folder: Path | None = None) -> tuple[Line, Any]:
    """A connection whose resident engine has accepted `method` (its answer beside it); one is
    started if none answers, and one of another version, or of other settings with no client,
    is stopped first; `folder` is the data dir (default: `data_dir()`)."""
    folder = folder or data_dir()
    reason = unavailable_reason(folder)
    if reason:
        raise DaemonUnavailableError(reason)
    wanted = fingerprint(daemon_env(folder))
    about = {"pid": os.getpid(), "command": " ".join(sys.argv), **params}
    for _ in range(3):
        record = read_record(folder)
        if record is not None and record.get("version") != version():
            stop(record)
            record = None
        if record is not None and record.get("fingerprint") != wanted:
            if _has_clients(record):
                raise DaemonUnavailableError("the resident engine runs with other settings")
            stop(record)
            record = None
        if record is not None:
            try:
                line = Line(record["socket"])
            except (OSError, KeyError, TypeError):
                record = None  # stale: it was killed, or is leaving
            else:
                try:
                    return line, line.request(method, about)
                except (OSError, ValueError):  # it is leaving (idle) or left as we asked
                    line.close()
                    _wait_gone(folder, record)
                except BaseException:
                    line.close()
                    raise
        launch(folder)
    raise DaemonUnavailableError(f"the resident engine did not answer; see {folder / LOG}")


def _wait_gone(folder: Path, record: dict[str, Any]) -> None:
    """Until the resident engine of `record` has left `folder` (its record replaced or its
    process ended), so the next one can own the store; at most `START_SECONDS`."""
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        current = read_record(folder)
        if current is None or current.get("pid") != record.get("pid"):
            return
        try:
            os.kill(int(record["pid"]), 0)
        except (ProcessLookupError, KeyError, TypeError, ValueError):
            return
        except PermissionError:
            pass
        time.sleep(0.05)


def launch(folder: Path) -> None:
    """Start the resident engine of `folder`, detached (its output appended to `daemon.log`),
    and wait until it listens; one caller starts it while the others wait for that one."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / START_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        record = read_record(folder)
        if record is not None and record.get("version") == version() and answers(record):
            return
        with open(folder / LOG, "ab") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "scoperag.server.daemon"],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=daemon_env(folder),
                cwd="/",
                start_new_session=True,
            )
        threading.Thread(target=process.wait, daemon=True).start()  # reaped when it exits
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            record = read_record(folder)
            if record is not None and record.get("pid") == process.pid:
                return
            if process.poll() is not None:
                raise DaemonUnavailableError(
                    f"the resident engine ended as it started (exit {process.returncode}); "
                    f"see {folder / LOG}"
                )
            time.sleep(0.02)
        raise DaemonUnavailableError(f"the resident engine did not start; see {folder / LOG}")


def ask(record: dict[str, Any], method: str) -> Any:
    """The answer of the resident engine of `record` to `method`, or None if it does not answer."""
    try:
        line = Line(record["socket"], timeout=5.0)
    except (OSError, KeyError, TypeError):
        return None
    try:
        return line.request(method, {})
    except (OSError, ValueError, DaemonUnavailableError):
        return None
    finally:
        line.close()


def _has_clients(record: dict[str, Any]) -> bool:
    """Whether the resident engine of `record` serves anyone else now."""
    return bool((ask(record, "daemon.status") or {}).get("clients"))


def answers(record: dict[str, Any]) -> bool:
    """Whether something listens on the record's socket."""
    try:
        Line(record["socket"], timeout=2.0).close()
    except (OSError, KeyError, TypeError):
        return False
    return True


def stop(record: dict[str, Any]) -> None:
    """Ask the resident engine of `record` to stop, and wait until it has; one that does not
    answer (of another protocol, or hung) is sent SIGTERM, if its pid still runs it."""
    pid = record.get("pid")
    try:
        line = Line(record["socket"])
        try:
            line.request("daemon.stop", {})
        finally:
            line.close()
    except (OSError, ValueError, KeyError, TypeError, DaemonUnavailableError):
        if isinstance(pid, int) and _runs_daemon(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_SECONDS
    while isinstance(pid, int) and _runs_daemon(pid) and time.monotonic() < deadline:
        time.sleep(0.02)


def _runs_daemon(pid: int) -> bool:
    """Whether process `pid` is a resident engine (not a pid since reused, nor a zombie)."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[:1]
    except OSError:
        return False
    return b"scoperag.server.daemon" in command and state != ["Z"]
