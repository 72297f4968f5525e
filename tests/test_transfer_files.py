"""Export files and imports on the memory profile: gzip, malformed lines, embedder mismatch and
`reembed`, idempotence, the CLI, and other memory servers' formats with times and tags kept."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from scoperag import Store
from scoperag.core.contracts.memory import COLLECTION
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.errors import ScoperagError
from scoperag.server.cli.main import cli
from scoperag.server.samples import SAMPLES

SEARCHES = [{"query": "embedded engine", "page_size": 5}, {"mode": "tag", "tags": "decision"}]


@pytest.fixture(scope="module")
def source(embedder: Embedder, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """A store holding the memory sample."""
    data = tmp_path_factory.mktemp("source")
    with Store(data, profiles=["memory"], embedder=embedder, progress=False) as store:
        store.memory.ingest(str(SAMPLES / "memories.json"))
        yield store


@pytest.fixture
def fresh(embedder: Embedder, tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "fresh", profiles=["memory"], embedder=embedder, progress=False) as s:
        yield s


def _answers(store: Store) -> list[dict[str, Any]]:
    return [store.memory.search(**arguments).model_dump(mode="json") for arguments in SEARCHES]


def _payloads(store: Store) -> dict[str, dict[str, Any]]:
    """content -> payload of every stored memory."""
    records = store.runtime.backend.scroll(COLLECTION, None, limit=1000)
    return {record.payload["content"]: record.payload for record in records}


def _edited_export(source: Store, folder: Path, edit: Callable[[list[str]], None]) -> Path:
    """The memory export with its lines changed by `edit`."""
    path = folder / "memory.jsonl"
    source.export("memory", path)
    lines = path.read_text(encoding="utf-8").splitlines()
    edit(lines)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_gzip_round_trip_with_progress(source: Store, fresh: Store, tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl.gz"
    seen: list[tuple[int, int]] = []
    report = source.export("memory", path, progress=lambda done, total: seen.append((done, total)))
    assert report.collections == {COLLECTION: 5} and seen[-1] == (5, 5)
    with gzip.open(path, "rt", encoding="utf-8") as file:
        lines = file.read().splitlines()
    assert len(lines) == 6 and json.loads(lines[0])["points"] == 5
    imported = fresh.import_file(path, progress=lambda done, total: seen.append((done, total)))
    assert imported.imported == 5 and imported.refused_count == 0 and seen[-1] == (5, 5)
    assert _answers(fresh) == _answers(source)


def test_a_malformed_line_is_reported_by_number_and_the_rest_imported(
    source: Store, fresh: Store, tmp_path: Path
) -> None:
    def damage(lines: list[str]) -> None:
        short = json.loads(lines[4])
        short["dense"] = [0.5] * 10
        lines[2], lines[4] = "{not json", json.dumps(short)

    report = fresh.import_file(_edited_export(source, tmp_path, damage))
    assert report.imported == 3 and report.refused_count == 2
    assert report.refused[0].startswith("line 3: not JSON")
    assert report.refused[1].startswith("line 5: not a point") and "10 numbers" in report.refused[1]
    assert len(_payloads(fresh)) == 3


def test_another_embedder_is_refused_unless_reembedded(
    source: Store, fresh: Store, tmp_path: Path
) -> None:
    def other_model(lines: list[str]) -> None:
        header = json.loads(lines[0])
        header["embedder"]["model"] = "some/other-model"
        header["metadata"]["scoperag_embedder"]["model"] = "some/other-model"
        lines[0] = json.dumps(header)

    path = _edited_export(source, tmp_path, other_model)
    with pytest.raises(ScoperagError, match="some/other-model.*--reembed"):
        fresh.import_file(path)
    assert not fresh.runtime.backend.collection_exists(COLLECTION)  # nothing written
    report = fresh.import_file(path, reembed=True)
    assert report.imported == 5 and report.reembedded
    _close(_answers(fresh), _answers(source))


def _close(after: Any, before: Any) -> None:
    if isinstance(before, float):
        assert after == pytest.approx(before, abs=1e-6)
    elif isinstance(before, dict | list):
        pairs = before.items() if isinstance(before, dict) else enumerate(before)
        assert len(after) == len(before)
        for key, value in pairs:
            _close(after[key], value)
    else:
        assert after == before


def test_import_is_idempotent_and_replaces(source: Store, fresh: Store, tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    source.export("memory", path)
    first = fresh.import_file(path)
    backend = fresh.runtime.backend
    changed = backend.scroll(COLLECTION, None, limit=1)[0]
    backend.set_payload(COLLECTION, changed.id, {"tags": ["changed"]})
    second = fresh.import_file(path)
    assert first.imported == second.imported == 5
    assert backend.count(COLLECTION, None) == 5
    assert backend.scroll(COLLECTION, None, limit=1)[0].payload == changed.payload
    assert _answers(fresh) == _answers(source)


OWNER = """import sys, time
from scoperag.core.config.settings import Settings
from scoperag.server.runtime import Runtime
runtime = Runtime(Settings(data_dir=sys.argv[1], backend="edge"))
print(runtime.backend.role, flush=True)
time.sleep(600)
"""


def test_both_work_beside_a_process_that_owns_the_store(
    source: Store, embedder: Embedder, tmp_path: Path
) -> None:
    """Pages cross the owner's socket both ways: one engine call per page."""
    path, again = tmp_path / "memory.jsonl", tmp_path / "again.jsonl"
    source.export("memory", path)
    data = tmp_path / "shared"
    owner = subprocess.Popen([sys.executable, "-c", OWNER, str(data)], stdout=subprocess.PIPE)
    try:
        assert owner.stdout is not None and owner.stdout.readline().strip() == b"owner"
        with Store(data, profiles=["memory"], embedder=embedder, progress=False) as attached:
            assert attached.runtime.backend.role == "attached"
            assert attached.import_file(path).imported == 5
            assert attached.export("memory", again).collections == {COLLECTION: 5}
            assert _answers(attached) == _answers(source)
    finally:
        owner.kill()
        owner.wait()
    assert (
        again.read_text(encoding="utf-8").splitlines()[1:]
        == (path.read_text(encoding="utf-8").splitlines()[1:])
    )


