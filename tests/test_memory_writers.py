"""Memories written at once from several processes and threads on a fresh data dir: none
refused, every order key unique, newest-first order by creation time to the millisecond (real
`scoperag serve` stdio servers)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from qdrant_client import models

from scoperag.core.config.settings import Settings
from scoperag.core.contracts.memory import COLLECTION, ORDER_KEY, TIME_KEY
from scoperag.core.embedding.embedders import Embedder
from scoperag.pipelines.memories import make_memory, store_memories
from scoperag.pipelines.memory_order import SLOT_BITS, SLOTS, order_base
from scoperag.server.runtime import Runtime

if TYPE_CHECKING:
    from conftest import Worker

STAMP = "2026-03-01T12:00:00Z"
PROCESSES, CALLS, THREADS, PER_THREAD, PER_FILE = 3, 12, 2, 20, 30


def _server(data_dir: Path, files: Path) -> Client:
    script = shutil.which("scoperag", path=str(Path(sys.executable).parent))
    assert script, "the scoperag console script is not installed"
    env = {
        **os.environ,
        "SCOPERAG_DATA_DIR": str(data_dir),
        "SCOPERAG_PROFILES": "memory",
        "SCOPERAG_ALLOWED_DIRS": str(files),
    }
    return Client(StdioTransport(script, ["serve"], env=env, keep_alive=False), timeout=120)


async def _process_writes(client: Client, name: str, file: Path, failures: list[str]) -> None:
    """Two writers in one server: `store_memory` calls (now) beside a file of tied times."""

    async def stores() -> None:
        for n in range(CALLS):
            result = await client.call_tool(
                "store_memory", {"content": f"{name} note {n}"}, raise_on_error=False
            )
            if result.is_error or not result.structured_content["stored"]:
                failures.append(f"{name} store {n}: {result.content}")

    async def imports() -> None:
        result = await client.call_tool("ingest_memories", {"path": str(file)})
        report = result.structured_content
        if len(report["stored"]) != PER_FILE or report["skipped"]:
            failures.append(f"{name} import: {report}")

    async with anyio.create_task_group() as group:
        group.start_soon(stores)
        group.start_soon(imports)


def _thread_writes(runtime: Runtime, name: str, failures: list[str]) -> None:
    memories = [make_memory(f"{name} tied {n}", None, None, STAMP) for n in range(PER_THREAD)]
    for memory in memories:  # one write per memory: as many turns as possible
        report = store_memories(
            runtime.backend, runtime.embedder, [memory], data_dir=runtime.settings.data_dir
        )
        if report.stored != [memory.content_hash]:
            failures.append(f"{name}: {report}")


async def test_eight_writers_in_processes_and_threads_get_unique_ordered_keys(
    tmp_path: Path, embedder: Embedder, worker: type[Worker]
) -> None:
    data_dir, files = tmp_path / "shared", tmp_path / "files"
    files.mkdir()
    for p in range(PROCESSES):
        items = [{"content": f"server {p} tied {n}", "created_at": STAMP} for n in range(PER_FILE)]
        (files / f"{p}.json").write_text(json.dumps(items))
    failures: list[str] = []
    clients = [_server(data_dir, files) for _ in range(PROCESSES)]
    async with clients[0], clients[1], clients[2]:
        runtime = Runtime(Settings(data_dir=data_dir, profiles=["memory"]), embedder=embedder)
        threads = [
            worker(target=_thread_writes, args=(runtime, f"thread {t}", failures))
            for t in range(THREADS)
        ]
        async with anyio.create_task_group() as group:
            for p, client in enumerate(clients):
                group.start_soon(
                    _process_writes, client, f"server {p}", files / f"{p}.json", failures
                )
            for thread in threads:
                thread.start()
        for thread in threads:
            thread.join(600)
        order = models.OrderBy(key=ORDER_KEY, direction=models.Direction.DESC)
        records = runtime.backend.scroll(COLLECTION, None, 10_000, order_by=order)
        runtime.close()
    assert failures == []
    expected = PROCESSES * (CALLS + PER_FILE) + THREADS * PER_THREAD
    keys = [(record.payload or {})[ORDER_KEY] for record in records]
    times = [(record.payload or {})[TIME_KEY] for record in records]
    assert len(records) == expected and len(set(keys)) == expected
    assert [key >> SLOT_BITS for key in keys] == [order_base(t) >> SLOT_BITS for t in times]
    base = order_base(make_memory("x", None, None, STAMP).created_at_ts)
    tied = [key for key, time in zip(keys, times, strict=True) if time == times[-1]]
    assert len(tied) == PROCESSES * PER_FILE + THREADS * PER_THREAD
    assert all(base <= key < base + SLOTS for key in tied)
