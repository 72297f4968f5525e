"""The cheapest MCP tool call there is, for `evals/peer_memory.py` to time beside the services.

A FastMCP server over stdio with one tool that returns a fixed short text: no search, no
storage, no structured output. Its call time is what any FastMCP tool call costs here over
stdio (the client's and the server's JSON-RPC layers and the pipe): the floor under scoperag's
figures. It runs on the transport `scoperag serve` runs on (`scoperag.server.stdio_pipes`);
with `sdk`, on FastMCP's own (the MCP SDK's `stdio_server`, a worker thread per line read,
write and flush), for `evals/stdio_transport.py` to compare. (A server in another language could
save part of the server's share, not the client's.)

    python evals/mcp_floor_server.py        # what the evals launch
    python evals/mcp_floor_server.py sdk    # the same server on FastMCP's own stdio transport
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

import anyio  # noqa: E402
from fastmcp import FastMCP  # noqa: E402

from scoperag.server.stdio_pipes import serve_stdio  # noqa: E402

server = FastMCP("mcp-floor")


@server.tool
def nothing() -> str:
    """Do nothing, answer at once."""
    return "nothing"


if __name__ == "__main__":
    if sys.argv[1:] == ["sdk"]:
        server.run(show_banner=False, log_level="WARNING")
    else:
        anyio.run(serve_stdio, server)
