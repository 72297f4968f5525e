"""What FastMCP's stdio server costs per tool call, against a bare floor.

`evals/mcp_floor_server.py` (one tool that does nothing) runs on FastMCP over stdio as
`scoperag serve` does, and as a bare loop of blocking line reads and writes answering with
canned JSON-RPC results (no MCP library). Both are timed through FastMCP's stdio client in
alternated rounds, so background load hits both alike. Prints p50 and p95 of each, and the
difference of the p50s: what the server's MCP layer and transport add to every call.

    python evals/stdio_transport.py [--rounds 6] [--calls 200] [--busy]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

from bench_timing import cpu_burner  # noqa: E402
from fastmcp import Client  # noqa: E402
from fastmcp.client.transports import StdioTransport  # noqa: E402
from memory_bench import percentile  # noqa: E402

FLOOR_SERVER = Path(__file__).with_name("mcp_floor_server.py")
TRANSPORTS = {"FastMCP stdio (scoperag serve)": [], "bare JSON-RPC loop (floor)": ["bare"]}
WARM_UP = 30


async def _time_calls(client: Client, calls: int) -> list[float]:
    """Milliseconds of `calls` calls of the do-nothing tool, one after another."""
    times = []
    for _ in range(calls):
        began = time.perf_counter()
        await client.call_tool("nothing", {})
        times.append((time.perf_counter() - began) * 1000)
    return times


async def measure(rounds: int, calls: int) -> dict[str, list[float]]:
    """Each transport's call times, its server launched once, measured in alternated rounds."""
    times: dict[str, list[float]] = {name: [] for name in TRANSPORTS}
    clients = {
        name: Client(StdioTransport(sys.executable, [str(FLOOR_SERVER), *extra]))
        for name, extra in TRANSPORTS.items()
    }
    for client in clients.values():
        await client.__aenter__()
    try:
        for client in clients.values():
            await _time_calls(client, WARM_UP)
        for index in range(rounds):
            order = list(clients) if index % 2 == 0 else list(reversed(clients))
            for name in order:
                times[name] += await _time_calls(clients[name], calls)
    finally:
        for client in clients.values():
            await client.__aexit__(None, None, None)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=6, help="alternated rounds")
    parser.add_argument("--calls", type=int, default=200, help="calls per transport per round")
    parser.add_argument("--busy", action="store_true", help="keep one core busy meanwhile")
    args = parser.parse_args()
    with cpu_burner(args.busy):
        times = asyncio.run(measure(args.rounds, args.calls))
    load = " while another process keeps one core busy" if args.busy else ""
    print(f"a do-nothing tool call over stdio, {args.rounds} x {args.calls} calls each{load}")
    p50s = []
    for name, values in times.items():
        p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
        p50s.append(p50)
        print(f"  {name:36} p50 {p50:5.2f} ms  p95 {p95:5.2f} ms  p95/p50 {p95 / p50:4.2f}")
    print(f"  FastMCP's server side per call (p50): {p50s[0] - p50s[1]:.2f} ms")


if __name__ == "__main__":
    main()