def test_the_cli_exports_and_imports(source: Store, tmp_path: Path, monkeypatch: Any) -> None:
    path = tmp_path / "memory.jsonl.gz"
    monkeypatch.setenv("SCOPERAG_DATA_DIR", str(source.settings.data_dir))
    done = CliRunner().invoke(cli, ["export", "memory", str(path)])
    assert done.exit_code == 0, done.output
    assert f"exported {COLLECTION}: 5 points" in done.output and path.is_file()
    monkeypatch.setenv("SCOPERAG_DATA_DIR", str(tmp_path / "copy"))
    done = CliRunner().invoke(cli, ["import", str(path), "--json"])
    assert done.exit_code == 0, done.output
    report = json.loads(done.output)
    assert report["imported"] == 5 and report["format"] == "scoperag-export"
    done = CliRunner().invoke(cli, ["import", str(path), "--into", "pdf"])
    assert done.exit_code != 0 and "Invalid value for 'into'" in done.output


SERVICE_EXPORT = {
    "export_metadata": {
        "source_machine": "laptop",
        "export_timestamp": "2026-01-05T10:00:00",
        "total_memories": 4,
        "exporter_version": "5.0.1",
    },
    "memories": [
        {
            "content": "Deploys moved to Thursdays.",
            "content_hash": "f" * 64,
            "tags": ["ops", "deploy"],
            "created_at": 1767225600.0,
            "updated_at": 1767312000.0,
            "memory_type": "decision",
            "metadata": {"source": "standup"},
            "export_source": "laptop",
        },
        {
            "content": "The staging database is read-only on Fridays.",
            "content_hash": "e" * 64,
            "tags": ["ops"],
            "created_at_iso": "2025-06-01T10:00:00Z",
            "updated_at_iso": "2025-06-02T10:00:00Z",
            "memory_type": "note",
            "metadata": {},
        },
        {"content": "   ", "tags": [], "created_at": 1767225600.0},
        {"content": "Deploys moved to Thursdays.", "tags": ["ops"], "created_at": 1.0},
    ],
}
MEM0_EXPORT = [
    {
        "id": "m-1",
        "memory": "Likes dark roast coffee.",
        "hash": "abc",
        "user_id": "alice",
        "agent_id": "barista",
        "metadata": {"source": "chat"},
        "created_at": "2024-07-20T02:17:53.123456-07:00",
        "updated_at": "2024-07-21T00:00:00-07:00",
    },
    {"text": "Allergic to peanuts.", "user_id": "bob", "created_at": "2024-07-22T08:00:00Z"},
    {"user_id": "carol", "created_at": "2024-07-22T08:00:00Z"},
]
GRAPH_EXPORT = [
    {
        "type": "entity",
        "name": "John_Smith",
        "entityType": "person",
        "observations": ["Speaks fluent Spanish", "Graduated in 2019"],
    },
    {"type": "relation", "from": "John_Smith", "to": "Anthropic", "relationType": "works_at"},
    {"type": "bogus"},
]


def test_mcp_memory_service_export_keeps_times_tags_and_type(fresh: Store, tmp_path: Path) -> None:
    path = tmp_path / "service.json"
    path.write_text(json.dumps(SERVICE_EXPORT), encoding="utf-8")
    report = fresh.import_file(path, into="memory")
    assert report.format == "mcp-memory-service" and report.profile == "memory"
    assert (report.imported, report.duplicates, report.refused_count) == (2, 1, 1)
    assert report.refused[0].startswith("memory 2: ")
    stored = _payloads(fresh)
    deploys = stored["Deploys moved to Thursdays."]
    assert deploys["tags"] == ["ops", "deploy"] and deploys["memory_type"] == "decision"
    assert deploys["created_at"] == "2026-01-01T00:00:00Z"
    assert deploys["updated_at"] == "2026-01-02T00:00:00Z"
    assert deploys["metadata"] == {"source": "standup"}
    staging = stored["The staging database is read-only on Fridays."]
    assert staging["created_at"] == "2025-06-01T10:00:00Z"
    assert staging["updated_at"] == "2025-06-02T10:00:00Z"


