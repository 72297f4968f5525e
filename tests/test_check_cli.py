"""`scoperag check [--json]` on real embedded stores: alone, with a damaged collection, and
beside a running process that owns the store."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import qdrant_edge as edge
from click.testing import CliRunner
from qdrant_client import models

from scoperag.core.engine.edge.backend import EdgeBackend
from scoperag.core.engine.generations import REGISTRY_KEY, Hidden
from scoperag.core.engine.vector_names import DENSE_VECTOR
from scoperag.server.cli.main import cli

HIDDEN = Hidden(sources=["a.pdf"], generation="g2", phase="writing", writer="host:1", started=1.0)


def build_store(data_dir: Path) -> Path:
    """Collections `alpha` (20 points, an index, one hidden generation) and `beta` (5 points)."""
    root = data_dir / "edge"
    backend = EdgeBackend.open(root)
    for name, count in (("alpha", 20), ("beta", 5)):
        backend.create_collection(name, 4, {})
        backend.upsert_points(
            name,
            [
                models.PointStruct(id=i, vector={DENSE_VECTOR: [1.0, i, 0.5, -i]}, payload={"n": i})
                for i in range(count)
            ],
        )
    backend.create_index("alpha", "n", "integer")
    backend.update_collection_metadata("alpha", {REGISTRY_KEY: [HIDDEN.model_dump()]})
    backend.close()
    return root


def run_check(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, dict]:
    monkeypatch.setenv("SCOPERAG_DATA_DIR", str(data_dir))
    result = CliRunner().invoke(cli, ["check", "--json"])
    return result.exit_code, json.loads(result.output)


def test_an_intact_store_is_reported_collection_by_collection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build_store(tmp_path)
    code, report = run_check(tmp_path, monkeypatch)
    assert code == 0 and report["ok"] is True
    found = {check["name"]: check for check in report["collections"]}
    assert found["alpha"]["points"] == 20 and found["beta"]["points"] == 5
    assert found["alpha"]["payload_indexes"] == {"n": "integer"}
    assert found["alpha"]["segments"] >= 1
    assert [entry["generation"] for entry in found["alpha"]["hidden_generations"]] == ["g2"]
    assert found["beta"]["hidden_generations"] == [] and found["beta"]["problems"] == []
    assert "this process" in report["checked_in"]


def test_a_damaged_collection_is_a_problem_and_exit_status_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = build_store(tmp_path)
    for segment in (root / "alpha/shard/segments").iterdir():
        shutil.rmtree(segment)
    code, report = run_check(tmp_path, monkeypatch)
    assert code == 1 and report["ok"] is False
    found = {check["name"]: check for check in report["collections"]}
    assert "acknowledged points are lost" in " ".join(found["alpha"]["problems"])  # the ledger
    assert found["beta"]["points"] == 5 and found["beta"]["problems"] == []


def test_beside_a_running_owner_the_engine_checks_run_in_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build_store(tmp_path)
    owner_code = (
        "import sys; from scoperag.core.config.settings import Settings; "
        "from scoperag.server.runtime import Runtime; "
        f"r = Runtime(Settings(data_dir={str(tmp_path)!r})); r.backend.count('beta', None); "
        "print('ready', flush=True); sys.stdin.read(); r.close()"
    )
    owner = subprocess.Popen(
        [sys.executable, "-c", owner_code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert owner.stdout is not None and owner.stdout.readline().strip() == "ready"
        code, report = run_check(tmp_path, monkeypatch)
    finally:
        owner.communicate("", timeout=60)
    assert code == 0
    assert f"process {owner.pid}" in report["checked_in"]
    assert {check["name"]: check["points"] for check in report["collections"]} == {
        "alpha": 20,
        "beta": 5,
    }


def test_a_stored_vector_that_is_not_a_vector_is_a_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A NaN vector written below every check (the engine's own upsert on the shard) is found
    by the sample of stored vectors."""
    root = build_store(tmp_path)
    backend = EdgeBackend.open(root)
    shard = backend.edge_collection("beta").client.shard  # the engine's shard, unchecked
    nan = [float("nan"), 1.0, 0.0, 0.0]
    shard.update(edge.UpdateOperation.upsert_points([edge.Point(7, {DENSE_VECTOR: nan}, {})]))
    assert any(r.id == 7 for r in backend.scroll("beta", None, 10))  # the point was written
    backend.close()

    code, report = run_check(tmp_path, monkeypatch)
    assert code == 1 and report["ok"] is False
    found = {check["name"]: check for check in report["collections"]}
    problems = " ".join(found["beta"]["problems"])
    assert "point 7: its stored dense vector is not finite (nan at index 0)" in problems
    assert found["alpha"]["problems"] == []
