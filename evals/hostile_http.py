"""Hostile input against a real `scoperag serve --transport http`: how fast it is refused and
what it costs the server's memory.

python evals/hostile_http.py

Prints, for a 60 MB body (declared with Content-Length, and streamed chunked), a deeply nested
body, bad UTF-8, a wrong Content-Type, a missing token and a 1 MB quote over MCP: the status,
the time to the answer, the bytes the client got to send, and the server's peak RSS.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport
from fastmcp.exceptions import ToolError

TOKEN = "eval-token"
SEARCH = "/v2/docs/search/l0"
MB = 1024 * 1024


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def peak_rss_mb(pid: int) -> float:
    """VmHWM: the process's peak resident memory so far."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def start_server(port: int, data_dir: str) -> subprocess.Popen:
    script = shutil.which("scoperag", path=str(Path(sys.executable).parent)) or "scoperag"
    env = {
        **os.environ,
        "SCOPERAG_DATA_DIR": data_dir,
        "SCOPERAG_PROFILES": "docs,books",
        "SCOPERAG_HTTP_TOKEN": TOKEN,
        "FASTMCP_CHECK_FOR_UPDATES": "off",
    }
    args = [script, "serve", "--transport", "http", "--port", str(port)]
    server = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200:
                return server
        except httpx.TransportError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit("the server did not start within 60 s")


def raw_post(port: int, headers: str, body_chunks: int, chunked: bool) -> tuple[str, float, int]:
    """Send headers, then 1 MB chunks until the server answers; (status line, seconds, bytes)."""
    sent = 0
    started = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(headers.encode())
        sock.setblocking(False)
        for _ in range(body_chunks):
            try:
                answer = sock.recv(200)
                if answer:
                    return answer.split(b"\r\n")[0].decode(), time.perf_counter() - started, sent
            except BlockingIOError:
                pass
            chunk = b" " * MB
            frame = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n" if chunked else chunk
            try:
                sock.setblocking(True)
                sock.sendall(frame)
                sock.setblocking(False)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(chunk)
        sock.setblocking(True)
        sock.settimeout(30)
        answer = sock.recv(200)
    return answer.split(b"\r\n")[0].decode(), time.perf_counter() - started, sent


def body_limit(port: int) -> None:
    common = f"POST {SEARCH} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}"
    declared = f"{common}\r\nContent-Type: application/json\r\nContent-Length: {60 * MB}\r\n\r\n"
    streamed = f"{common}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    for name, headers, chunked in (
        ("60 MB, Content-Length", declared, False),
        ("60 MB, chunked", streamed, True),
    ):
        status, seconds, sent = raw_post(port, headers, 60, chunked)
        print(f"{name:<24} {status:<34} {seconds:6.3f} s  client sent {sent / MB:5.1f} MB")


def small_bodies(port: int) -> None:
    base = f"http://127.0.0.1:{port}"
    auth = {"authorization": f"Bearer {TOKEN}"}
    cases = {
        "nested [ x 100000": (b"[" * 100_000, "application/json", auth),
        "bad UTF-8": (b'{"query": "\xff"}', "application/json", auth),
        "text/plain": (b'{"query": "q"}', "text/plain", auth),
        "no token": (b'{"query": "q"}', "application/json", {}),
        "foreign Origin": (b"{}", "application/json", {**auth, "origin": "http://evil.example"}),
    }
    with httpx.Client(base_url=base, timeout=60) as http:
        for name, (content, media, headers) in cases.items():
            started = time.perf_counter()
            response = http.post(
                SEARCH, content=content, headers={**headers, "content-type": media}
            )
            seconds = time.perf_counter() - started
            print(f"{name:<24} HTTP {response.status_code:<29} {seconds:6.3f} s")


async def huge_quote(port: int) -> None:
    transport = StreamableHttpTransport(
        f"http://127.0.0.1:{port}/mcp", headers={"authorization": f"Bearer {TOKEN}"}
    )
    async with Client(transport) as client:
        started = time.perf_counter()
        try:
            await client.call_tool("set_reading_position", {"book_id": "b", "quote": "x" * MB})
            outcome = "accepted (!)"
        except ToolError as exc:
            outcome = f"refused, message {len(str(exc))} chars"
        seconds = time.perf_counter() - started
        print(f"{'1 MB quote over MCP':<24} {outcome:<34} {seconds:6.3f} s")


def main() -> None:
    port = free_port()
    with tempfile.TemporaryDirectory() as data_dir:
        server = start_server(port, data_dir)
        try:
            print(f"server pid {server.pid}: peak RSS at start {peak_rss_mb(server.pid):.0f} MB")
            body_limit(port)
            small_bodies(port)
            asyncio.run(huge_quote(port))
            print(f"server peak RSS after all of the above: {peak_rss_mb(server.pid):.0f} MB")
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
