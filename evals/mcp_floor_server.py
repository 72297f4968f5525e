"""The cheapest MCP tool call there is, for `evals/peer_memory.py` to time beside the services.

A FastMCP server over stdio with one tool that returns a fixed short text: no search, no
storage, no structured output. Its call time is what any FastMCP tool call costs here over
stdio (the client's and the server's JSON-RPC layers and the pipe): the floor under scoperag's
figures. (A server in another language could save part of the server's share, not the
client's.)

    python evals/mcp_floor_server.py       # what the eval launches
"""

from __future__ import annotations

import os

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

from fastmcp import FastMCP  # noqa: E402

server = FastMCP("mcp-floor")


@server.tool
def nothing() -> str:
    """Do nothing, answer at once."""
    return "nothing"


if __name__ == "__main__":
    server.run(show_banner=False)
