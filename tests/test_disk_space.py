"""The disk watermark on a real small disk (a tmpfs mounted for the test, so root only): writes
below the floor are refused with a message naming the data dir, the free space and the floor,
reads go on, and freeing space lets writes through again in the same process. Where a floor
above any disk's free space shows the same without a tmpfs, a test sets that instead."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from qdrant_client import models

from scoperag.core.config.settings import Settings
from scoperag.core.engine.disk_space import (
    MIB,
    MIN_FREE_ENV,
    DiskFullError,
    free_bytes,
    min_free_bytes,
)
from scoperag.core.engine.vector_names import DENSE_VECTOR
from scoperag.core.errors import InvalidParameterError
from scoperag.server.cli.migrate import migrate
from scoperag.server.runtime import Runtime
from scoperag.server.store_state.status import store_status

COLLECTION = "notes"


@pytest.fixture()
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 200 MiB tmpfs, unmounted afterwards."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs to fill needs root")
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=200m", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], check=True)


def leave_free(disk: Path, mib: int) -> Path:
    """Fill `disk` with one preallocated file so that `mib` MiB stay free."""
    filler = disk / "filler"
    filler.unlink(missing_ok=True)
    size = free_bytes(disk) - mib * MIB
    with filler.open("wb") as handle:
        os.posix_fallocate(handle.fileno(), 0, size)
    return filler


def points(start: int, count: int) -> list[models.PointStruct]:
    return [
        models.PointStruct(
            id=i, vector={DENSE_VECTOR: [1.0, 0.5, 0.25, float(i)]}, payload={"n": i}
        )
        for i in range(start, start + count)
    ]


@pytest.fixture()
def runtime(small_disk: Path) -> Iterator[Runtime]:
    """A store on the small disk holding one collection of 10 points."""
    runtime = Runtime(Settings(data_dir=small_disk / "data", profiles=["memory"]))
    runtime.backend.create_collection(COLLECTION, 4, {})
    runtime.backend.upsert_points(COLLECTION, points(0, 10))
    yield runtime
    runtime.close()


def test_writes_below_the_floor_are_refused_and_reads_go_on(
    runtime: Runtime, small_disk: Path
) -> None:
    filler = leave_free(small_disk, 100)  # the default floor is 128 MiB
    with pytest.raises(DiskFullError) as refused:
        runtime.backend.upsert_points(COLLECTION, points(10, 10))
    message = str(refused.value)
    assert str(small_disk / "data") in message
    assert "MiB free" in message and "128 MiB" in message and MIN_FREE_ENV in message
    assert runtime.backend.count(COLLECTION, None) == 10
    assert len(runtime.backend.scroll(COLLECTION, None, limit=100)) == 10
    with pytest.raises(DiskFullError):
        runtime.backend.create_collection("other", 4, {})
    filler.unlink()
    runtime.backend.upsert_points(COLLECTION, points(10, 10))
    assert runtime.backend.count(COLLECTION, None) == 20


def test_deleting_a_collection_below_the_floor_frees_its_space(
    runtime: Runtime, small_disk: Path
) -> None:
    runtime.backend.create_collection("other", 4, {})
    leave_free(small_disk, 100)
    before = free_bytes(small_disk)
    runtime.backend.delete_collection("other")
    assert free_bytes(small_disk) > before
    assert runtime.backend.list_collections() == [COLLECTION]


def test_the_floor_follows_the_environment(
    runtime: Runtime, small_disk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    leave_free(small_disk, 100)
    monkeypatch.setenv(MIN_FREE_ENV, "64")
    runtime.backend.upsert_points(COLLECTION, points(10, 10))
    assert runtime.backend.count(COLLECTION, None) == 20


def test_opening_a_collection_below_the_floor_is_refused(
    runtime: Runtime, small_disk: Path
) -> None:
    """Loading a shard replays and preallocates its WAL: on a full disk that was a SIGBUS."""
    runtime.close()
    filler = leave_free(small_disk, 20)
    reopened = Runtime(runtime.settings)
    try:
        with pytest.raises(DiskFullError, match=f"open collection '{COLLECTION}'"):
            reopened.backend.count(COLLECTION, None)
        filler.unlink()
        assert reopened.backend.count(COLLECTION, None) == 10
    finally:
        reopened.close()


@pytest.mark.parametrize("given", ["lots", "-1", "1.5"])
def test_a_floor_that_is_not_whole_mib_names_the_variable(
    given: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MIN_FREE_ENV, given)
    with pytest.raises(InvalidParameterError, match=MIN_FREE_ENV):
        min_free_bytes()


def test_scoperag_list_on_a_full_disk_says_so(runtime: Runtime, small_disk: Path) -> None:
    runtime.close()
    with (small_disk / "filler").open("wb") as filler:
        os.posix_fallocate(filler.fileno(), 0, free_bytes(small_disk))
    script = Path(sys.executable).parent / "scoperag"
    env = {**os.environ, "SCOPERAG_DATA_DIR": str(small_disk / "data")}
    listed = subprocess.run([script, "list"], env=env, capture_output=True, text=True)
    assert listed.returncode == 1
    assert f"The disk holding {small_disk / 'data'} is full" in listed.stderr
    assert "Traceback" not in listed.stderr


def test_a_migration_below_the_floor_writes_nothing_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`scoperag migrate` writes through the target engine itself, outside any server: it
    checks the floor before it creates a collection and before each page it copies."""
    source = Runtime(Settings(data_dir=tmp_path, backend="local"))
    source.backend.create_collection(COLLECTION, 4, {})
    source.backend.upsert_points(COLLECTION, points(0, 10))
    source.close()
    monkeypatch.setenv(MIN_FREE_ENV, str(1 << 30))  # a PiB: every disk is below it
    with pytest.raises(DiskFullError, match=f"create '{COLLECTION}' on the target"):
        migrate(Settings(data_dir=tmp_path), "local", "edge", [])
    assert not (tmp_path / "edge" / COLLECTION).exists()
    monkeypatch.delenv(MIN_FREE_ENV)
    [copied] = migrate(Settings(data_dir=tmp_path), "local", "edge", []).collections
    assert copied.points == 10


