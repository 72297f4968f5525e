"""How fast MCP ingestion refuses an over-cap source and stops inside a file when cancelled.

    python evals/ingest_limits.py [--pages 200] [--words 2000]

Through FastMCP's in-memory client on a fresh data dir:
- a 2 GiB sparse PDF given to `qdrant-ingest-pdf` (refused by SCOPERAG_MAX_SOURCE_MB): the
  call's time (median of 3, after one call that loads the pipeline);
- a memories file of 1,000,000 bad items (refused by SCOPERAG_MAX_ITEMS), and one of 100,000
  (at the cap: each item reported, the report listing 100): the call's time and result size;
- a PDF of `--pages` pages of `--words` words: the client cancels `--cancel-after` seconds into
  the call, and a middleware sees when the server's handler returns (its work stopped): the
  seconds from the cancel to that return, and whether anything of the PDF was written.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the text PDF maker

from fastmcp import Client  # noqa: E402
from fastmcp.server.middleware import Middleware  # noqa: E402
from text_pdf import text_pdf  # noqa: E402

from scoperag.core.config.settings import Settings  # noqa: E402
from scoperag.server.mcp.app import build_server  # noqa: E402
from scoperag.server.runtime import Runtime  # noqa: E402


class CallEnds(Middleware):
    """Records when each tool call's handler returns (or raises)."""

    def __init__(self) -> None:
        self.ends: dict[str, float] = {}

    async def on_call_tool(self, context, call_next):  # noqa: ANN001, ANN201
        try:
            return await call_next(context)
        finally:
            self.ends[context.message.name] = time.perf_counter()


async def _timed(client: Client, tool: str, arguments: dict) -> tuple[float, int, bool]:
    started = time.perf_counter()
    result = await client.call_tool(tool, arguments, raise_on_error=False)
    size = len(json.dumps(result.structured_content)) if result.structured_content else 0
    size = size or sum(len(getattr(part, "text", "")) for part in result.content)
    return time.perf_counter() - started, size, result.is_error


async def main(args: argparse.Namespace) -> None:
    root = Path(tempfile.mkdtemp(prefix="scoperag-limits-"))
    allowed = root / "allowed"
    allowed.mkdir()
    with (allowed / "huge.pdf").open("wb") as file:
        file.truncate(2 << 30)
    bad = json.dumps([{"no content": n} for n in range(1_000_000)])
    (allowed / "million.json").write_text(bad)
    (allowed / "at-cap.json").write_text(json.dumps([{"no content": n} for n in range(100_000)]))
    text_pdf(allowed / "long.pdf", args.pages, args.words)
    settings = Settings(data_dir=root / "data", allowed_dirs=[allowed], profiles=["pdf", "memory"])
    runtime = Runtime(settings)
    server = build_server(runtime)
    ends = CallEnds()
    server.add_middleware(ends)
    async with Client(server) as client:
        pdf = {"paths": [str(allowed / "huge.pdf")]}
        await _timed(client, "qdrant-ingest-pdf", pdf)
        times = [(await _timed(client, "qdrant-ingest-pdf", pdf))[0] for _ in range(3)]
        print(f"2 GiB sparse PDF refused in {statistics.median(times) * 1000:.1f} ms")
        for name in ("million.json", "at-cap.json"):
            took, size, error = await _timed(
                client, "ingest_memories", {"path": str(allowed / name)}
            )
            what = "refused" if error else "reported"
            print(
                f"{name} ({(allowed / name).stat().st_size / 2**20:.1f} MiB): {what} in "
                f"{took:.2f} s, result {size / 1024:.1f} KiB"
            )

        task = asyncio.create_task(
            client.call_tool("qdrant-ingest-pdf", {"paths": [str(allowed / "long.pdf")]})
        )
        await asyncio.sleep(args.cancel_after)
        cancelled_at = time.perf_counter()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        while ends.ends.get("qdrant-ingest-pdf", 0.0) < cancelled_at:
            await asyncio.sleep(0.01)
        stalled = ends.ends["qdrant-ingest-pdf"] - cancelled_at
        listing = await client.call_tool("qdrant-list-documents", {})
        documents = [d["document_id"] for d in listing.structured_content["documents"]]
        print(
            f"{args.pages}-page PDF ({args.pages * args.words:,} words): cancelled at "
            f"{args.cancel_after:g} s, the handler returned {stalled:.2f} s later; documents "
            f"written: {documents}"
        )
    runtime.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--words", type=int, default=2000, help="words per page")
    parser.add_argument("--cancel-after", type=float, default=3.0, help="seconds into the call")
    asyncio.run(main(parser.parse_args()))
