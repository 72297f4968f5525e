"""Memories written at once by several stdio servers on one data dir: refusals and shared keys.

    python evals/memory_writers.py [--processes 4] [--writers 2] [--calls 50]

Starts `--processes` `scoperag serve` stdio servers (profile memory) on a fresh data dir; each
runs `--writers` clients' worth of concurrent `store_memory` calls, `--calls` each, all at once
(the first writes create the collection at the same moment). Prints the calls, the refusals
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
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

from fastmcp import Client  # noqa: E402
from fastmcp.client.transports import StdioTransport  # noqa: E402

from scoperag.core import engine_models as models  # noqa: E402
from scoperag.core.contracts.memory import COLLECTION, ORDER_KEY, TIME_KEY  # noqa: E402
from scoperag.core.settings import Settings  # noqa: E402
from scoperag.pipelines.memory_order import SLOT_BITS, order_base  # noqa: E402
from scoperag.server.runtime import Runtime  # noqa: E402


def _server(data_dir: Path) -> Client:
    script = shutil.which("scoperag", path=str(Path(sys.executable).parent)) or "scoperag"
    env = {**os.environ, "SCOPERAG_DATA_DIR": str(data_dir), "SCOPERAG_PROFILES": "memory"}
    return Client(StdioTransport(script, ["serve"], env=env, keep_alive=False), timeout=300)


async def _writer(client: Client, name: str, calls: int, errors: list[str]) -> None:
    for n in range(calls):
        result = await client.call_tool(
            "store_memory", {"content": f"{name}: memory {n}"}, raise_on_error=False
        )
        if result.is_error:
            errors.append(str(result.content[0].text if result.content else result))


async def main(args: argparse.Namespace) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="scoperag-writers-"))
    clients = [_server(data_dir) for _ in range(args.processes)]
    errors: list[str] = []
    try:
        for client in clients:
            await client.__aenter__()
        started = time.perf_counter()
        await asyncio.gather(
            *(
                _writer(client, f"process {p} writer {w}", args.calls, errors)
                for p, client in enumerate(clients)
                for w in range(args.writers)
            )
        )
        seconds = time.perf_counter() - started
    finally:
        for client in clients:
            await client.__aexit__(None, None, None)
    runtime = Runtime(Settings(data_dir=data_dir, profiles=["memory"]))
    order = models.OrderBy(key=ORDER_KEY, direction=models.Direction.DESC)
    records = runtime.backend.scroll(COLLECTION, None, 1_000_000, order_by=order)
    runtime.close()
    shutil.rmtree(data_dir, ignore_errors=True)
    keys = [(record.payload or {})[ORDER_KEY] for record in records]
    times = [(record.payload or {})[TIME_KEY] for record in records]
    shared = sum(n for n in collections.Counter(keys).values() if n > 1)
    in_time_order = [k >> SLOT_BITS for k in keys] == [order_base(t) >> SLOT_BITS for t in times]
    calls = args.processes * args.writers * args.calls
    print(f"writers: {args.processes} processes x {args.writers} = {args.processes * args.writers}")
    print(f"calls: {calls} in {seconds:.1f} s; refusals: {len(errors)}")
    if errors:
        print(f"  first: {errors[0][:200]}")
    print(f"memories stored: {len(records)} (expected {calls - len(errors)})")
    print(f"sharing a created_order: {shared}")
    print(f"newest-first follows creation time (to the ms): {in_time_order}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--writers", type=int, default=2, help="concurrent writers per process")
    parser.add_argument("--calls", type=int, default=50, help="store_memory calls per writer")
    asyncio.run(main(parser.parse_args()))
