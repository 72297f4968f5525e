"""One embedded store, many processes: real `scoperag serve` stdio servers, the CLI and the API.

The first process owns the engine and serves it to the others; when it stops or is killed, a
survivor takes over, and no acknowledged write is lost.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from qdrant_client import models

from scoperag.core.config.settings import Settings
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.engine.search_request import SearchRequest
from scoperag.core.engine.sharing.channel import OwnerStoppedError, process_stopped
from scoperag.core.engine.sharing.owner import RECORD, engine_dir
from scoperag.core.engine.vector_names import DENSE_VECTOR
from scoperag.retrievers.filtered import FilteredRetriever
from scoperag.server.runtime import Runtime
from scoperag.server.store_state.status import store_status

SAMPLE = Path(__file__).resolve().parents[1] / "server" / "samples"
NOTES = {"document_id": "notes"}


def _script() -> str:
    script = shutil.which("scoperag", path=str(Path(sys.executable).parent))
    assert script, "the scoperag console script is not installed"
    return script


def _env(data_dir: Path) -> dict[str, str]:
    return {**os.environ, "SCOPERAG_DATA_DIR": str(data_dir), "SCOPERAG_PROFILES": "pdf"}


def _server(data_dir: Path) -> Client:
    return Client(
        StdioTransport(_script(), ["serve"], env=_env(data_dir), keep_alive=False), timeout=120
    )


async def _store(client: Client, text: str) -> None:
    await client.call_tool("qdrant-store", {"information": text, "metadata": NOTES})


async def _notes(client: Client) -> set[str]:
    result = await client.call_tool("qdrant-find", {"query": "note", "limit": 100, **NOTES})
    return {hit["text"] for hit in result.structured_content["hits"]}


def _owner_pid(data_dir: Path) -> int:
    return json.loads((data_dir / "edge" / RECORD).read_text())["pid"]


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "shared"


def _owning_process(data_dir: Path) -> subprocess.Popen:
    """A process that opens the store (printing its role) and then only sleeps."""
    script = (
        "import time\n"
        "from scoperag.core.config.settings import Settings\n"
        "from scoperag.server.runtime import Runtime\n"
        f"runtime = Runtime(Settings(data_dir={str(data_dir)!r}, backend='edge'))\n"
        "print(runtime.backend.role, flush=True)\n"
        "time.sleep(600)\n"
    )
    return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)


async def test_servers_cli_and_api_share_one_store(data_dir: Path, embedder: Embedder) -> None:
    """Two stdio servers and the CLI write to one store; the owner leaves (cleanly, then killed)
    and a survivor takes over each time without losing an acknowledged write."""
    first, second, third = _server(data_dir), _server(data_dir), _server(data_dir)
    async with second:
        async with first:
            await _store(first, "note alpha from the first server")
            first_pid = _owner_pid(data_dir)
            await _store(second, "note beta from the second server")
            assert _owner_pid(data_dir) == first_pid  # the second one is attached
            ingest = await anyio.run_process(
                [_script(), "ingest", "pdf", str(SAMPLE / "qpdf-page-labels-num-tree.pdf")],
                env=_env(data_dir),
                check=False,
            )
            assert ingest.returncode == 0, ingest.stderr.decode()
            status = await anyio.run_process([_script(), "status", "--json"], env=_env(data_dir))
            report = json.loads(status.stdout)
            assert report["owner"]["pid"] == first_pid and len(report["attached"]) == 1
            assert (
                await _notes(first)
                == await _notes(second)
                == {
                    "note alpha from the first server",
                    "note beta from the second server",
                }
            )
            listed = await second.call_tool("qdrant-list-documents", {})
            ids = {d["document_id"] for d in listed.structured_content["documents"]}
            assert "qpdf-page-labels-num-tree" in ids
        # the first server has exited: the second takes over on its next call
        await _store(second, "note gamma after the first server stopped")
        assert _owner_pid(data_dir) != first_pid
        assert len(await _notes(second)) == 3
        async with third:
            await _store(third, "note delta from the third server")
            os.kill(_owner_pid(data_dir), signal.SIGKILL)  # the second server, mid-session
            await _store(third, "note epsilon after the owner was killed")
            assert len(await _notes(third)) == 5
            _python_api_reads_while_a_server_holds_the_store(data_dir, embedder)
    fresh = Runtime(Settings(data_dir=data_dir, profiles=["pdf"]), embedder=embedder)
    try:
        assert fresh.backend.role == "owner"  # every server has gone; nothing was lost
        assert fresh.backend.count(fresh.settings.pdf_collection, None) > 5
        _assert_retrieves_every_note(fresh, embedder)
    finally:
        fresh.close()


def _python_api_reads_while_a_server_holds_the_store(data_dir: Path, embedder: Embedder) -> None:
    runtime = Runtime(Settings(data_dir=data_dir, profiles=["pdf"]), embedder=embedder)
    try:
        assert runtime.backend.role == "attached"
        _assert_retrieves_every_note(runtime, embedder)
    finally:
        runtime.close()


def _assert_retrieves_every_note(runtime: Runtime, embedder: Embedder) -> None:
    from qdrant_client import models

    notes = models.Filter(
        must=[models.FieldCondition(key="document_id", match=models.MatchValue(value="notes"))]
    )
    retriever = FilteredRetriever(
        runtime.backend, embedder, runtime.settings.pdf_collection, notes, top_k=20
    )
    texts = {hit.node.get_content() for hit in retriever.retrieve("note")}
    assert len(texts) == 5 and all(text.startswith("note ") for text in texts)


def test_a_second_runtime_in_one_process_works_through_the_first(
    make_runtime: Callable[..., Runtime], backend_name: str, embedder: Embedder
) -> None:
    """Regression: a second runtime on a held store failed with "already open in another
    process"; it now reaches the engine through the holder, with the same results and errors."""
    if backend_name == "server":
        pytest.skip("a server has no owner")
    holder = make_runtime(profiles=["pdf"])
    holder.backend.create_collection("shared", 3, {"made": "here"})
    other = Runtime(holder.settings, embedder=embedder)
    try:
        assert (holder.backend.role, other.backend.role) == ("owner", "attached")
        assert other.backend.collection_metadata("shared") == {"made": "here"}
        with pytest.raises(type(_error(holder)), match="already exists"):
            other.backend.create_collection("shared", 3, {})
    finally:
        other.close()


