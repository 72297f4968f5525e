"""Docs profile figures: ingest throughput and search latency (in process, HTTP, MCP).

Writes the fixture generator's JSONL, ingests it into a fresh store on one engine, then times
searches with the docs_search_filters/v1 filters through `DocsService.search`, through
`POST /v2/docs/search/l0` on a real uvicorn server, and through `elf_docs_search_l0` (MCP, in
memory). Prints p50/p95 per filter mix, throughput and peak memory.

    python evals/bench_docs.py --count 3000 --backend local --queries 40
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from make_docs_fixture import write_jsonl  # beside this script

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

QUERIES = [
    "how do we restart the workers when the queue backs up",
    "root cause of the outage and the action items",
    "who owns the migration backfill",
    "idempotency key for enqueueing jobs",
    "local setup for new team members",
    "alert on consumer lag",
    "decision on the shared client library",
    "error budget numbers for the next meeting",
]
FILTER_MIXES: dict[str, dict[str, str]] = {
    "status default only": {},
    "scope": {"scope": "project_shared"},
    "agent + doc_type": {"agent_id": "agent-gale", "doc_type": "runbook"},
    "date window": {
        "updated_after": "2025-05-01T00:00:00+02:00",
        "updated_before": "2025-08-01T00:00:00Z",
    },
    "all filters": {
        "scope": "org_shared",
        "status": "archived",
        "doc_type": "incident_report",
        "updated_after": "2025-01-01T00:00:00Z",
        "updated_before": "2026-06-01T00:00:00-05:00",
    },
}


def _percentiles(samples: list[float]) -> str:
    ms = sorted(sample * 1000 for sample in samples)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return f"p50 {statistics.median(ms):7.2f} ms  p95 {p95:7.2f} ms  (n={len(ms)})"


async def _time_calls(
    call: Callable[[dict], Awaitable[Any]], count: int, extra: dict
) -> list[float]:
    samples = []
    for number in range(count):
        arguments = {"query": QUERIES[number % len(QUERIES)], "top_k": 10, **extra}
        start = time.perf_counter()
        await call(arguments)
        samples.append(time.perf_counter() - start)
    return samples


def _serve(app: Any) -> tuple[Any, str]:
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start within 30 s")
        time.sleep(0.05)
    return server, f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"


async def _searches(runtime: Any, queries: int) -> None:
    import httpx
    from fastmcp import Client

    from scoperag.server.http.app import build_http_app
    from scoperag.server.mcp.app import build_server
    from scoperag.server.profiles.docs.filters import DocsSearchRequest
    from scoperag.server.profiles.docs.service import DocsService
    from scoperag.server.profiles.docs.tools import SEARCH_PATH

    tools = DocsService(runtime)
    tools.search(DocsSearchRequest(query="warm up"))

    async def in_process(arguments: dict) -> Any:
        return tools.search(DocsSearchRequest.model_validate(arguments))

    server, base_url = _serve(build_http_app(runtime, build_server(runtime)))
    async with (
        httpx.AsyncClient(base_url=base_url, timeout=60) as http,
        Client(build_server(runtime)) as mcp,
    ):

        async def over_http(arguments: dict) -> Any:
            response = await http.post(SEARCH_PATH, json=arguments)
            response.raise_for_status()
            return response.json()

        async def over_mcp(arguments: dict) -> Any:
            return await mcp.call_tool("elf_docs_search_l0", arguments)

        for label, extra in FILTER_MIXES.items():
            hits = len((await over_http({"query": QUERIES[0], "top_k": 10, **extra}))["hits"])
            print(f"\n{label} {extra or ''} -> {hits} hits")
            for name, call in (("in process", in_process), ("HTTP", over_http), ("MCP", over_mcp)):
                print(f"  {name:10} {_percentiles(await _time_calls(call, queries, extra))}")
    server.should_exit = True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=3000, help="Documents to generate.")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--backend", choices=["local", "edge"], default="local")
    parser.add_argument("--queries", type=int, default=40, help="Timed queries per filter mix.")
    args = parser.parse_args()

    from scoperag.core.config.settings import Settings
    from scoperag.pipelines.docs import ingest_docs_jsonl
    from scoperag.server.runtime import Runtime

    work = Path(tempfile.mkdtemp(prefix="bench-docs-"))
    path = work / "docs.jsonl"
    with path.open("w", encoding="utf-8") as out:
        write_jsonl(out, args.count, args.seed)
    from bench_timing import TimedEmbedder  # every call's query embedded, repeated or not

    settings = Settings(data_dir=work / "store", backend=args.backend, profiles=["docs"])
    runtime = Runtime(settings, embedder=TimedEmbedder(settings))
    runtime.embedder.embed_query("load the model before timing")

    wall, cpu = time.perf_counter(), time.process_time()
    report = ingest_docs_jsonl(path, runtime.backend, runtime.embedder)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"engine {args.backend}, {os.cpu_count()} cores, fixture seed {args.seed}")
    print(
        f"ingest: {report.documents} documents, {report.chunks} chunks in {wall:.1f} s wall "
        f"({cpu:.1f} s CPU): {report.documents / wall:.1f} docs/s, {report.chunks / wall:.1f} "
        "chunks/s"
    )
    asyncio.run(_searches(runtime, args.queries))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak memory (max RSS): {peak:.0f} MiB")
    runtime.close()


if __name__ == "__main__":
    main()
