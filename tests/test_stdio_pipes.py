"""MCP over stdio on loop-polled pipes (`scoperag.server.stdio_pipes`): the real FastMCP client
talking to a real server process, and the server's descriptors before, during and after."""

from __future__ import annotations

import json
import os
import pty
import socket
import subprocess
import sys
import time
from pathlib import Path
from subprocess import PIPE

import mcp_types
from fastmcp import Client
from fastmcp.client.transports import StdioTransport

from scoperag.server.stdio_pipes import LINE_LIMIT, _pollable

CHATTER = Path(__file__).with_name("stdio_chatter.py")
EVALS = Path(__file__).resolve().parents[1] / "evals"
# what an MCP client sends first: `initialize` (id 1), then `notifications/initialized`
HANDSHAKE = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": mcp_types.LATEST_PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]
BIG = 300_000  # characters in one argument: one line well past asyncio's default 64 KiB limit


def _chatter(log: Path) -> StdioTransport:
    return StdioTransport(sys.executable, [str(CHATTER)], log_file=log, keep_alive=False)


async def test_a_printing_tool_never_corrupts_the_wire(tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"
    async with Client(_chatter(log)) as client:
        for size in (BIG, 3):
            result = await client.call_tool("shout", {"text": "é" * size})
            assert result.data == size
        text = "".join(chr(0x41 + index % 50) for index in range(BIG))  # one answer of 300 kB
        assert (await client.call_tool("echo", {"text": text})).data == text
    printed = log.read_text()
    assert f"stray line from the server, {BIG} characters" in printed
    assert "stray line from a child" in printed


def test_the_wire_is_left_blocking_and_the_server_ends_at_eof() -> None:
    wire_in, client_end = os.pipe()
    try:
        server = subprocess.Popen(
            [sys.executable, str(CHATTER)], stdin=wire_in, stdout=subprocess.PIPE
        )
        os.close(client_end)  # end of input: the server stops
        client_end = -1
        assert server.wait(timeout=60) == 0
        assert server.stdout is not None and server.stdout.read() == b""
        assert os.get_blocking(wire_in)  # the open pipe is shared: a terminal would be too
    finally:
        os.close(wire_in)
        if client_end >= 0:
            os.close(client_end)


def test_a_regular_file_as_stdout_is_served_by_the_sdk_transport(tmp_path: Path) -> None:
    messages = [*HANDSHAKE, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    answers = tmp_path / "answers.jsonl"
    with answers.open("wb") as stdout:
        server = subprocess.Popen([sys.executable, str(CHATTER)], stdin=PIPE, stdout=stdout)
    assert server.stdin is not None
    server.stdin.write("".join(json.dumps(message) + "\n" for message in messages).encode())
    server.stdin.flush()
    deadline = time.monotonic() + 60
    while '"id":2' not in answers.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    server.stdin.close()
    assert server.wait(timeout=60) == 0
    by_id = {line["id"]: line for line in map(json.loads, answers.read_text().splitlines())}
    assert [tool["name"] for tool in by_id[2]["result"]["tools"]] == ["shout", "echo"]


def test_a_message_past_the_line_limit_is_dropped_and_the_server_goes_on() -> None:
    huge = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"x": "a" * LINE_LIMIT}}
    listing = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
    server = subprocess.Popen([sys.executable, str(CHATTER)], stdin=PIPE, stdout=PIPE, stderr=PIPE)
    assert server.stdin is not None and server.stdout is not None
    for message in (*HANDSHAKE, huge, listing):
        server.stdin.write(json.dumps(message).encode() + b"\n")
    server.stdin.flush()
    answers = [json.loads(server.stdout.readline()) for _ in range(2)]  # stdin open till then
    _, err = server.communicate(timeout=60)
    assert [answer["id"] for answer in answers] == [1, 3]
    assert [tool["name"] for tool in answers[1]["result"]["tools"]] == ["shout", "echo"]
    assert f"dropped a message of more than {LINE_LIMIT} bytes from stdin" in err.decode()


def test_the_transport_eval_times_both_transports() -> None:
    """`evals/stdio_transport.py` runs its floor server on each transport and times each."""
    done = subprocess.run(
        [sys.executable, str(EVALS / "stdio_transport.py"), "--rounds", "2", "--calls", "5"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "a do-nothing tool call over stdio, 2 x 5 calls each"
    assert [line.split(" p50 ")[0].strip() for line in lines[1:3]] == [
        "scoperag (loop-polled pipes)",
        "FastMCP / MCP SDK (worker threads)",
    ]
    assert lines[3].startswith("  saved per call (p50): ")


def test_only_pipes_and_sockets_are_polled_by_the_loop(tmp_path: Path) -> None:
    """A terminal or a regular file as stdin or stdout leaves the SDK's transport in charge."""
    read_end, write_end = os.pipe()
    left, right = socket.socketpair()
    terminal, console = pty.openpty()
    with left, right, (tmp_path / "file").open("wb") as regular:
        try:
            descriptors = [read_end, write_end, left.fileno(), console, regular.fileno()]
            assert [_pollable(fd) for fd in descriptors] == [True, True, True, False, False]
        finally:
            for fd in (read_end, write_end, terminal, console):
                os.close(fd)