def test_an_attached_runtime_filters_by_time_and_order_like_the_owner(
    make_runtime: Callable[..., Runtime], backend_name: str, embedder: Embedder
) -> None:
    """Filters, orders and hits (`qdrant_client.models`) cross to the owner and
    back: a datetime range (regression: a datetime could not be sent), an order and a search
    give the attached runtime the owner's answers."""
    if backend_name == "server":
        pytest.skip("a server has no owner")
    holder = make_runtime(profiles=["pdf"])
    start = datetime(2025, 3, 1, tzinfo=UTC)
    holder.backend.create_collection("timed", 3, {})
    for key, kind in (("at", "datetime"), ("n", "integer")):
        holder.backend.create_index("timed", key, kind)
    holder.backend.upsert_points(
        "timed",
        [
            models.PointStruct(
                id=n + 1,
                vector={DENSE_VECTOR: [1.0, float(n), 0.5]},
                payload={"at": (start + timedelta(days=n)).isoformat(), "n": n},
            )
            for n in range(6)
        ],
    )
    since = models.DatetimeRange(gte=start + timedelta(days=2))
    flt = models.Filter(must=[models.FieldCondition(key="at", range=since)])
    newest = models.OrderBy(key="n", direction=models.Direction.DESC)
    nearest = SearchRequest(collection="timed", dense=[1.0, 5.0, 0.5], filter=flt, limit=2)
    other = Runtime(holder.settings, embedder=embedder)
    try:
        assert other.backend.role == "attached"
        answers = [
            (
                [record.id for record in backend.scroll("timed", flt, 10, order_by=newest)],
                backend.count("timed", flt),
                [hit.id for hit in backend.search(nearest).hits],
            )
            for backend in (holder.backend, other.backend)
        ]
        assert answers[0] == answers[1] == ([6, 5, 4, 3], 4, [6, 5])
    finally:
        other.close()


