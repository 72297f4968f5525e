"""Memories written at once by several stdio servers on one data dir: refusals and shared keys.

    python evals/memory_writers.py [--http-clients 4] [--processes 2] [--writers 2] [--calls 50]

Starts one `scoperag serve --transport http` server and `--processes` stdio servers (profile
memory) on a fresh data dir; `--http-clients` HTTP clients and `--writers` writers in each stdio
server make concurrent `store_memory` calls, `--calls` each, all at once (the first writes
create the collection at the same moment). Prints the calls, the refusals
(error results, with the first message), the memories stored, how many share a
`created_order` with another, and whether newest-first order follows the creation times to the
millisecond (one millisecond's memories come in the order written).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

from fastmcp import Client  # noqa: E402
from fastmcp.client.transports import StdioTransport  # noqa: E402
from qdrant_client import models  # noqa: E402

from scoperag.core.config.settings import Settings  # noqa: E402
from scoperag.core.contracts.memory import COLLECTION, ORDER_KEY, TIME_KEY  # noqa: E402
from scoperag.pipelines.memory_order import SLOT_BITS, order_base  # noqa: E402
from scoperag.server.runtime import Runtime  # noqa: E402

SCRIPT = shutil.which("scoperag", path=str(Path(sys.executable).parent)) or "scoperag"


def _env(data_dir: Path) -> dict[str, str]:
    return {**os.environ, "SCOPERAG_DATA_DIR": str(data_dir), "SCOPERAG_PROFILES": "memory"}


def _server(data_dir: Path) -> Client:
    transport = StdioTransport(SCRIPT, ["serve"], env=_env(data_dir), keep_alive=False)
    return Client(transport, timeout=300)


def _http_server(data_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    args = [SCRIPT, "serve", "--transport", "http", "--port", str(port)]
    return subprocess.Popen(args, env=_env(data_dir)), f"http://127.0.0.1:{port}/mcp"


async def _listening(url: str) -> None:
    """Wait until the HTTP server answers (without writing anything)."""
    for _ in range(600):
        try:
            async with Client(url, timeout=60) as client:
                await client.list_tools()
                return
        except Exception:
            await asyncio.sleep(0.2)
    raise TimeoutError(f"{url} did not answer")


async def _writer(client: Client, name: str, calls: int, errors: list[str]) -> None:
    for n in range(calls):
        result = await client.call_tool(
            "store_memory", {"content": f"{name}: memory {n}"}, raise_on_error=False
        )
        if result.is_error:
            errors.append(str(result.content[0].text if result.content else result))


async def main(args: argparse.Namespace) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="scoperag-writers-"))
    http, url = _http_server(data_dir)
    clients = [_server(data_dir) for _ in range(args.processes)]
    writers = [
        (f"process {p} writer {w}", client)
        for p, client in enumerate(clients)
        for w in range(args.writers)
    ]
    http_clients = [Client(url, timeout=300) for _ in range(args.http_clients)]
    writers += [(f"http client {n}", client) for n, client in enumerate(http_clients)]
    errors: list[str] = []
    try:
        await _listening(url)
        for client in clients + http_clients:
            await client.__aenter__()
        started = time.perf_counter()
        await asyncio.gather(*(_writer(c, name, args.calls, errors) for name, c in writers))
        seconds = time.perf_counter() - started
    finally:
        for client in clients + http_clients:
            await client.__aexit__(None, None, None)
        http.terminate()
        http.wait()
    runtime = Runtime(Settings(data_dir=data_dir, profiles=["memory"]))
    order = models.OrderBy(key=ORDER_KEY, direction=models.Direction.DESC)
    records = runtime.backend.scroll(COLLECTION, None, 1_000_000, order_by=order)
    runtime.close()
    shutil.rmtree(data_dir, ignore_errors=True)
    keys = [(record.payload or {})[ORDER_KEY] for record in records]
    times = [(record.payload or {})[TIME_KEY] for record in records]
    shared = sum(n for n in collections.Counter(keys).values() if n > 1)
    in_time_order = [k >> SLOT_BITS for k in keys] == [order_base(t) >> SLOT_BITS for t in times]
    calls = len(writers) * args.calls
    print(
        f"writers: {len(writers)} ({args.http_clients} HTTP clients of one server, "
        f"{args.processes} stdio servers x {args.writers})"
    )
    print(f"calls: {calls} in {seconds:.1f} s; refusals: {len(errors)}")
    if errors:
        print(f"  first: {errors[0][:200]}")
    print(f"memories stored: {len(records)} (expected {calls - len(errors)})")
    print(f"sharing a created_order: {shared}")
    print(f"newest-first follows creation time (to the ms): {in_time_order}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http-clients", type=int, default=4, help="clients of the HTTP server")
    parser.add_argument("--processes", type=int, default=2, help="stdio servers")
    parser.add_argument("--writers", type=int, default=2, help="concurrent writers per process")
    parser.add_argument("--calls", type=int, default=50, help="store_memory calls per writer")
    asyncio.run(main(parser.parse_args()))
