"""A bad item in a batch is reported with its position and skipped; the rest is stored."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from scoperag.core.contracts.dnd import COLLECTION as DND
from scoperag.core.contracts.docs import COLLECTION as DOCS
from scoperag.pipelines.dnd import ingest_folders
from scoperag.pipelines.docs import ingest_docs_jsonl
from scoperag.server.runtime import Runtime


def _doc(doc_id: str) -> bytes:
    line = {
        "doc_id": doc_id,
        "title": f"Runbook {doc_id}",
        "text": "Restart the billing worker when invoices stop flowing; check the queue first.",
        "scope": "project_shared",
        "status": "active",
        "doc_type": "runbook",
        "agent_id": "agent-atlas",
        "updated_at": "2025-06-01T12:00:00Z",
    }
    return json.dumps(line).encode() + b"\n"


def test_a_line_of_bad_utf8_in_docs_jsonl_is_skipped_by_number(
    make_runtime: Callable[..., Runtime], tmp_path: Path
) -> None:
    """Regression: one line that was not UTF-8 aborted the whole file."""
    path = tmp_path / "docs.jsonl"
    path.write_bytes(_doc("first") + b'{"doc_id": "\xff\xfe broken"}\n' + _doc("third"))
    runtime = make_runtime(profiles=["docs"])
    report = ingest_docs_jsonl(path, runtime.backend, runtime.embedder)
    assert [(item.line, "not valid UTF-8" in item.error) for item in report.skipped] == [(2, True)]
    assert (report.lines, report.documents) == (3, 2)
    assert runtime.backend.facet(DOCS, "doc_id", None, 10) == {"first": 1, "third": 1}


def test_dnd_folders_with_a_binary_or_missing_document_are_reported_the_rest_stored(
    make_runtime: Callable[..., Runtime], shared_data: Path, tmp_path: Path
) -> None:
    """Regression: a binary Document.json aborted the batch; a folder without one was ignored."""
    a5e = shared_data / "dnd" / "a5e"
    spells = json.loads((a5e / "Spell.json").read_text())[:3]
    good, binary, orphan = (tmp_path / name for name in ("a5e", "binary", "orphan"))
    for folder in (good, binary, orphan):
        folder.mkdir()
        (folder / "Spell.json").write_text(json.dumps(spells))
    (good / "Document.json").write_text((a5e / "Document.json").read_text())
    (binary / "Document.json").write_bytes(b"\x89PNG\r\n\x1a\n\xff\x00\xfe" * 20)
    runtime = make_runtime(profiles=["dnd"])
    reports = ingest_folders([tmp_path], runtime.backend, runtime.embedder)
    errors = {Path(r.path).name: r.error for r in reports if r.error}
    assert set(errors) == {"binary", "orphan"}
    assert "Document.json is not readable JSON" in errors["binary"]
    assert "has no Document.json" in errors["orphan"]
    assert [r.items for r in reports if not r.error] == [3]
    assert runtime.backend.count(DND, None) == 3