def test_an_index_one_process_makes_is_known_to_the_others_at_their_next_call(
    make_runtime: Callable[..., Runtime], backend_name: str, embedder: Embedder
) -> None:
    """A collection's indexes, like its metadata, are read once per version of what the engine
    keeps of it: making an index is a new version for every process."""
    if backend_name == "server":
        pytest.skip("a server has no owner")
    holder = make_runtime(profiles=["pdf"])
    holder.backend.create_collection("indexed", 3, {})
    other = Runtime(holder.settings, embedder=embedder)
    try:
        assert other.backend.role == "attached"
        assert holder.backend.payload_indexes("indexed") == other.backend.payload_indexes("indexed")
        holder.backend.create_index("indexed", "tag", "keyword")
        other.backend.create_index("indexed", "n", "integer")
        both = [backend.payload_indexes("indexed") for backend in (holder.backend, other.backend)]
        if backend_name == "edge":  # local mode scans and keeps no payload indexes
            assert both[0] == both[1] == {"tag": "keyword", "n": "integer"}
        assert both[0] == both[1]
    finally:
        other.close()


def _end(owner: subprocess.Popen, attached: Runtime | None) -> None:
    """Resume and kill a stopped owner process, and close the runtime attached to it."""
    os.kill(owner.pid, signal.SIGCONT)
    if attached is not None:
        attached.close()
    owner.kill()
    owner.wait()


def _error(runtime: Runtime) -> Exception:
    try:
        runtime.backend.create_collection("shared", 3, {})
    except Exception as exc:
        return exc
    raise AssertionError("creating an existing collection must fail")


def test_status_names_the_owner_and_the_attached_and_spots_a_stale_record(
    make_runtime: Callable[..., Runtime], backend_name: str, embedder: Embedder
) -> None:
    if backend_name == "server":
        pytest.skip("a server has no owner")
    holder = make_runtime(profiles=["pdf"])
    assert store_status(holder.settings)["owner"] is None  # nothing has opened the store yet
    assert holder.backend.role == "owner"
    other = Runtime(holder.settings, embedder=embedder)
    assert other.backend.role == "attached"
    report = store_status(holder.settings)
    assert report["owner"]["pid"] == os.getpid() and report["engine"] == backend_name
    assert [process["pid"] for process in report["attached"]] == [os.getpid()]
    other.close()
    assert store_status(holder.settings)["attached"] == []
    record = (engine_dir(holder.settings) / RECORD).read_text()
    holder.close()
    (engine_dir(holder.settings) / RECORD).write_text(record)  # as a SIGKILLed owner leaves it
    assert store_status(holder.settings)["note"].startswith("Stale record")
    reopened = Runtime(holder.settings, embedder=embedder)
    try:
        assert reopened.backend.role == "owner"  # the stale record did not stop it
    finally:
        reopened.close()


def test_a_data_dir_too_deep_for_a_socket_path_still_shares(
    tmp_path: Path, embedder: Embedder
) -> None:
    """A Unix socket path holds 108 bytes: a deep data dir gets its socket in a private temp dir,
    and only this user can connect to it."""
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    settings = Settings(data_dir=deep, backend="edge")
    holder, other = Runtime(settings, embedder=embedder), Runtime(settings, embedder=embedder)
    try:
        holder.backend.create_collection("c", 3, {})
        assert other.backend.list_collections() == ["c"]
        socket = Path(json.loads((engine_dir(settings) / RECORD).read_text())["socket"])
        assert not socket.is_relative_to(deep)
        assert stat.S_IMODE(socket.parent.stat().st_mode) == 0o700
        assert stat.S_IMODE(socket.stat().st_mode) == 0o600
    finally:
        other.close()
        holder.close()


