"""Where a tool call's time goes: embedding, engine, glue (our code) and MCP (both ends' layers).

`TimedEmbedder` (the real model) and `TimedBackend` (a proxy of the real engine) add up the
seconds spent inside them; the backend proxy also times the vector stores it hands out and
remembers the last vector query (vector, filter, top-k), so it can be replayed straight on the
engine. `HandlerClock` times the tools' handlers (our code, in their worker thread): glue is the
handler's time less embedding and engine, MCP the call's time less the handler's. All of it runs
on any checkout of scoperag (`bench.py --before`).
"""

from __future__ import annotations

import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from qdrant_client import models

from scoperag.core.embedding.embedders import Embedder
from scoperag.core.engine.backend import VectorBackend
from scoperag.core.engine.vector_names import DENSE_VECTOR

PARTS = ("embedding", "engine", "glue", "mcp")  # where a call's time goes
# part of "mcp": the client checking each result against the output schema (`ClientChecksClock`)
CLIENT_CHECKS = "client_checks"


@dataclass
class Clock:
    """Seconds spent in the embedder, the engine and the tools' handlers since the last reset."""

    embedding: float = 0.0
    engine: float = 0.0
    handler: float = 0.0
    client_checks: float = 0.0  # part of MCP: the client checking a result (`ClientChecksClock`)
    last_query: dict[str, Any] = field(default_factory=dict)

    def reset(self) -> None:
        self.embedding = self.engine = self.handler = self.client_checks = 0.0
        self.last_query = {}


def _timed(call: Callable[..., Any], clock: Clock, bucket: str) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        try:
            return call(*args, **kwargs)
        finally:
            setattr(clock, bucket, getattr(clock, bucket) + time.perf_counter() - began)

    return run


class TimedEmbedder(Embedder):
    """The real embedder, its query and text embedding time added to `clock` (once set).

    Every query is embedded by the model, as a question never asked before would be: the
    embedder's recent-queries memory is bypassed, so a benchmark's repeated questions are timed
    at their full cost."""

    clock = Clock()

    def embed_query(self, text: str) -> list[float]:
        return _timed(self.backend.embed_query, self.clock, "embedding")(text)

    def embed_texts(self, texts: list[str]) -> list[list[float]]:
        return _timed(super().embed_texts, self.clock, "embedding")(texts)


class _TimedStore:
    def __init__(self, store: Any, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    def query(self, query: Any, **kwargs: Any) -> Any:
        self._clock.last_query = {
            "vector": query.query_embedding,
            "filter": kwargs.get("qdrant_filters"),
            "top_k": query.similarity_top_k,
        }
        return _timed(self._store.query, self._clock, "engine")(query, **kwargs)

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._store, name)
        return _timed(attribute, self._clock, "engine") if callable(attribute) else attribute


class TimedBackend:
    """Proxy of a `VectorBackend`: every call (and every vector store call) timed as engine."""

    def __init__(self, backend: VectorBackend, clock: Clock) -> None:
        self.inner = backend
        self._clock = clock

    def vector_store(self, collection: str) -> _TimedStore:
        return _TimedStore(self.inner.vector_store(collection), self._clock)

    def search(self, request: Any) -> Any:
        self._clock.last_query = {
            "vector": request.dense,
            "filter": request.filter,
            "top_k": request.limit,
        }
        return _timed(self.inner.search, self._clock, "engine")(request)

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.inner, name)
        return _timed(attribute, self._clock, "engine") if callable(attribute) else attribute


class HandlerClock:
    """Adds the seconds each tool handler runs (in its worker thread) to `clock.handler`."""

    def __init__(self, clock: Clock) -> None:
        from scoperag.server.mcp import tooling

        run_in_thread = tooling.in_thread

        async def timed(handler: Callable[..., Any], *args: Any) -> Any:
            return await run_in_thread(_timed(handler, clock, "handler"), *args)

        tooling.in_thread = timed


class ClientChecksClock:
    """Adds to `clock.client_checks` the seconds the MCP client spends checking each result
    against the tool's output schema: the MCP SDK's jsonschema validation and FastMCP's typed
    parse of the structured content (part of the MCP figure; a client without them skips it)."""

    def __init__(self, clock: Clock) -> None:
        from fastmcp import Client
        from mcp.client.session import ClientSession

        for owner, name in (
            (ClientSession, "validate_tool_result"),
            (Client, "_parse_call_tool_result"),
        ):
            setattr(owner, name, _timed_async(getattr(owner, name), clock, CLIENT_CHECKS))


