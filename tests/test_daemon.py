"""The resident engine, in real processes: stdio clients, the CLI and the Python API served by
one, its exit when idle, its restart after a SIGKILL with nothing acknowledged lost, its
replacement when another version runs, a read-only data dir served in process, and progress
and errors as they are without it."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport

import scoperag
from scoperag.server.daemon import locate
from scoperag.server.daemon.commands import daemon_status
from scoperag.server.samples import SAMPLES

WAIT_SECONDS = 120.0  # a cold start on a busy machine


def _script() -> str:
    script = shutil.which("scoperag", path=str(Path(sys.executable).parent))
    assert script, "the scoperag console script is not installed"
    return script


@pytest.fixture
def folder(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The data dir, served by a resident engine started on demand (stopped at the end)."""
    monkeypatch.delenv("SCOPERAG_IN_PROCESS")
    monkeypatch.setenv("SCOPERAG_PROFILES", "memory")
    monkeypatch.setenv("SCOPERAG_ALLOWED_DIRS", str(SAMPLES))
    monkeypatch.setenv("SCOPERAG_DAEMON_IDLE_SECONDS", "60")
    monkeypatch.setenv("FASTMCP_CHECK_FOR_UPDATES", "off")
    data_dir = locate.data_dir()
    yield data_dir
    record = locate.read_record(data_dir)
    if record is not None:
        locate.stop(record)


def _serve() -> Client:
    transport = StdioTransport(_script(), ["serve"], env=dict(os.environ), keep_alive=False)
    return Client(transport, timeout=WAIT_SECONDS)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_script(), *args], env=dict(os.environ), capture_output=True, text=True, timeout=300
    )


async def _contents(client: Client) -> set[str]:
    found = await client.call_tool("search", {"query": "note", "page_size": 100})
    return {memory["content"] for memory in found.structured_content["memories"]}