def test_an_owner_serves_without_fastmcp_and_leaves_no_record_when_closed(
    data_dir: Path, embedder: Embedder
) -> None:
    """The owner's socket speaks line-framed JSON-RPC on plain threads: a process that opens
    the store imports neither FastMCP nor uvicorn, also once another process has attached; a
    clean close removes the record, so nothing reads as a crash."""
    owner_script = (
        "import sys\n"
        "from scoperag.core.config.settings import Settings\n"
        "from scoperag.server.runtime import Runtime\n"
        f"runtime = Runtime(Settings(data_dir={str(data_dir)!r}, backend='edge'))\n"
        "runtime.backend.create_collection('shared', 3, {'made': 'there'})\n"
        "loaded = lambda: ['fastmcp' in sys.modules, 'uvicorn' in sys.modules]\n"
        "print(runtime.backend.role, *loaded(), flush=True)\n"
        "sys.stdin.readline()\n"
        "print(*loaded(), flush=True)\n"
        "runtime.close()\n"
    )
    owner = subprocess.Popen(
        [sys.executable, "-c", owner_script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert owner.stdout.readline().split() == ["owner", "False", "False"]
        attached = Runtime(Settings(data_dir=data_dir, backend="edge"), embedder=embedder)
        try:
            assert attached.backend.role == "attached"
            assert attached.backend.collection_metadata("shared") == {"made": "there"}
        finally:
            attached.close()
        owner.stdin.write("\n")
        owner.stdin.flush()
        assert owner.stdout.readline().split() == ["False", "False"]
        assert owner.wait(30) == 0
        assert not (data_dir / "edge" / RECORD).exists()  # the owner left no record behind
    finally:
        if owner.poll() is None:
            owner.kill()


def test_a_stopped_owner_fails_calls_at_once_naming_it(data_dir: Path, embedder: Embedder) -> None:
    """Defect it guards: with the owner suspended (Ctrl+Z on a `scoperag ingest`), every call of
    the processes attached to it waited 10 minutes; a new process 30 s, then failed unclearly.
    Now a call fails within seconds naming the owner and how to resume it, and works again once
    it has resumed."""
    settings = Settings(data_dir=data_dir, backend="edge", profiles=["pdf"])
    owner = _owning_process(data_dir)
    attached = None
    try:
        assert owner.stdout.readline().strip() == "owner"
        attached = Runtime(settings, embedder=embedder)
        assert attached.backend.role == "attached"
        assert attached.backend.list_collections() == []
        os.kill(owner.pid, signal.SIGSTOP)
        while not process_stopped(owner.pid):  # the signal is delivered asynchronously
            time.sleep(0.01)
        for connect in (False, True):  # a call of an attached process, then a new process
            began = time.monotonic()
            with pytest.raises(OwnerStoppedError) as stopped:
                if connect:
                    _ = Runtime(settings, embedder=embedder).backend
                else:
                    attached.backend.list_collections()
            assert time.monotonic() - began < 15
            assert f"pid {owner.pid}" in str(stopped.value)
            assert f"kill -CONT {owner.pid}" in str(stopped.value)
        note = store_status(settings)["note"]
        assert f"pid {owner.pid}" in note and "is stopped" in note
        os.kill(owner.pid, signal.SIGCONT)
        assert attached.backend.list_collections() == []
    finally:
        _end(owner, attached)


def test_an_attached_write_larger_than_any_message_limit_goes_through(
    make_runtime: Callable[..., Runtime], backend_name: str, embedder: Embedder
) -> None:
    """Regression: an ingest of 531 chunks from an attached process failed on the owner's 4 MiB
    request limit. Points totalling more than 4 MiB are written in one call through the owner."""
    if backend_name == "server":
        pytest.skip("a server has no owner")
    holder = make_runtime(profiles=["pdf"])
    holder.backend.create_collection("large", 3, {})
    text = "x" * 8192
    points = [
        models.PointStruct(
            id=n + 1, vector={DENSE_VECTOR: [1.0, float(n), 0.5]}, payload={"t": text}
        )
        for n in range(600)
    ]
    assert len(json.dumps([p.payload for p in points])) > 4 * 1024 * 1024
    other = Runtime(holder.settings, embedder=embedder)
    try:
        assert other.backend.role == "attached"
        other.backend.upsert_points("large", points)
        assert holder.backend.count("large", None) == 600
        assert len(other.backend.scroll("large", None, 1000)) == 600
    finally:
        other.close()


def test_concurrent_first_use_creates_a_collection_once(
    make_runtime: Callable[..., Runtime], backend_name: str, embedder: Embedder
) -> None:
    """Two runtimes creating the same collection with the same embedder both succeed (the
    second finds it made); another embedder is still refused."""
    from scoperag.core.engine.collections import prepare_for_writing
    from scoperag.core.errors import EmbedderMismatchError

    if backend_name == "server":
        pytest.skip("a server has no owner")
    holder = make_runtime(profiles=["pdf"])
    other = Runtime(holder.settings, embedder=embedder)
    failures: list[BaseException] = []
    try:
        for name in ("first", "second", "third"):
            start = threading.Barrier(2)

            def prepare(
                runtime: Runtime, name: str = name, start: threading.Barrier = start
            ) -> None:
                start.wait()
                try:
                    prepare_for_writing(runtime.backend, embedder, name, [])
                except BaseException as exc:
                    failures.append(exc)

            threads = [threading.Thread(target=prepare, args=(r,)) for r in (holder, other)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(60)
            assert failures == []
        assert other.backend.collection_exists("first")
        holder.backend.update_collection_metadata(
            "first", {"scoperag_embedder": {**embedder.info.model_dump(), "model": "other"}}
        )
        with pytest.raises(EmbedderMismatchError):
            prepare_for_writing(other.backend, embedder, "first", [])
    finally:
        other.close()


async def test_a_find_asks_the_engine_at_most_twice_in_owner_and_attached(
    make_runtime: Callable[..., Runtime], backend_name: str, embedder: Embedder
) -> None:
    """A collection's existence, embedder and keyword vectors are known per version of its
    record, so a `qdrant-find` costs the engine at most two operations in every process once
    that record is read."""
    from scoperag.server.mcp.app import build_server
    from scoperag.server.profiles.pdf.service import ingest_paths

    if backend_name != "edge":
        pytest.skip("the record is read per version on Qdrant Edge")
    holder = make_runtime(profiles=["pdf"])
    ingest_paths(holder, [SAMPLE / "qpdf-page-labels-num-tree.pdf"], None, None)
    other = Runtime(holder.settings, embedder=embedder)
    try:
        for runtime in (holder, other):
            async with Client(build_server(runtime)) as client:
                await client.call_tool("qdrant-find", {"query": "first"})  # reads the record
                for query in ("page labels", "number tree", "potato"):
                    before = dict(store_status(holder.settings)["owner"]["operations"])
                    await client.call_tool("qdrant-find", {"query": query})
                    after = store_status(holder.settings)["owner"]["operations"]
                    assert sum(after.values()) - sum(before.values()) <= 2
    finally:
        other.close()


async def test_a_server_stopped_by_sigterm_leaves_no_record_that_reads_as_a_crash(
    data_dir: Path,
) -> None:
    """Regression: after a normal stop `scoperag status` said "Stale record: pid N ... no longer
    answers". SIGTERM stops a server as Ctrl+C does: it closes the store and removes its record."""
    settings = Settings(data_dir=data_dir, profiles=["pdf"])
    server = _server(data_dir)
    stopped: list[int] = []  # the pid signalled: what the session ran before it ended
    with contextlib.suppress(Exception):  # the client's session ends with the server
        async with server:
            await _store(server, "note before the stop")
            pid = _owner_pid(data_dir)
            os.kill(pid, signal.SIGTERM)
            stopped.append(pid)
            for _ in range(300):  # until the process has exited
                if not Path(f"/proc/{pid}").exists():
                    break
                await anyio.sleep(0.1)
    assert stopped, "the server never stored the note and owned the store"
    assert not (data_dir / "edge" / RECORD).exists()
    assert store_status(settings)["note"].startswith("No process holds the store")


def test_an_attached_process_watches_the_owner_that_answers_not_the_record(
    data_dir: Path, embedder: Embedder
) -> None:
    """Regression: a new owner listens on the socket before it rewrites `owner.json`, so a
    process could attach while the record still named the dead previous owner, and then hang
    for the whole stop of the new one. The owner's hello names itself, and that one is watched."""
    settings = Settings(data_dir=data_dir, backend="edge", profiles=["pdf"])
    owner = _owning_process(data_dir)
    attached = None
    try:
        assert owner.stdout.readline().strip() == "owner"
        ended = subprocess.Popen(["true"])
        ended.wait()
        record_file = engine_dir(settings) / RECORD
        record = json.loads(record_file.read_text())
        record_file.write_text(json.dumps({**record, "pid": ended.pid}))  # the previous owner's
        attached = Runtime(settings, embedder=embedder)
        assert attached.backend.role == "attached"
        os.kill(owner.pid, signal.SIGSTOP)
        while not process_stopped(owner.pid):  # the signal is delivered asynchronously
            time.sleep(0.01)
        with pytest.raises(OwnerStoppedError, match=f"pid {owner.pid}"):
            attached.backend.list_collections()
    finally:
        _end(owner, attached)
