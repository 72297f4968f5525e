"""A command line run in the resident engine for a door (`daemon.cli`): the same `scoperag`
commands, each in its connection's thread, whose stdout and stderr go back over the connection
(stdin is read from the door line by line), with a relative path argument taken from the door's
working directory; the exit status is the last message. A door that leaves (Ctrl+C) interrupts
its command as Ctrl+C would in process."""

from __future__ import annotations

import contextlib
import ctypes
import io
import os
import select
import socket
import socketserver
import sys
import threading
import time
from typing import Any

import click

from scoperag.core.engine.sharing import wire
from scoperag.server.cli.support import DOOR
from scoperag.server.daemon.mcp_host import Attach, door_settings

_local = threading.local()  # this thread's door: its streams and working directory


class _Door:
    """The connection of one command line: messages out, lines of stdin in, one writer."""

    def __init__(self, handler: socketserver.StreamRequestHandler, tty: dict[str, Any]) -> None:
        self.handler, self.tty, self.lock = handler, tty, threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        with self.lock:
            wire.send(self.handler.wfile, message)

    def read_line(self) -> str:
        self.send({"read": True})
        answer = wire.receive(self.handler.rfile) or {}
        return str(answer.get("line") or "")


class _Out(io.TextIOBase):
    """The door's stdout or stderr."""

    encoding, errors = "utf-8", "replace"

    def __init__(self, door: _Door, key: str) -> None:
        self.door, self.key = door, key

    def write(self, text: str) -> int:
        if not isinstance(text, str):  # as a text stream does (click tells them apart by it)
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if text:
            self.door.send({self.key: text})
        return len(text)

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return bool(self.door.tty.get(self.key))


class _In(io.TextIOBase):
    """The door's stdin, a line at a time as a command reads it."""

    encoding, errors = "utf-8", "replace"

    def __init__(self, door: _Door) -> None:
        self.door = door

    def readable(self) -> bool:
        return True

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        return self.door.read_line()

    def isatty(self) -> bool:
        return bool(self.door.tty.get("in"))


class _PerThread:
    """A standard stream that is the door's in a door's thread, else the process's own."""

    def __init__(self, name: str, own: Any) -> None:
        self._name, self._own = name, own

    def __getattr__(self, attribute: str) -> Any:
        return getattr(getattr(_local, self._name, None) or self._own, attribute)


def install() -> None:
    """Route the standard streams per thread, and relative click paths per door (once)."""
    if isinstance(sys.stdout, _PerThread):
        return
    for name in ("stdin", "stdout", "stderr"):
        setattr(sys, name, _PerThread(name, getattr(sys, name)))
    convert = click.Path.convert

    def from_door_cwd(self: click.Path, value: Any, param: Any, ctx: Any) -> Any:
        cwd = getattr(_local, "cwd", None)
        if cwd and isinstance(value, str) and value != "-" and not os.path.isabs(value):
            value = os.path.join(cwd, value)
        return convert(self, value, param, ctx)

    click.Path.convert = from_door_cwd  # type: ignore[method-assign]


def serve(handler: socketserver.StreamRequestHandler, request: dict, attach: Attach) -> None:
    """Run the command line the request names and send its output, then its exit status
    (`attach` lists the door among the resident engine's clients)."""
    from scoperag.server.cli.main import run

    params = request.get("params") or {}
    argv, cwd = params.get("argv"), params.get("cwd")
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        problem = ValueError("daemon.cli takes `argv`, a list of strings")
        wire.send(handler.wfile, {"id": request.get("id"), "error": wire.error_data(problem)})
        return
    attach(handler, {**params, "kind": "cli"})
    wire.send(handler.wfile, {"id": request.get("id"), "result": {"pid": os.getpid()}})
    door = _Door(handler, params.get("tty") or {})
    _local.stdout, _local.stderr, _local.stdin = _Out(door, "out"), _Out(door, "err"), _In(door)
    _local.cwd = cwd if isinstance(cwd, str) and os.path.isabs(cwd) else None
    DOOR.settings = door_settings(params)
    finished, turn = threading.Event(), threading.Lock()
    watch = (handler.request, threading.get_ident(), finished, turn)
    threading.Thread(target=_interrupt_when_gone, args=watch, daemon=True).start()
    try:
        code = exit_status(run, argv)
    finally:
        with turn:  # no interruption lands after the command: one still pending is withdrawn
            finished.set()
            _raise_in(threading.get_ident(), None)
        for name in ("stdout", "stderr", "stdin", "cwd"):
            setattr(_local, name, None)
        DOOR.settings = {}
    with contextlib.suppress(OSError):  # the door is gone (Ctrl+C)
        door.send({"exit": code})


def _raise_in(thread: int, exception: type[BaseException] | None) -> None:
    """Have `thread` raise `exception` at its next bytecode (None: withdraw a pending one)."""
    pending = None if exception is None else ctypes.py_object(exception)
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread), pending)


def _interrupt_when_gone(
    connection: socket.socket, thread: int, finished: threading.Event, turn: threading.Lock
) -> None:
    """Interrupt the command (KeyboardInterrupt in its thread, as Ctrl+C would in process) when
    its door closes the connection before the command has finished; `turn` keeps the
    interruption from landing once the command is over (in the connection's own clean-up)."""
    while not finished.is_set():
        if not select.select([connection], [], [], 0.5)[0]:
            continue
        try:
            gone = connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            gone = True
        if gone:
            with turn:
                if not finished.is_set():
                    _raise_in(thread, KeyboardInterrupt)
            return
        time.sleep(0.1)  # a line of stdin waits for the command to read it


def exit_status(run: Any, argv: list[str]) -> int:
    """The exit status of `run(argv)` (a click command line, which always exits)."""
    try:
        run(argv)
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    return 0