def _wait_for(condition: object, what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    return locate._runs_daemon(pid)


async def test_two_stdio_clients_the_cli_and_the_python_api_share_one_resident_engine(
    folder: Path,
) -> None:
    async with _serve() as first, _serve() as second:
        await asyncio.gather(
            first.call_tool("store_memory", {"content": "note from the first client"}),
            second.call_tool("store_memory", {"content": "note from the second client"}),
        )
        called = await asyncio.to_thread(
            _cli, "call", "store_memory", "content=note from the command line"
        )
        assert called.returncode == 0, called.stderr
        with scoperag.Store(progress=False) as store:
            assert type(store.runtime.embedder.backend).__name__ == "ResidentModel"
            assert store.runtime.backend.role == "attached"
            store.memory.store(content="note from the python api")
            status = daemon_status()
        assert status is not None
        kinds = sorted(client["kind"] for client in status["clients"])
        assert kinds.count("mcp") == 2 and "model" in kinds
        assert await _contents(first) == {
            "note from the first client",
            "note from the second client",
            "note from the command line",
            "note from the python api",
        }
        doors = [c["pid"] for c in status["clients"] if c["kind"] == "mcp"]
        for pid in doors:  # a relay holds neither the model, the engine nor pydantic
            maps = Path(f"/proc/{pid}/maps").read_text()
            assert "python" in maps
            assert not {"onnxruntime", "qdrant_edge", "pydantic_core"} & set(_libraries(maps))
    assert len({status["pid"], locate.read_record(folder)["pid"]}) == 1


def _libraries(maps: str) -> list[str]:
    names = {Path(line.split()[-1]).name for line in maps.splitlines() if "/" in line}
    heavy = ("onnxruntime", "qdrant_edge", "pydantic_core")
    return [part for name in names for part in heavy if part in name]


def test_the_resident_engine_exits_after_its_idle_time(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCOPERAG_DAEMON_IDLE_SECONDS", "0.5")
    listed = _cli("list")
    assert listed.returncode == 0, listed.stderr
    assert "memories" in listed.stdout
    record = locate.read_record(folder)
    assert record is not None and record["idle_seconds"] == 0.5
    _wait_for(lambda: not _alive(record["pid"]), "the idle resident engine to exit")
    assert locate.read_record(folder) is None
    assert "idle for" in (folder / locate.LOG).read_text()


async def test_a_killed_resident_engine_is_started_again_and_nothing_acknowledged_is_lost(
    folder: Path,
) -> None:
    acknowledged, refused = [], []
    async with _serve() as client:
        await client.call_tool("store_memory", {"content": "note 0"})
        acknowledged.append("note 0")
        killed = locate.read_record(folder)["pid"]
        for number in range(1, 25):
            if number == 6:  # lands while the next writes run
                threading.Timer(0.01, os.kill, (killed, signal.SIGKILL)).start()
            content = f"note {number}"
            result = await client.call_tool(
                "store_memory", {"content": content}, raise_on_error=False
            )
            if result.is_error:
                refused.append(result.content[0].text)
            else:
                acknowledged.append(content)
        assert not _alive(killed)
        assert locate.read_record(folder)["pid"] != killed
        assert all("ended before answering" in message for message in refused)
        assert len(acknowledged) >= 20
        assert set(acknowledged) <= await _contents(client)


def test_a_resident_engine_of_another_version_is_replaced(folder: Path) -> None:
    older = (
        "from scoperag.server.daemon import locate; locate.PROTOCOL = 0; "
        "from scoperag.server.daemon.resident import main; main()"
    )
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / locate.LOG, "ab") as log:
        old = subprocess.Popen(
            [sys.executable, "-c", older],
            env=locate.daemon_env(folder),
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
    try:
        _wait_for(lambda: (locate.read_record(folder) or {}).get("pid") == old.pid, "the old one")
        assert locate.read_record(folder)["version"].endswith("+door0")
        listed = _cli("list")
        assert listed.returncode == 0, listed.stderr
        assert old.wait(timeout=WAIT_SECONDS) == 0  # it stopped cleanly when asked
        record = locate.read_record(folder)
        assert record["pid"] != old.pid and record["version"] == locate.version()
    finally:
        if old.poll() is None:
            old.kill()


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("mount"),
    reason="a read-only bind mount needs root and mount(8)",
)
async def test_a_read_only_data_dir_is_served_in_process(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, mounted = tmp_path / "store", tmp_path / "mounted"
    mounted.mkdir()
    monkeypatch.setenv("SCOPERAG_DATA_DIR", str(source))
    monkeypatch.setenv("SCOPERAG_IN_PROCESS", "1")
    ingested = _cli("ingest", "memory", str(SAMPLES / "memories.json"))
    assert ingested.returncode == 0, ingested.stderr
    monkeypatch.delenv("SCOPERAG_IN_PROCESS")
    monkeypatch.setenv("SCOPERAG_DATA_DIR", str(mounted))
    subprocess.run(["mount", "--bind", str(source), str(mounted)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(mounted)], check=True)
        listed = _cli("list")
        assert listed.returncode == 0, listed.stderr
        assert "memories" in listed.stdout and "points" in listed.stdout
        async with _serve() as client:
            found = await client.call_tool("search", {"query": "embedded engine"})
            assert found.structured_content["memories"]
        with scoperag.Store(progress=False) as store:
            assert type(store.runtime.embedder.backend).__name__ != "ResidentModel"
            assert store.memory.search(query="embedded engine").memories
        assert not (mounted / locate.RECORD).exists()
        assert not (mounted / locate.LOG).exists()
    finally:
        subprocess.run(["umount", str(mounted)], check=True)


async def test_progress_and_errors_cross_the_door(folder: Path) -> None:
    notes: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        notes.append((done, total, message))

    async with _serve() as client:
        ingested = await client.call_tool(
            "ingest_memories", {"path": str(SAMPLES / "memories.json")}, progress_handler=progress
        )
        assert not ingested.is_error and ingested.structured_content
        assert notes and notes[-1][0] == notes[-1][1]
        refused = await client.call_tool(
            "search", {"query": "embedded engine", "bogus": 1}, raise_on_error=False
        )
        assert refused.is_error and "'bogus'" in refused.content[0].text
        assert locate.read_record(folder) is not None  # the subject: a resident engine answered
    called = _cli("call", "search", "query=engine", "bogus=1")
    assert called.returncode == 1
    assert called.stderr.startswith("Error:") and "'bogus'" in called.stderr
    assert not called.stdout


def test_ctrl_c_at_a_door_interrupts_its_command_in_the_resident_engine(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCOPERAG_PROFILES", "memory,pdf")
    assert _cli("list").returncode == 0  # a resident engine, warm
    pdf = str(SAMPLES / "qpdf-manual-5.1.3.pdf")
    door = subprocess.Popen([_script(), "ingest", "pdf", pdf], env=dict(os.environ))

    def commands() -> list[dict]:
        return [c for c in (daemon_status() or {}).get("clients", []) if c["kind"] == "cli"]

    _wait_for(lambda: commands() or door.poll() is not None, "the ingestion to start")
    assert door.poll() is None, "the ingestion ended before it could be interrupted"
    door.send_signal(signal.SIGINT)
    assert door.wait(timeout=60) == 130
    _wait_for(lambda: not commands(), "the interrupted command to end")
    assert _cli("list").returncode == 0  # the resident engine serves on


def test_an_owner_that_decides_to_leave_accepts_no_request_after(tmp_path: Path) -> None:
    """The idle exit and a door arriving at that moment: either the door is counted first and
    the engine stays, or the engine has decided to leave and answers the door nothing (so the
    door starts the next engine instead of running its command in one that is closing)."""
    from scoperag.core.config.settings import Settings
    from scoperag.core.engine.sharing.shared_backend import SharedBackend

    backend = SharedBackend(Settings(data_dir=tmp_path / "data"))
    try:
        backend.list_collections()  # opens the store: this process owns it
        owner = backend.owner
        assert owner is not None
        socket_path = owner.record["socket"]
        door = locate.Line(socket_path)
        assert door.request("hello", {"attach": True, "pid": os.getpid()})["pid"] == os.getpid()
        assert not owner.leave_if_unused()  # a connection is open: stay
        door.close()
        _wait_for(lambda: not owner.clients, "the closed connection to be dropped")
        assert owner.leave_if_unused()
        late = locate.Line(socket_path)
        with pytest.raises(ConnectionResetError):
            late.request("hello", {"pid": os.getpid()})
        late.close()
        assert not owner.clients
    finally:
        backend.close()
