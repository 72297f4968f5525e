"""The write ledger on real Edge stores: acknowledged writes lost to a cut write-ahead log are
reported and not served; deletes, re-ingestion and a killed owner are no loss."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from qdrant_client import models

from scoperag.core.config.settings import Settings
from scoperag.core.contracts.books import COLLECTION as BOOKS
from scoperag.core.contracts.memory import COLLECTION
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.engine.edge.ledger import FILE, LostWritesError
from scoperag.core.engine.vector_names import DENSE_VECTOR
from scoperag.pipelines.book import ingest_book
from scoperag.server.cli.main import cli
from scoperag.server.runtime import Runtime

BOOK = Path(__file__).resolve().parents[1] / "server" / "samples" / "pride-and-prejudice-ch1-3.txt"

# An owner process: stores memories through the MCP tools (each call acknowledged), deletes
# some, prints what it did, and is killed before it can close the store.
OWNER = """
import asyncio, json, os, signal, sys
from fastmcp import Client
from scoperag.core.config.settings import Settings
from scoperag.server.mcp.app import build_server
from scoperag.server.runtime import Runtime

async def main(stores, deletes):
    runtime = Runtime(Settings(profiles=["memory"]))
    stored = []
    async with Client(build_server(runtime)) as client:
        for n in range(stores):
            text = f"Memory number {n}: the ledger counts acknowledged writes."
            result = await client.call_tool("store_memory", {"content": text})
            stored.append(result.structured_content)
        for done in stored[:deletes]:
            await client.call_tool("delete_memory", {"content_hash": done["content_hash"]})
    print(json.dumps({"role": runtime.backend.role, "stored": stored}), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)

asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))
"""


def run_owner(data_dir: Path, stores: int, deletes: int = 0) -> list[dict]:
    """Run the owner to its SIGKILL; the memories it stored, as the tool acknowledged them."""
    env = {**os.environ, "SCOPERAG_DATA_DIR": str(data_dir), "SCOPERAG_PROFILES": "memory"}
    done = subprocess.run(
        [sys.executable, "-c", OWNER, str(stores), str(deletes)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == -9, done.stderr  # killed, so nothing was closed or flushed
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["role"] == "owner"
    return report["stored"]


def cut_write_ahead_log(shard: Path) -> int:
    """Cut each WAL file's written part in half (its tail as zeros, as a torn log leaves it)."""
    cut = 0
    for path in sorted((shard / "wal").glob("open-*")):
        size, used = path.stat().st_size, len(path.read_bytes().rstrip(b"\0"))
        if used > 64:  # more than a header
            os.truncate(path, used // 2)
            os.truncate(path, size)
            cut += 1
    return cut


def check(*arguments: str) -> tuple[int, dict]:
    result = CliRunner().invoke(cli, ["check", "--json", *arguments])
    return result.exit_code, json.loads(result.output)


def test_acknowledged_writes_lost_to_a_cut_log_are_reported_not_served(
    tmp_path: Path, embedder: Embedder
) -> None:
    data_dir = tmp_path / "data"
    stored = run_owner(data_dir, stores=20)
    assert [memory["stored"] for memory in stored] == [True] * 20
    shard = data_dir / "edge" / COLLECTION / "shard"
    assert json.loads((shard / FILE).read_text())["points"] == 20
    assert cut_write_ahead_log(shard) >= 1

    runtime = Runtime(Settings(profiles=["memory"]), embedder=embedder)
    try:
        with pytest.raises(LostWritesError) as lost:
            runtime.backend.count(COLLECTION, None)
        error = lost.value
        assert error.collection == COLLECTION and error.expected == 20 and error.found < 20
        message = str(error)
        assert f"'{COLLECTION}'" in message and f"holds {error.found} points" in message
        assert "left 20" in message and str(data_dir) in message and "export" in message
        with pytest.raises(LostWritesError):  # nor written
            runtime.backend.upsert_points(COLLECTION, [_point(99)])
        runtime.backend.create_collection("other", 4, {})  # other collections keep working
        runtime.backend.upsert_points("other", [_point(1)])
        assert runtime.backend.count("other", None) == 1

        code, report = check()  # from another runtime: the error crosses from the owner
        found = {c["name"]: c for c in report["collections"]}
        assert code == 1 and report["ok"] is False
        [problem] = found[COLLECTION]["problems"]
        assert problem.startswith("LostWritesError") and "left 20" in problem
        assert found["other"]["problems"] == []

        code, report = check("--accept-loss", COLLECTION)
        assert code == 0 and report["accepted"] == {COLLECTION: error.found}
        assert runtime.backend.count(COLLECTION, None) == error.found  # served again
    finally:
        runtime.close()


def test_deletes_and_a_killed_owner_are_no_loss(tmp_path: Path, embedder: Embedder) -> None:
    data_dir = tmp_path / "data"
    stored = run_owner(data_dir, stores=6, deletes=2)
    assert [memory["stored"] for memory in stored] == [True] * 6
    shard = data_dir / "edge" / COLLECTION / "shard"
    assert json.loads((shard / FILE).read_text())["points"] == 4
    runtime = Runtime(Settings(profiles=["memory"]), embedder=embedder)
    try:
        assert runtime.backend.count(COLLECTION, None) == 4
    finally:
        runtime.close()
    code, report = check()
    assert code == 0 and report["ok"] is True


def test_re_ingesting_fewer_points_is_no_loss(tmp_path: Path, embedder: Embedder) -> None:
    runtime = Runtime(Settings(profiles=["books"]), embedder=embedder)
    try:
        ingest_book(BOOK, runtime.backend, embedder, "pride", last_chapter=3)
        whole = runtime.backend.count(BOOKS, None)
        ingest_book(BOOK, runtime.backend, embedder, "pride", last_chapter=1)
        fewer = runtime.backend.count(BOOKS, None)
        assert 0 < fewer < whole
    finally:
        runtime.close()
    code, report = check()
    assert code == 0, report
    assert {c["name"]: c["points"] for c in report["collections"]} == {BOOKS: fewer}


def test_a_store_written_before_the_ledger_opens_and_gets_one(
    tmp_path: Path, embedder: Embedder
) -> None:
    runtime = Runtime(Settings(profiles=["memory"]), embedder=embedder)
    try:
        runtime.backend.create_collection("old", 4, {})
        runtime.backend.upsert_points("old", [_point(n) for n in range(3)])
    finally:
        runtime.close()
    ledger = Settings().data_dir / "edge" / "old" / "shard" / FILE
    ledger.unlink()
    code, report = check()
    assert code == 0 and report["collections"][0]["points"] == 3
    assert json.loads(ledger.read_text())["points"] == 3


def _point(n: int) -> models.PointStruct:
    return models.PointStruct(id=n, vector={DENSE_VECTOR: [1.0, n, 0.5, -n]}, payload={"n": n})
