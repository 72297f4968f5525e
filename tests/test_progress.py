"""One progress protocol, `(done, total, note)`, with one renderer; a Python caller's callback
taking `(done, total)` alone still works."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from scoperag import Store
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.progress import ProgressBar, as_progress


def test_a_two_argument_callback_is_a_progress() -> None:
    seen: list[tuple] = []
    two = as_progress(lambda done, total: seen.append((done, total)))
    three = as_progress(lambda done, total, note: seen.append((done, total, note)))
    assert two is not None and three is not None
    two(1, 2, "ignored")
    three(2, 2, "done")
    assert seen == [(1, 2), (2, 2, "done")]
    assert as_progress(None) is None


def test_the_bar_draws_counts_and_notes_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    bar = ProgressBar("import", "point")
    bar(3, 10, "memories")
    bar(10, 10)
    drawn = terminal.getvalue()
    assert "import" in drawn and "3/10" in drawn and "memories" in drawn and "10/10" in drawn


def test_store_export_and_import_report_to_either_kind_of_callback(
    embedder: Embedder, tmp_path: Path
) -> None:
    seen: list[tuple] = []
    with Store(tmp_path / "a", profiles=["memory"], embedder=embedder) as store:
        store.memory.store(content="Backups run nightly.", tags="ops")
        path = tmp_path / "memory.jsonl"
        store.export("memory", path, progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1] == (1, 1)
    notes: list[tuple] = []
    with Store(tmp_path / "b", profiles=["memory"], embedder=embedder) as store:
        store.import_file(path, progress=lambda done, total, note: notes.append((done, total)))
    assert notes and notes[-1] == (1, 1)
