"""Newest-first pages are a total order; bad memories in a file are reported and skipped."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from fastmcp import Client
from qdrant_client import models

from scoperag.core.contracts.memory import COLLECTION, ORDER_KEY
from scoperag.pipelines.memories import import_memories, make_memory, store_memories
from scoperag.pipelines.memory_order import SLOTS, backfill_order, order_base
from scoperag.server.mcp.app import build_server
from scoperag.server.runtime import Runtime

STAMP = "2026-03-01T12:00:00Z"


async def _pages(runtime: Runtime, page_size: int, **arguments: object) -> list[str]:
    """Content hashes of every newest-first page, in order."""
    hashes: list[str] = []
    async with Client(build_server(runtime)) as client:
        for page in range(1, 100):
            result = await client.call_tool(
                "search", {"page": page, "page_size": page_size, **arguments}
            )
            hashes += [row["content_hash"] for row in result.structured_content["memories"]]
            if not result.structured_content["has_more"]:
                return hashes
    raise AssertionError("more than 99 pages")


async def test_equal_timestamps_neither_repeat_nor_skip_across_pages(
    make_runtime: Callable[..., Runtime],
) -> None:
    """Regression: 40 memories with one timestamp read 7 at a time under a tag filter gave 37
    distinct on Edge (order_by has no second key; ties came back in varying order)."""
    runtime = make_runtime(profiles=["memory"])
    same = [make_memory(f"Tied memory number {n}.", ["tie"], None, STAMP) for n in range(40)]
    other = [make_memory(f"Other {n}.", ["other"], None, STAMP) for n in range(5)]
    store_memories(runtime.backend, runtime.embedder, same[:25] + other)
    store_memories(runtime.backend, runtime.embedder, same[25:])  # later writes, same instant
    by_seven = await _pages(runtime, 7, mode="faceted", tags="tie")
    by_forty = await _pages(runtime, 40, mode="faceted", tags="tie")
    assert len(by_seven) == len(set(by_seven)) == 40
    assert by_seven == by_forty
    assert set(by_seven) == {memory.content_hash for memory in same}


def test_a_page_deep_in_the_order_is_the_same_slice_of_it(
    make_runtime: Callable[..., Runtime],
) -> None:
    """An ordered scroll past an offset (its skipped points read by id alone, the page's then
    fetched whole) gives the points, payloads included, of the whole order's slice."""
    runtime = make_runtime(profiles=["memory"])
    memories = [
        make_memory(f"Memory {n} of the order.", ["deep"], None, f"2026-03-{1 + n % 28:02d}")
        for n in range(30)
    ]
    store_memories(runtime.backend, runtime.embedder, memories)
    order = models.OrderBy(key=ORDER_KEY, direction=models.Direction.DESC)
    whole = runtime.backend.scroll(COLLECTION, None, 30, order_by=order)
    assert len(whole) == 30
    for offset, limit in [(0, 7), (7, 7), (25, 10), (29, 1), (30, 5)]:
        page = runtime.backend.scroll(COLLECTION, None, limit, offset, order_by=order)
        expected = whole[offset : offset + limit]
        assert [(r.id, r.payload) for r in page] == [(r.id, r.payload) for r in expected]
        assert all(record.payload and record.payload["content"] for record in page)


async def test_memories_stored_without_an_order_key_get_one(
    make_runtime: Callable[..., Runtime],
) -> None:
    """Stores written before `created_order` existed: their memories are ordered on first read."""
    runtime = make_runtime(profiles=["memory"])
    memories = [make_memory(f"Old memory {n}.", ["old"], None, STAMP) for n in range(9)]
    store_memories(runtime.backend, runtime.embedder, memories)
    records = runtime.backend.scroll(COLLECTION, None, limit=100)
    for record in records[:6]:  # as an older version left them: no order key
        runtime.backend.set_payload(COLLECTION, record.id, {ORDER_KEY: None})
    pages = await _pages(runtime, 4, mode="faceted", tags="old")
    assert sorted(pages) == sorted(memory.content_hash for memory in memories)
    assert backfill_order(runtime.backend, runtime.settings.data_dir) == 0
    keys = [(r.payload or {})[ORDER_KEY] for r in runtime.backend.scroll(COLLECTION, None, 100)]
    base = order_base(memories[0].created_at_ts)
    assert len(set(keys)) == 9 and all(base <= key < base + SLOTS for key in keys)


def test_a_memory_of_the_millisecond_before_a_stored_one_takes_its_first_slot(
    make_runtime: Callable[..., Runtime],
) -> None:
    """Regression: keys (about 5.8e16) were bounded through a float range whose spacing there
    is 8, so the next millisecond's first key counted as taken and the write was refused with
    "More than 32768 memories have the creation time ..."."""
    runtime = make_runtime(profiles=["memory"])
    later = make_memory("Written a millisecond later.", None, None, "2026-03-01T12:00:00.001Z")
    earlier = make_memory("Written a millisecond earlier.", None, None, "2026-03-01T12:00:00Z")
    for memory in (later, earlier, later):
        store_memories(
            runtime.backend, runtime.embedder, [memory], data_dir=runtime.settings.data_dir
        )
    base = order_base(earlier.created_at_ts)
    order = models.OrderBy(key=ORDER_KEY, direction=models.Direction.DESC)
    keys = [
        (r.payload or {})[ORDER_KEY]
        for r in runtime.backend.scroll(COLLECTION, None, 9, order_by=order)
    ]
    assert keys == [base + SLOTS, base]


def test_bad_memories_in_a_file_are_reported_by_position_and_the_rest_stored(
    make_runtime: Callable[..., Runtime], shared_data: Path, tmp_path: Path
) -> None:
    """Regression: a `"tags": 7` item or an out-of-range timestamp aborted the whole file."""
    runtime = make_runtime(profiles=["memory"])
    good = json.loads((shared_data / "memories" / "devbench_dataset.json").read_text())
    items = good["memories"][:6]
    bad = {
        1: {**items[1], "tags": 7},
        3: {**items[3], "created_at_iso": 1e20},
        4: {**items[4], "created_at_iso": "0001-01-01T00:00:00+05:00"},
    }
    path = tmp_path / "memories.json"
    path.write_text(json.dumps([bad.get(index, item) for index, item in enumerate(items)]))
    report = import_memories(path, runtime.backend, runtime.embedder)
    assert [line.split(":")[0] for line in report.skipped] == ["item 1", "item 3", "item 4"]
    assert "'tags'" in report.skipped[0] and "'created_at'" in report.skipped[1]
    assert len(report.stored) == 3
    assert runtime.backend.count(COLLECTION, None) == 3
