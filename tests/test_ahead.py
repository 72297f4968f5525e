"""`ahead`: a pipeline's reading runs in a worker thread, its items arriving in order, its errors
raised in the caller, its worker stopped when the caller stops."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator

import pytest

from scoperag.pipelines.ahead import ahead

CALLER = contextvars.ContextVar("caller", default="unset")


def test_items_arrive_in_order_from_another_thread_with_the_callers_context() -> None:
    CALLER.set("ingestion 7")
    seen: list[tuple[int, str, str]] = []

    def produce() -> Iterator[int]:
        for number in range(500):
            seen.append((number, threading.current_thread().name, CALLER.get()))
            yield number

    assert list(ahead(produce(), "reader", depth=4)) == list(range(500))
    assert len(seen) == 500
    assert {(name, caller) for _, name, caller in seen} == {("reader", "ingestion 7")}


def test_an_error_in_the_worker_is_raised_in_the_caller_after_the_items_before_it() -> None:
    def produce() -> Iterator[object]:
        yield ValueError("an item that is an exception is still an item")
        yield 2
        raise OSError("page 3 unreadable")

    got: list[object] = []
    with pytest.raises(OSError, match="page 3 unreadable"):
        for item in ahead(produce(), "reader"):
            got.append(item)
    assert len(got) == 2 and isinstance(got[0], ValueError) and got[1] == 2


def test_the_worker_stops_when_the_caller_stops_reading() -> None:
    produced: list[int] = []
    finished = threading.Event()

    def produce() -> Iterator[int]:
        try:
            for number in range(1_000_000):
                produced.append(number)
                yield number
        finally:
            finished.set()

    items = ahead(produce(), "reader", depth=2)
    assert next(items) == 0
    items.close()
    assert finished.wait(10), "the worker went on after the caller stopped"
    assert len(produced) < 10
