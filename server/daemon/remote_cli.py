"""A command line run by the resident engine for this door (`daemon.cli`): its output written
here as it comes, a line of stdin sent when a command reads one, and its exit status ours."""

from __future__ import annotations

import os
import sys

from scoperag.server.daemon import locate


def _tty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False


def run(argv: list[str]) -> int:
    """`argv`'s exit status, run by the resident engine (`DaemonUnavailableError` if none can)."""
    tty = {"out": _tty(sys.stdout), "err": _tty(sys.stderr), "in": _tty(sys.stdin)}
    asked = {"argv": argv, "cwd": os.getcwd(), "tty": tty}
    line, _ = locate.session("daemon.cli", {**asked, "settings": locate.door_settings()})
    line.socket.settimeout(None)  # a command may run for hours (an ingestion)
    try:
        while (message := line.receive()) is not None:
            if "out" in message:
                sys.stdout.write(message["out"])
                sys.stdout.flush()
            elif "err" in message:
                sys.stderr.write(message["err"])
                sys.stderr.flush()
            elif "read" in message:
                line.send({"line": sys.stdin.readline()})
            elif "exit" in message:
                return int(message["exit"])
    except BrokenPipeError:  # stdout's reader left (`| head`): so does the command
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    finally:
        line.close()
    sys.stderr.write("Error: the resident engine ended before the command did; run it again.\n")
    return 1
