"""Real SIGKILLs at a random moment of a 20,000-point `scoperag import` and of a `scoperag
ingest memory`, on real stores: what was acknowledged is served, a stopped import is reported by
`list`, `check` and the next import of its file, and running the command again converges."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evals"))
from fault_campaign import cli, count, ingest_kill, killed, write_export  # noqa: E402

POINTS = 20_000


def test_a_killed_import_is_reported_and_running_it_again_finishes_it(tmp_path: Path) -> None:
    export, data_dir = tmp_path / "memories.jsonl", tmp_path / "data"
    write_export(export, POINTS)
    records = data_dir / "imports"
    rng = random.Random()
    assert killed(data_dir, ["import", str(export)], lambda: any(records.glob("*.json")), rng)
    [record] = [json.loads(path.read_text()) for path in records.glob("*.json")]
    assert 0 < record["points"] < POINTS and record["line"] > record["points"]
    assert count(data_dir) >= record["points"]  # every acknowledged page is served
    said = f"import of {export.resolve()} (started "
    stopped = f"stopped after line {record['line']}"
    listed = cli(data_dir, "list")
    assert listed.returncode == 0 and said in listed.stdout and stopped in listed.stdout
    checked = cli(data_dir, "check", "--json")
    report = json.loads(checked.stdout)
    assert checked.returncode == 1 and any(stopped in p for p in report["problems"]), report
    assert all(not collection["problems"] for collection in report["collections"])
    again = cli(data_dir, "import", str(export))
    assert again.returncode == 0, again.stderr
    assert stopped in again.stdout and "now finished" in again.stdout
    assert count(data_dir) == POINTS
    assert not any(records.glob("*.json"))
    assert cli(data_dir, "check").returncode == 0


def test_a_killed_ingest_loses_nothing_and_running_it_again_converges(tmp_path: Path) -> None:
    outcome = ingest_kill(tmp_path, 1000, random.Random())
    assert outcome["killed"], outcome  # the subject ran: the ingest was killed while writing
    assert outcome["served"] and outcome["recovered"] and outcome["lost"] == 0, outcome
