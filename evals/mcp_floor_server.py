"""The cheapest MCP tool call there is, for the evals to time beside the services.

A FastMCP server with one tool that returns a fixed short text (no search, no storage, no
structured output), served over stdio as `scoperag serve` serves (FastMCP's stdio transport):
its call time is what any FastMCP tool call costs here over stdio, the floor under scoperag's
figures. With `bare`, the same answers come from a loop of blocking line reads and writes with
no MCP library at all: the floor under FastMCP's own share, for `evals/stdio_transport.py`.

    python evals/mcp_floor_server.py        # what the evals launch
    python evals/mcp_floor_server.py bare   # canned JSON-RPC answers, no MCP server library
"""

from __future__ import annotations

import json
import os
import sys

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

NOTHING = {"name": "nothing", "description": "Do nothing.", "inputSchema": {"type": "object"}}
BARE_RESULTS = {
    "initialize": {
        "protocolVersion": "2025-06-18",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "mcp-floor-bare", "version": "1"},
    },
    "tools/list": {"tools": [NOTHING]},
    "tools/call": {"content": [{"type": "text", "text": "nothing"}], "isError": False},
}


def serve_bare() -> None:
    """Answer each request line with its canned result (`{}` for any other method)."""
    for line in sys.stdin:
        request = json.loads(line)
        if "id" in request:
            if request["method"] == "initialize":  # the version the client asked for
                BARE_RESULTS["initialize"]["protocolVersion"] = request["params"]["protocolVersion"]
            result = BARE_RESULTS.get(request["method"], {})
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}))
            sys.stdout.write("\n")
            sys.stdout.flush()


def serve_fastmcp() -> None:
    """The do-nothing tool on FastMCP, over stdio as `scoperag serve` runs it."""
    from fastmcp import FastMCP

    from scoperag.server.cli.terminal import serve_stdio

    server = FastMCP("mcp-floor")

    @server.tool
    def nothing() -> str:
        """Do nothing, answer at once."""
        return "nothing"

    serve_stdio(server)


if __name__ == "__main__":
    serve_bare() if sys.argv[1:] == ["bare"] else serve_fastmcp()
