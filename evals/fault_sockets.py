"""The HTTP side of evals/faults.py: a real `scoperag serve --transport http`, slow and
numerous sockets against it, and a server short of file descriptors."""

from __future__ import annotations

import contextlib
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from http_serving import free_port, serve_http  # noqa: E402

SCOPERAG = str(Path(sys.executable).parent / "scoperag")
TOKEN = "faults-token"


def serve(
    data_dir: Path, port: int, profiles: str, files: int | None = None, stderr: Any = None
) -> subprocess.Popen:
    """`scoperag serve --transport http`, allowed `files` open file descriptors if given."""
    env = {**os.environ, "SCOPERAG_DATA_DIR": str(data_dir), "SCOPERAG_HTTP_TOKEN": TOKEN}
    env["FASTMCP_CHECK_FOR_UPDATES"] = "off"
    command = [SCOPERAG, "serve", "--transport", "http", "--port", str(port)]
    limit = (lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))) if files else None
    return serve_http(
        [*command, "--profiles", profiles], port, env=env, stderr=stderr, preexec_fn=limit
    )


def drip(port: int, sockets: int, seconds: float) -> tuple[int, float]:
    """Sockets dripping headers a byte a second; (still open after `seconds`, last close time)."""
    opened = [socket.create_connection(("127.0.0.1", port)) for _ in range(sockets)]
    request = f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Slow: " + "a" * 100
    started, closed_at, open_ = time.monotonic(), 0.0, set(range(sockets))
    for index in range(int(seconds)):
        for number in list(open_):
            try:
                opened[number].send(request[index % len(request)].encode())
            except OSError:
                open_.discard(number)
                closed_at = time.monotonic() - started
        time.sleep(1)
    for sock in opened:
        sock.close()
    return len(open_), closed_at


def idle(port: int, count: int) -> int:
    """Open `count` idle connections at once; how many were refused with 503."""
    opened = [socket.create_connection(("127.0.0.1", port)) for _ in range(count)]
    refused = 0
    for sock in opened:
        sock.settimeout(0.5)
        with contextlib.suppress(TimeoutError):  # held open: not refused
            refused += sock.recv(100).startswith(b"HTTP/1.1 503")
        sock.close()
    return refused


def slow_sockets() -> None:
    print("## 4. HTTP: slow and numerous sockets, bearer scheme")
    with tempfile.TemporaryDirectory() as data_dir:
        port = free_port()
        server = serve(Path(data_dir), port, "docs")
        try:
            still_open, last_closed = drip(port, 100, 20)
            print(
                f"  100 drip-fed sockets: {still_open} still open after 20 s, "
                f"the last one closed at {last_closed:.1f} s"
            )
            print(f"  300 idle connections at once: {idle(port, 300)} refused with 503")
            lower = httpx.get(
                f"http://127.0.0.1:{port}/openapi.json",
                headers={"authorization": f"bearer {TOKEN}"},
            )
            print(f"  'Authorization: bearer <token>': HTTP {lower.status_code}")
            print(f"  server crashed: {'no' if server.poll() is None else server.returncode}")
        finally:
            server.terminate()
            server.wait(timeout=30)


def out_of_descriptors() -> None:
    """A server allowed 128 file descriptors, sent 400 connections for 10 s."""
    with tempfile.TemporaryDirectory() as data_dir, tempfile.TemporaryFile("w+") as log:
        port = free_port()
        server = serve(Path(data_dir), port, "docs", files=128, stderr=log)
        try:
            refused = idle(port, 400)
            time.sleep(10)
            health = httpx.get(f"http://127.0.0.1:{port}/healthz").status_code
        finally:
            server.terminate()
            server.wait(timeout=30)
        log.seek(0)
        lines = log.read().splitlines()
    tracebacks = sum(line.startswith("Traceback") for line in lines)
    print(
        f"  400 connections to a server allowed 128 files: {refused} refused with 503, "
        f"{len(lines)} log lines ({tracebacks} tracebacks) in about 12 s, /healthz then {health}"
    )
