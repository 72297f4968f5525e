"""dnd ingestion: payload rules, entry text, and bad folders, files and records in a batch."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from qdrant_client import models

from scoperag.core.contracts.dnd import COLLECTION, name_order, parse_challenge_rating
from scoperag.pipelines.dnd import KIND_SPECS, entry_text, ingest_folders
from scoperag.server.cli.main import cli
from scoperag.server.runtime import Runtime


@pytest.mark.parametrize(
    ("given", "expected"),
    [("1/8", 0.125), ("1/4", 0.25), ("1/2", 0.5), ("0", 0.0), ("17", 17.0), (30, 30.0)],
)
def test_challenge_rating_fractions_become_floats(given: Any, expected: float) -> None:
    assert parse_challenge_rating(given) == expected


@pytest.mark.parametrize("given", ["hard", "-1", "1/0", "", True])
def test_challenge_rating_rejects_what_is_not_one(given: Any) -> None:
    with pytest.raises(ValueError, match="not a challenge rating"):
        parse_challenge_rating(given)


def test_name_order_sorts_alphabetically_ignoring_case_and_punctuation() -> None:
    names = ["Zone of Truth", "Fireball", "Aid", "acid arrow", "Fire Bolt", "Acid Splash", "Élan"]
    assert sorted(names, key=name_order) == [
        "acid arrow",
        "Acid Splash",
        "Aid",
        "Élan",
        "Fire Bolt",
        "Fireball",
        "Zone of Truth",
    ]
    assert name_order("Zzzzzzzzzzzzzzzzzzzz") < 2**63  # fits Qdrant's signed 64-bit integers


def _first(path: Path, name: str) -> dict[str, Any]:
    return next(r for r in json.loads(path.read_text()) if r["fields"]["name"] == name)


def test_entry_text_leads_with_name_kind_and_key_facts(shared_data: Path) -> None:
    srd = shared_data / "dnd" / "wotc-srd"
    spell = _first(srd / "Spell.json", "Fireball")
    text = entry_text(KIND_SPECS["spell"], "Fireball", spell["fields"])
    assert text.startswith("Fireball\nSpell\nLevel: 3\nSchool: Evocation\n")
    assert spell["fields"]["desc"][:80] in text and spell["fields"]["higher_level"] in text
    dragon = _first(srd / "Monster.json", "Adult Red Dragon")
    text = entry_text(KIND_SPECS["monster"], "Adult Red Dragon", dragon["fields"])
    actions = json.loads(dragon["fields"]["actions_json"])
    assert text.startswith("Adult Red Dragon\nCreature\nSize: Huge\nType: Dragon\n")
    assert all(f"{action['name']}. {action['desc']}" in text for action in actions)
    assert '"name"' not in text  # the JSON strings are rendered, not pasted


@pytest.fixture
def folder(tmp_path: Path, shared_data: Path) -> Path:
    """A document folder built from real records: good, malformed and foreign ones."""
    srd = shared_data / "dnd" / "wotc-srd"
    spells = json.loads((srd / "Spell.json").read_text())[:3]
    no_name = {**spells[0], "pk": "nameless", "fields": {**spells[0]["fields"], "name": ""}}
    elsewhere = {**spells[1], "pk": "elsewhere", "fields": {**spells[1]["fields"], "document": 99}}
    keyless = {key: value for key, value in spells[2].items() if key != "pk"}
    target = tmp_path / "srd-sample"
    target.mkdir()
    (target / "Document.json").write_text((srd / "Document.json").read_text())
    (target / "Spell.json").write_text(json.dumps([*spells, no_name, elsewhere, keyless]))
    (target / "Weapon.json").write_text(
        json.dumps(json.loads((srd / "Weapon.json").read_text())[:2])
    )
    (target / "SpellList.json").write_text((srd / "SpellList.json").read_text())
    (target / "Monster.json").write_text("[{not json")
    return target


def _count(runtime: Runtime, **payload: Any) -> int:
    conditions = [
        models.FieldCondition(key=key, match=models.MatchValue(value=value))
        for key, value in payload.items()
    ]
    return runtime.backend.count(COLLECTION, models.Filter(must=conditions) if conditions else None)


def test_bad_files_and_records_are_reported_and_skipped(
    folder: Path, make_runtime: Callable[..., Runtime]
) -> None:
    runtime = make_runtime(profiles=["dnd"])
    missing = folder.parent / "no-document"
    missing.mkdir()
    reports = ingest_folders([folder, missing], runtime.backend, runtime.embedder)
    by_name = {Path(report.path).name: report for report in reports}
    assert "has a Document.json" in by_name["no-document"].error
    assert by_name["Spell.json"].items == 3
    assert any("it has no name" in note for note in by_name["Spell.json"].notes)
    assert any("its document is 99" in note for note in by_name["Spell.json"].notes)
    assert any("it has no pk" in note for note in by_name["Spell.json"].notes)
    assert by_name["Weapon.json"].items == 2
    assert "not readable JSON" in by_name["Monster.json"].error
    assert "not a kind this profile ingests" in by_name["SpellList.json"].notes[0]
    assert _count(runtime) == 5
    assert _count(runtime, kind="spell", document="wotc-srd") == 3


def test_reingesting_replaces_without_losing_or_duplicating(
    folder: Path, make_runtime: Callable[..., Runtime]
) -> None:
    runtime = make_runtime(profiles=["dnd"])
    ingest_folders([folder], runtime.backend, runtime.embedder)
    ingest_folders([folder], runtime.backend, runtime.embedder)
    assert _count(runtime) == 5  # the same ids: overwritten, not duplicated

    spells = json.loads((folder / "Spell.json").read_text())
    (folder / "Spell.json").write_text(json.dumps(spells[1:3]))  # one spell left the file
    weapons = json.loads((folder / "Weapon.json").read_text())
    weapons[0]["fields"]["name"] = ""  # a record gone bad keeps its stored version
    (folder / "Weapon.json").write_text(json.dumps(weapons))
    reports = ingest_folders([folder], runtime.backend, runtime.embedder)
    assert _count(runtime, kind="spell") == 2
    assert _count(runtime, item_type="weapon") == 2
    assert any("it has no name" in note for r in reports for note in r.notes)

    (folder / "Weapon.json").write_text("")  # an unreadable file keeps its stored items
    reports = ingest_folders([folder], runtime.backend, runtime.embedder)
    assert any(r.error and "Weapon.json" in r.error for r in reports)
    assert _count(runtime, item_type="weapon") == 2


def test_cli_ingests_a_folder_and_fails_clearly_without_a_document(
    folder: Path, tmp_path: Path
) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["ingest", "dnd", str(folder), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["ingested"], report["items"]) == (2, 5)
    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(cli, ["ingest", "dnd", str(empty)])
    assert result.exit_code == 1
    assert "Document.json" in result.output
