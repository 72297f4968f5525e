"""`scoperag serve` run by a person on a terminal (a real pseudo-terminal): it says in one line
what it speaks and how to add it to a client, and the first Ctrl+C (SIGINT) stops it cleanly,
closing the store (the owner's record of the store is removed, as only a clean close does)."""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from fastmcp import Client
from mcp_handshake import HANDSHAKE

from scoperag.core.engine.sharing.owner import RECORD

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
WAIT = 60  # seconds a step may take on a loaded machine before the test gives up
MCP_CALLS = [
    *HANDSHAKE,
    {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "qdrant-list-documents"},
    },
]


def _scoperag() -> str:
    script = shutil.which("scoperag", path=str(Path(sys.executable).parent))
    assert script, "the scoperag console script is not installed"
    return script


def _store_env(data_dir: Path) -> dict[str, str]:
    """An embedded Qdrant Edge store in `data_dir`, the pdf profile's tools."""
    return {
        "SCOPERAG_DATA_DIR": str(data_dir),
        "SCOPERAG_BACKEND": "edge",
        "SCOPERAG_PROFILES": "pdf",
    }


def _default_ctrl_c() -> None:
    """In the child: SIGINT does what it does for a command typed at a shell, whatever the
    test runner's own disposition."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextmanager
def _serve(data_dir: Path, *args: str, terminal: str) -> Iterator[tuple[subprocess.Popen, int]]:
    """`scoperag serve *args` with `terminal` ("stdin" or "stderr") on a pseudo-terminal and the
    other standard streams on pipes; yields the process and the terminal's controlling side."""
    controller, tty = pty.openpty()
    streams = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    streams[terminal] = tty
    env = {**os.environ, **_store_env(data_dir)}
    server = subprocess.Popen(
        [_scoperag(), "serve", *args], env=env, preexec_fn=_default_ctrl_c, **streams
    )
    os.close(tty)
    try:
        yield server, controller
    finally:
        if server.poll() is None:
            server.kill()
        server.wait(WAIT)
        os.close(controller)


class Lines:
    """The lines written to a pipe or a terminal, read from `fd` (each awaited at most WAIT s)."""

    def __init__(self, fd: int) -> None:
        self.fd, self.buffer = fd, b""

    def _read(self, timeout: float) -> bytes:
        if not select.select([self.fd], [], [], max(timeout, 0))[0]:
            return b""
        try:
            return os.read(self.fd, 65536)
        except OSError:  # a terminal whose other side has closed
            return b""

    def next(self) -> str:
        deadline = time.monotonic() + WAIT
        while b"\n" not in self.buffer:
            chunk = self._read(deadline - time.monotonic())
            assert chunk, f"no line came; so far: {self.buffer!r}"
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode()

    def rest(self) -> str:
        """Everything else written until the writer closed its side."""
        while chunk := self._read(WAIT):
            self.buffer += chunk
        return self.buffer.decode(errors="replace")


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + WAIT
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def _stopped_cleanly(server: subprocess.Popen, screen: Lines, store: Path) -> None:
    """Press Ctrl+C once: the server exits at once without a traceback, the store closed."""
    server.send_signal(signal.SIGINT)
    status = server.wait(WAIT)
    printed = screen.rest()
    assert status in (0, 130), printed
    for noise in ("Traceback", "Exception ignored", "Aborted"):
        assert noise not in printed, printed
    assert not (store / "edge" / RECORD).exists()  # the store was closed and handed on


def test_stdio_on_a_terminal_says_how_to_add_it_and_stops_on_the_first_ctrl_c(
    tmp_path: Path,
) -> None:
    with _serve(tmp_path, terminal="stdin") as (server, keyboard):
        assert server.stderr is not None and server.stdout is not None
        screen, wire = Lines(server.stderr.fileno()), Lines(server.stdout.fileno())
        said = screen.next()
        assert "MCP over stdio" in said and "claude mcp add scoperag -- scoperag serve" in said
        for message in MCP_CALLS:  # typed at the terminal, one line each
            os.write(keyboard, json.dumps(message).encode() + b"\n")
        answers = [json.loads(wire.next()) for _ in range(2)]
        assert [answer["id"] for answer in answers] == [1, 2]  # stdout carries MCP only
        assert not answers[1]["result"]["isError"]
        _wait_for(tmp_path / "edge" / RECORD)  # the call opened the store: this process owns it
        _stopped_cleanly(server, screen, tmp_path)


async def test_http_on_a_terminal_prints_its_url_and_stops_on_the_first_ctrl_c(
    tmp_path: Path,
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    args = ("--transport", "http", "--port", str(port))
    with _serve(tmp_path, *args, terminal="stderr") as (server, terminal):
        screen = Lines(terminal)
        said = screen.next()
        assert url in said and f"claude mcp add --transport http scoperag {url}" in said
        async with Client(url, timeout=WAIT) as client:  # a session stays open meanwhile
            assert not (await client.call_tool("qdrant-list-documents", {})).is_error
            _wait_for(tmp_path / "edge" / RECORD)
            _stopped_cleanly(server, screen, tmp_path)


def test_over_pipes_serve_prints_nothing_but_mcp(tmp_path: Path) -> None:
    env = {**os.environ, **_store_env(tmp_path)}
    wire = "".join(json.dumps(message) + "\n" for message in MCP_CALLS[:2])
    done = subprocess.run(
        [_scoperag(), "serve"], input=wire, capture_output=True, text=True, env=env, timeout=WAIT
    )
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["id"] for line in done.stdout.splitlines()] == [1]
    assert done.stderr == ""
