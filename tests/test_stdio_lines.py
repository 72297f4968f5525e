"""Every line `scoperag serve` reads over stdio gets an answer, and the MCP SDK's own stdio
reader still drops the lines it cannot read (the gap in `docs/upstream.md`)."""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from subprocess import PIPE

from mcp_handshake import HANDSHAKE

from scoperag.server.mcp.stdio_lines import check_line

DEADLINE = 10  # seconds for an answer to arrive at all; not a measure of speed
SURROGATE_CALL = (
    b'{"jsonrpc":"2.0","id":2,"method":"tools/call",'
    b'"params":{"name":"echo","arguments":{"text":"\\ud800"}}}\n'
)
BARE_FASTMCP = """
import os
os.environ["FASTMCP_CHECK_FOR_UPDATES"] = "off"
from fastmcp import FastMCP
server = FastMCP("bare")
@server.tool
def echo(text: str) -> str:
    return text
server.run(transport="stdio", show_banner=False, log_level="WARNING")
"""


class Wire:
    """A server process's stdin and its answers, read with a deadline."""

    def __init__(self, command: list[str], env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(command, stdin=PIPE, stdout=PIPE, env=env)
        self.answers: queue.Queue[dict | AssertionError] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        """Every line the server writes, as JSON; one that is not is an answer that fails."""
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                self.answers.put(json.loads(line))
            except ValueError as exc:
                self.answers.put(AssertionError(f"the server wrote {line[:200]!r}: {exc}"))

    def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line)
        self.process.stdin.flush()

    def answer(self) -> dict:
        try:
            answer = self.answers.get(timeout=DEADLINE)
        except queue.Empty:
            raise AssertionError(f"no answer within {DEADLINE} s") from None
        if isinstance(answer, AssertionError):
            raise answer
        return answer

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=60)


def _handshake(wire: Wire) -> None:
    for message in HANDSHAKE:
        wire.send(json.dumps(message).encode() + b"\n")
    assert wire.answer()["id"] == 1


def test_scoperag_serve_answers_lines_the_sdk_would_drop(tmp_path: Path) -> None:
    script = shutil.which("scoperag", path=str(Path(sys.executable).parent))
    assert script, "the scoperag console script is not installed"
    env = {**os.environ, "SCOPERAG_DATA_DIR": str(tmp_path), "SCOPERAG_PROFILES": "pdf"}
    wire = Wire([script, "serve"], env)
    _handshake(wire)
    wire.send(SURROGATE_CALL.replace(b'"echo"', b'"qdrant-find"').replace(b"text", b"query"))
    surrogate = wire.answer()
    wire.send(b'{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"\xff":1}}\n')
    not_utf8 = wire.answer()
    wire.send(b"\xc3\x28 not even json\n")
    garbage = wire.answer()
    wire.send(json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}).encode() + b"\n")
    listing = wire.answer()
    assert wire.close() == 0

    assert surrogate["id"] == 2 and surrogate["error"]["code"] == -32700
    assert "lone surrogate escape (\\ud800)" in surrogate["error"]["message"]
    assert not_utf8["id"] == 3 and not_utf8["error"]["code"] == -32700
    assert "not valid UTF-8 (byte 0xff" in not_utf8["error"]["message"]
    assert garbage["id"] is None and "not valid UTF-8 (byte 0xc3 at offset 0)" in str(garbage)
    assert listing["id"] == 4 and "qdrant-find" in {t["name"] for t in listing["result"]["tools"]}


def test_each_problem_is_named_with_the_request_id_when_it_is_found() -> None:
    assert check_line(b'{"jsonrpc":"2.0","id":"a","method":"ping"}\n')[0] is not None
    assert check_line(b"\n") == (None, None)  # a blank line is no message and needs no answer
    text, (request_id, code, problem) = check_line(b'{"id":"a","method":"ping"}')
    assert (text, request_id, code) == (None, "a", -32600)
    assert problem.startswith("the line is JSON but not a JSON-RPC 2.0 message: ")
    assert problem.rsplit(": ", 1)[0].endswith("jsonrpc")  # names the field (pydantic's words)
    assert check_line(b'{"id":true,"x":"\\udfff"}')[1][:2] == (None, -32700)
    assert check_line(b"[1,")[1][:2] == (None, -32700)


def test_upstream_the_sdk_stdio_reader_drops_a_lone_surrogate() -> None:
    """FastMCP's own stdio transport leaves a request holding `\\ud800` unanswered and turns
    bytes that are not UTF-8 into U+FFFD. When this test fails, upstream answers such lines:
    `server/mcp/stdio_lines.py` can go (see docs/upstream.md)."""
    wire = Wire([sys.executable, "-c", BARE_FASTMCP])
    _handshake(wire)
    wire.send(SURROGATE_CALL)
    wire.send(b'{"jsonrpc":"2.0","id":3,"method":"tools/call",')
    wire.send(b'"params":{"name":"echo","arguments":{"text":"\xff"}}}\n')
    replaced = wire.answer()
    assert wire.close() == 0
    assert replaced["id"] == 3, "the request with \\ud800 was answered: upstream reads it now"
    assert replaced["result"]["structuredContent"]["result"] == "\ufffd"
    assert wire.answers.empty()


def test_upstream_fastmcp_runs_stdio_as_the_adapter_repeats() -> None:
    """`serve_checked_stdio` repeats `FastMCP.run_stdio_async` with its own stdin, through
    FastMCP's private `_lifespan_manager` and `_mcp_server` (FastMCP has no public way to serve
    other streams). When this test fails, FastMCP changed those steps: follow them there."""
    import inspect

    from fastmcp import FastMCP

    steps = inspect.getsource(FastMCP.run_stdio_async)
    for step in (
        'set_transport("stdio")',
        "self._lifespan_manager()",
        "stdio_server()",
        "self._mcp_server.run(",
        "self._mcp_server.create_initialization_options()",
    ):
        assert step in steps, step
    server = FastMCP("probe")
    assert callable(server._lifespan_manager) and callable(server._mcp_server.run)
