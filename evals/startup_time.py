"""Time from launching `scoperag serve` (stdio) to `tools/list`, and to a first real search.

python evals/startup_time.py [RUNS]
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from fastmcp import Client
from fastmcp.client.transports import StdioTransport


async def once(data_dir: str) -> tuple[float, float]:
    script = shutil.which("scoperag", path=str(Path(sys.executable).parent)) or "scoperag"
    env = {**os.environ, "SCOPERAG_DATA_DIR": data_dir, "FASTMCP_CHECK_FOR_UPDATES": "off"}
    started = time.perf_counter()
    async with Client(StdioTransport(command=script, args=["serve"], env=env)) as client:
        await client.list_tools()
        listed = time.perf_counter() - started
        await client.call_tool("qdrant-store", {"information": "warm-up note"})
        await client.call_tool("qdrant-find", {"query": "warm-up"})
        searched = time.perf_counter() - started
    return listed, searched


async def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    results = [await once(tempfile.mkdtemp()) for _ in range(runs)]
    listed = [r[0] for r in results]
    searched = [r[1] for r in results]
    print(
        f"launch -> tools/list: median {statistics.median(listed):.2f} s "
        f"(min {min(listed):.2f}, max {max(listed):.2f}) over {runs} runs, all profiles on"
    )
    print(
        "launch -> first qdrant-store + qdrant-find (model loaded, store opened): "
        f"median {statistics.median(searched):.2f} s"
    )


if __name__ == "__main__":
    asyncio.run(main())