def test_mem0_export_keeps_times_and_makes_tags_of_user_and_agent(
    fresh: Store, tmp_path: Path
) -> None:
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps(MEM0_EXPORT), encoding="utf-8")
    report = fresh.import_file(path)
    assert report.format == "mem0" and (report.imported, report.refused_count) == (2, 1)
    assert report.refused[0].startswith("memory 2: ")
    stored = _payloads(fresh)
    coffee = stored["Likes dark roast coffee."]
    assert coffee["tags"] == ["user:alice", "agent:barista"]
    assert coffee["created_at"] == "2024-07-20T09:17:53.123456Z"
    assert coffee["updated_at"] == "2024-07-21T07:00:00Z"
    assert coffee["metadata"] == {"source": "chat", "mem0_id": "m-1"}
    assert stored["Allergic to peanuts."]["tags"] == ["user:bob"]
    tagged = fresh.memory.search(mode="tag", tags="user:alice")
    assert [row.content for row in tagged.memories] == ["Likes dark roast coffee."]


def test_mcp_reference_memory_json_gives_a_memory_per_observation_and_relation(
    fresh: Store, tmp_path: Path
) -> None:
    path = tmp_path / "memory.json"
    path.write_text("\n".join(json.dumps(line) for line in GRAPH_EXPORT) + "\n", encoding="utf-8")
    report = fresh.import_file(path)
    assert report.format == "mcp-server-memory" and report.imported == 3
    assert report.refused == ["line 3: not an entity or a relation"]
    stored = _payloads(fresh)
    spanish = stored["Speaks fluent Spanish"]
    assert spanish["tags"] == ["John_Smith", "person"] and spanish["memory_type"] == "observation"
    relation = stored["John_Smith works_at Anthropic"]
    assert relation["tags"] == ["John_Smith", "Anthropic"] and relation["memory_type"] == "relation"


def test_a_string_where_a_list_belongs_is_one_item(fresh: Store, tmp_path: Path) -> None:
    """mem0's `"categories": "work"` was read as the tags w, o, r, k, and a memory.json
    entity's `"observations": "..."` as one memory per letter."""
    mem0 = tmp_path / "mem0.json"
    item = {"memory": "Standup is at nine.", "user_id": "ann", "categories": "work"}
    mem0.write_text(json.dumps([{**item, "hash": "h", "score": 0.9, "actor_id": "bot"}]))
    report = fresh.import_file(mem0)
    assert report.imported == 1, report
    assert _payloads(fresh)["Standup is at nine."]["tags"] == ["user:ann", "actor:bot", "work"]
    assert set(report.dropped) == {"hash", "score"} and "sha256" in report.dropped["hash"]
    graph = tmp_path / "memory.json"
    entity = {"type": "entity", "name": "Ann", "entityType": "person", "observations": "Likes tea"}
    graph.write_text(json.dumps({**entity, "mood": "calm"}) + "\n", encoding="utf-8")
    report = fresh.import_file(graph)
    assert report.imported == 1 and _payloads(fresh)["Likes tea"]["tags"] == ["Ann", "person"]
    assert report.dropped == {"mood": "not a field scoperag maps from mcp-server-memory"}


def test_an_unknown_format_lists_the_accepted_ones(fresh: Store, tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"notes": ["a"]}), encoding="utf-8")
    accepted = "scoperag-export, mcp-memory-service, mem0, mcp-server-memory"
    with pytest.raises(ScoperagError, match=f"not a format scoperag imports. Accepted: {accepted}"):
        fresh.import_file(path)


def test_export_in_mcp_memory_service_format_comes_back(
    source: Store, fresh: Store, tmp_path: Path
) -> None:
    path = tmp_path / "leave.json"
    report = source.export("memory", path, format="mcp-memory-service")
    assert report.format == "mcp-memory-service" and report.collections == {COLLECTION: 5}
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["export_metadata"]["total_memories"] == 5 and len(written["memories"]) == 5
    assert isinstance(written["memories"][0]["created_at"], float)
    back = fresh.import_file(path)
    assert back.format == "mcp-memory-service" and back.imported == 5
    keys = ("content", "tags", "memory_type", "created_at", "metadata")
    before, after = _payloads(source), _payloads(fresh)
    assert {c: [p[k] for k in keys] for c, p in after.items()} == {
        c: [p[k] for k in keys] for c, p in before.items()
    }
    with pytest.raises(ScoperagError, match="'format'.*scoperag-export, mcp-memory-service"):
        source.export("memory", path, format="csv")


def test_a_failed_export_leaves_no_file(source: Store, tmp_path: Path) -> None:
    path = tmp_path / "pdf.jsonl"
    with pytest.raises(ScoperagError, match="Nothing to export"):
        source.export("pdf", path)
    assert list(tmp_path.iterdir()) == []