def _timed_async(call: Callable[..., Any], clock: Clock, bucket: str) -> Callable[..., Any]:
    async def run(*args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        try:
            return await call(*args, **kwargs)
        finally:
            setattr(clock, bucket, getattr(clock, bucket) + time.perf_counter() - began)

    return run


def raw_query(
    backend: VectorBackend, collection: str, vector: list[float], flt: Any, top_k: int
) -> list[str]:
    """The vector query straight on the engine (no LlamaIndex, no MCP); returns the point ids."""
    if backend.name == "edge":
        import qdrant_edge as edge

        from scoperag.core.engine.edge.conversion import to_edge_filter

        store = backend.edge_collection(collection)
        edge_filter = to_edge_filter(flt)
        points = store.client.query(
            edge.QueryRequest(
                limit=top_k,
                query=edge.Query.Nearest(vector, using=DENSE_VECTOR),
                filter=edge_filter,
                params=store.plan_search(edge_filter, top_k),
            )
        )
    else:
        points = backend.client.query_points(
            collection, query=vector, using=DENSE_VECTOR, query_filter=flt, limit=top_k
        ).points
    return [str(point.id) for point in points]


def edge_top_ids(
    backend: VectorBackend,
    collection: str,
    vector: list[float],
    flt: models.Filter | None,
    params: Any,
    top_k: int = 10,
) -> list[str]:
    """Top-k ids on Edge with explicit search params (None: the engine's defaults)."""
    import qdrant_edge as edge

    from scoperag.core.engine.edge.conversion import to_edge_filter

    points = backend.edge_collection(collection).client.query(
        edge.QueryRequest(
            limit=top_k,
            query=edge.Query.Nearest(vector, using=DENSE_VECTOR),
            filter=to_edge_filter(flt),
            params=params,
        )
    )
    return [str(point.id) for point in points]


def percentiles(seconds: list[float]) -> dict[str, float]:
    """p50 and p95 in milliseconds."""
    if not seconds:
        return {"p50": float("nan"), "p95": float("nan")}
    ms = sorted(1000 * s for s in seconds)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return {"p50": round(statistics.median(ms), 3), "p95": round(p95, 3)}


@contextmanager
def cpu_burner(busy: bool) -> Iterator[None]:
    """With `busy`, another process keeps one core busy meanwhile (the issue's p95 condition)."""
    if not busy:
        yield
        return
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        burner.kill()
        burner.wait()


async def measure_calls(
    runtime: Any,
    real: Any,
    scenario: Any,
    queries: list[str],
    clock: Clock,
    log: Callable[[str], None],
) -> dict:
    """Each of the scenario's calls through MCP (in-memory client): p50/p95 of every part."""
    from fastmcp import Client

    from scoperag.server.mcp.app import build_server

    runtime.embedder.clock = clock
    runtime.__dict__["backend"] = TimedBackend(real, clock)
    rng = random.Random(3)
    results: dict[str, Any] = {}
    async with Client(build_server(runtime)) as client:
        for tool, arguments in scenario.setup:
            await client.call_tool(tool, arguments)
        for call in scenario.calls:
            rows: dict[str, list[float]] = {k: [] for k in (*PARTS, CLIENT_CHECKS, "total", "raw")}
            hits = 0
            for number, query in enumerate([*queries[:3], *queries]):
                arguments = call.arguments(query, rng)
                clock.reset()
                began = time.perf_counter()
                result = await client.call_tool(call.tool, arguments, raise_on_error=False)
                total = time.perf_counter() - began
                if result.is_error:
                    raise RuntimeError(f"{call.tool} {arguments}: {result.content[0].text}")
                if number < 3:  # warm-up
                    continue
                rows["total"].append(total)
                rows["embedding"].append(clock.embedding)
                rows["engine"].append(clock.engine)
                rows["glue"].append(clock.handler - clock.embedding - clock.engine)
                rows["mcp"].append(total - clock.handler)
                rows[CLIENT_CHECKS].append(clock.client_checks)
                hits += bool(result.structured_content or result.content)
                last = clock.last_query
                if last and not call.browse:
                    began = time.perf_counter()
                    raw_query(
                        real, scenario.collection, last["vector"], last["filter"], last["top_k"]
                    )
                    rows["raw"].append(time.perf_counter() - began)
            without = [t - e for t, e in zip(rows["total"], rows["embedding"], strict=True)]
            summary = {
                "n": len(rows["total"]),
                "answered": hits,
                "browse": call.browse,
                "total": percentiles(rows["total"]),
                "without_embedding": percentiles(without),
                **{part: percentiles(rows[part]) for part in (*PARTS, CLIENT_CHECKS)},
            }
            if rows["raw"]:
                summary["raw_engine"] = percentiles(rows["raw"])
                summary["overhead_ratio"] = round(
                    summary["without_embedding"]["p50"] / max(summary["raw_engine"]["p50"], 1e-3),
                    1,
                )
            results[call.label] = summary
            log(f"  {call.label}: {summary['without_embedding']} ms without embedding")
    return results
