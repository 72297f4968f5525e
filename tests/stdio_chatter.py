"""A FastMCP server served as `scoperag serve` serves stdio, whose tool prints to stdout: the wire
must stay clean. Launched by `tests/test_stdio_transport.py` (`python tests/stdio_chatter.py`)."""

from __future__ import annotations

import os
import subprocess
import sys

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

from fastmcp import FastMCP  # noqa: E402

from scoperag.server.cli.terminal import serve_stdio  # noqa: E402

server = FastMCP("chatter")


@server.tool
def shout(text: str) -> int:
    """Print to stdout, from this process and from a child, and return the text's length."""
    print(f"stray line from the server, {len(text)} characters", flush=True)
    subprocess.run([sys.executable, "-c", "print('stray line from a child')"], check=True)
    return len(text)


@server.tool
def echo(text: str) -> str:
    """The text as it came."""
    return text


if __name__ == "__main__":
    serve_stdio(server)
