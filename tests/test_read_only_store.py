"""A data dir on a read-only file system (a real read-only bind mount) opens read-only: reads
work, every write is refused naming the store, and a permission problem is not called damage."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from scoperag.core.errors import StorePermissionError
from scoperag.server.samples import __file__ as samples_init

SAMPLES = Path(samples_init).parent
pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("mount"),
    reason="a read-only bind mount needs root and mount(8)",
)


def _scoperag(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = shutil.which("scoperag", path=str(Path(sys.executable).parent))
    assert script, "the scoperag console script is not installed"
    env = {**os.environ, "SCOPERAG_DATA_DIR": str(data_dir), "SCOPERAG_PROFILES": "memory"}
    env["FASTMCP_CHECK_FOR_UPDATES"] = "off"
    return subprocess.run([script, *args], env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def read_only_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    base = tmp_path_factory.mktemp("read-only")
    source, mounted = base / "store", base / "mounted"
    mounted.mkdir()
    ingested = _scoperag(source, "ingest", "memory", str(SAMPLES / "memories.json"))
    assert ingested.returncode == 0, ingested.stderr
    subprocess.run(["mount", "--bind", str(source), str(mounted)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(mounted)], check=True)
        yield mounted
    finally:
        subprocess.run(["umount", str(mounted)], check=True)


def test_reads_work_on_a_read_only_mount(read_only_dir: Path) -> None:
    with pytest.raises(OSError):
        (read_only_dir / "probe").write_text("x")  # the subject: the mount is read-only
    listed = _scoperag(read_only_dir, "list")
    assert listed.returncode == 0, listed.stderr
    assert "collection 'memories': 5 points" in listed.stdout
    found = _scoperag(read_only_dir, "search", "memory", "storage")
    assert found.returncode == 0, found.stderr
    assert "storage" in found.stdout
    checked = _scoperag(read_only_dir, "check")
    assert checked.returncode == 0, checked.stderr
    assert "no problems found" in checked.stdout
    assert not (read_only_dir / "edge" / "owner.json").exists()


def test_every_write_is_refused_naming_the_read_only_store(read_only_dir: Path) -> None:
    ingest = _scoperag(read_only_dir, "ingest", "memory", str(SAMPLES / "memories.json"))
    stored = _scoperag(read_only_dir, "call", "store_memory", "content=a new memory")
    for refused in (ingest, stored):
        assert refused.returncode != 0
        assert f"The store at {read_only_dir}" in refused.stderr
        assert "is read-only" in refused.stderr
    listed = _scoperag(read_only_dir, "list")
    assert "collection 'memories': 5 points" in listed.stdout


def test_permission_advice_names_the_file_and_the_access(read_only_dir: Path) -> None:
    target = read_only_dir / "edge" / "memories" / "collection.json"
    with pytest.raises(OSError) as caught:
        target.open("a")
    error = StorePermissionError(target, "write", caught.value)
    message = str(error)
    assert str(target) in message and "No permission to write" in message
    assert "read-only" in message and "delete" not in message.lower()
