"""MCP over stdio as `scoperag serve` runs it (FastMCP's stdio transport): the real FastMCP
client talking to a real server process, and the process's standard streams."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from subprocess import PIPE

from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from mcp_handshake import HANDSHAKE

CHATTER = Path(__file__).with_name("stdio_chatter.py")
EVALS = Path(__file__).resolve().parents[1] / "evals"
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


def test_the_server_ends_at_end_of_input_leaving_the_wire_blocking() -> None:
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


def test_a_regular_file_as_stdout_is_served(tmp_path: Path) -> None:
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


def test_a_line_that_is_not_json_rpc_is_answered_and_the_server_goes_on() -> None:
    listing = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
    lines = [*(json.dumps(message) for message in HANDSHAKE), "not json", json.dumps(listing)]
    server = subprocess.Popen([sys.executable, str(CHATTER)], stdin=PIPE, stdout=PIPE)
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write("".join(line + "\n" for line in lines).encode())
    server.stdin.flush()
    answers = [json.loads(server.stdout.readline()) for _ in range(3)]  # stdin open till then
    server.stdin.close()
    assert server.wait(timeout=60) == 0
    assert [answer["id"] for answer in answers] == [1, None, 3]
    assert answers[1]["error"]["code"] == -32700 and "not JSON" in answers[1]["error"]["message"]
    assert [tool["name"] for tool in answers[2]["result"]["tools"]] == ["shout", "echo"]


def test_the_transport_eval_prints_a_figure_for_each_server() -> None:
    """`evals/stdio_transport.py` times its do-nothing tool on FastMCP and on a bare floor."""
    done = subprocess.run(
        [sys.executable, str(EVALS / "stdio_transport.py"), "--rounds", "2", "--calls", "5"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert sum(" p50 " in line and " ms" in line for line in done.stdout.splitlines()) == 2
