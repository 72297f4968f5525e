"""`scoperag serve --transport http` for the evals: a free port, and a launch that returns once
the server answers `/healthz`."""

from __future__ import annotations

import socket
import subprocess
import time
from typing import Any

import httpx

READY_SECONDS = 120


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def serve_http(command: list[str], port: int, **popen: Any) -> subprocess.Popen:
    """Start `command` (a `scoperag serve --transport http --port PORT ...`) and wait until it
    answers `/healthz`; a server that does not within `READY_SECONDS` is killed."""
    server = subprocess.Popen(command, **popen)
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return server
        except httpx.TransportError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit(f"scoperag serve did not answer /healthz within {READY_SECONDS} s")