def _without_free_figure(message: str) -> str:
    """`message` with its measured free space (which other writers on the disk move) masked."""
    masked = re.sub(r"has \d+\.\d MiB free", "has N MiB free", message)
    assert masked != message, message
    return masked


async def test_an_attached_process_reads_the_owners_disk_full_error_as_it_is(
    tmp_path: Path,
) -> None:
    """Below the floor, an attached server's client and an attached `scoperag ingest` read the
    message the owner's do: no owner-failure prefix, no traceback."""
    data_dir = tmp_path / "shared"
    memories = tmp_path / "memories.json"
    memories.write_text(json.dumps([{"content": "a note below the floor"}]))
    script = Path(sys.executable).parent / "scoperag"
    env = {
        **os.environ,
        "SCOPERAG_DATA_DIR": str(data_dir),
        "SCOPERAG_PROFILES": "memory",
        MIN_FREE_ENV: str(1 << 30),  # a PiB: every disk is below it
    }

    def ingest() -> list[str]:
        ran = subprocess.run(
            [script, "ingest", "memory", str(memories)], env=env, capture_output=True, text=True
        )
        assert ran.returncode == 1 and "Traceback" not in ran.stderr, ran.stderr
        return ran.stderr.strip().splitlines()

    alone = ingest()  # no other process: this one owns the store
    assert alone[-1].startswith("Error: Refused to write to the store: the disk holding")

    def server() -> Client:
        transport = StdioTransport(str(script), ["serve"], env=env, keep_alive=False)
        return Client(transport, timeout=120)

    async with server() as owning, server() as attached:
        for client in (owning, attached):  # in this order: the first one opens the store
            found = await client.call_tool("search", {"query": "note"})
            assert not found.is_error
        report = store_status(Settings(data_dir=data_dir))
        assert "serve" in report["owner"]["command"] and len(report["attached"]) == 1
        messages = []
        for client in (owning, attached):
            stored = await client.call_tool(
                "store_memory", {"content": "a note"}, raise_on_error=False
            )
            assert stored.is_error
            messages.append(stored.content[0].text)
        beside = ingest()  # attached to the owning server
    assert report["owner"]["pid"] not in {entry["pid"] for entry in report["attached"]}
    assert messages[0].startswith("Refused to write to the store: the disk holding")
    assert _without_free_figure(messages[1]) == _without_free_figure(messages[0])
    assert _without_free_figure(beside[-1]) == _without_free_figure(alone[-1])
    assert _without_free_figure(beside[-1]) == "Error: " + _without_free_figure(messages[0])
