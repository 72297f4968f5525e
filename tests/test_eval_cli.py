"""`scoperag eval` and `Store.evaluate`: a user's JSONL questions scored per tool and overall."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from scoperag import Store
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.errors import ScoperagError
from scoperag.server.samples import SAMPLES

PDF = SAMPLES / "qpdf-page-labels-num-tree.pdf"
DOCUMENT = "qpdf-page-labels-num-tree"


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("eval")


@pytest.fixture(scope="module")
def store(data_dir: Path, embedder: Embedder) -> Iterator[Store]:
    with Store(data_dir, profiles=["pdf", "books"], embedder=embedder, progress=False) as opened:
        opened.pdf.ingest([str(PDF)])
        opened.books.ingest(str(SAMPLES / "pride-and-prejudice-ch1-3.txt"), "pride")
        opened.books.set_position("pride", sentence=40)
        yield opened


def _write(path: Path, questions: list[dict]) -> Path:
    path.write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    return path


def _page_text(store: Store, index: int) -> str:
    hits = store.pdf.find("page", physical_page_index=index, limit=1).hits
    return hits[0].text


def _questions(store: Store) -> list[dict]:
    page_seven = _page_text(store, 7)
    return [
        {  # the page's own text: found first
            "id": "own-text",
            "tool": "qdrant-find",
            "arguments": {"query": page_seven, "document_id": DOCUMENT},
            "relevant": [{"physical_page_index": 7}],
        },
        {  # one of two relevant pages can be found, the other is not in the file
            "id": "half",
            "tool": "qdrant-find",
            "arguments": {"query": page_seven},
            "relevant": [
                {"physical_page_index": 7, "document_id": DOCUMENT},
                {"physical_page_index": 999},
            ],
        },
        {  # a page that does not exist: a miss
            "tool": "qdrant-find",
            "arguments": {"query": "anything"},
            "relevant": [{"physical_page_index": 999}],
        },
        {  # expects nothing and finds nothing
            "tool": "qdrant-find",
            "arguments": {"query": "anything", "page_label": "no-such-label"},
            "relevant": [],
        },
        {
            "id": "book",
            "tool": "search_book",
            "arguments": {"book_id": "pride", "query": "Mr. Bingley"},
            "relevant": [{"chapter": 1}],
        },
    ]


def test_figures_per_tool_and_overall(store: Store, tmp_path: Path) -> None:
    report = store.evaluate(_write(tmp_path / "q.jsonl", _questions(store)), k=5)
    scores = {s.id or f"line {s.line}": s for s in report.scores}
    assert (scores["own-text"].hit, scores["own-text"].mrr, scores["own-text"].recall) == (
        1.0,
        1.0,
        1.0,
    )
    assert scores["half"].recall == 0.5 and scores["half"].hit == 1.0
    assert scores["line 3"].hit == 0.0 and scores["line 3"].mrr == 0.0
    find = next(f for f in report.tools if f.tool == "qdrant-find")
    assert (find.questions, find.negatives, find.false_positives) == (3, 1, 0)
    assert find.hit_rate == pytest.approx(2 / 3)
    assert [s.line for s in report.missed] == [3]
    assert report.overall.questions == 4


def test_search_book_counts_sentences_past_the_position(store: Store, tmp_path: Path) -> None:
    report = store.evaluate(_write(tmp_path / "q.jsonl", _questions(store)[-1:]), k=5)
    (book,) = report.tools
    assert book.sentences_past_position == 0
    assert report.scores[0].hits > 0


def test_a_bad_line_is_reported_with_its_field_and_the_others_run(
    store: Store, tmp_path: Path
) -> None:
    questions = _questions(store)[:1]
    lines = [
        json.dumps(questions[0]),
        "{}",
        "not json",
        json.dumps(
            {"tool": "qdrant-find", "arguments": {"query": "x", "limit": 0}, "relevant": []}
        ),
        json.dumps({"tool": "qdrant-find", "arguments": {"query": "x"}, "relevant": "p. 5"}),
        json.dumps({"tool": "qdrant_find", "arguments": {"query": "x"}, "relevant": []}),
    ]
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = store.evaluate(path)
    assert [item.line for item in report.scores] == [1]
    assert report.overall.hit_rate == 1.0
    problems = [(p.line, p.field) for p in report.problems]
    assert problems == [(2, "tool"), (3, "json"), (4, "arguments"), (5, "relevant"), (6, "tool")]
    assert "did you mean 'qdrant-find'?" in report.problems[4].message
    assert "qdrant-find: Invalid value for 'limit'" in report.problems[2].message
    path.write_text("\n", encoding="utf-8")
    with pytest.raises(ScoperagError, match="no questions"):
        store.evaluate(path)


def _scoperag(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SCOPERAG_DATA_DIR": str(data_dir), "SCOPERAG_PROFILES": "pdf,books"}
    return subprocess.run(
        [sys.executable, "-m", "scoperag", *args], capture_output=True, text=True, env=env
    )


def test_cli_prints_the_same_figures_as_the_python_api(
    store: Store, data_dir: Path, tmp_path: Path
) -> None:
    """The CLI runs beside the store open in this process (they share the data dir)."""
    path = _write(tmp_path / "q.jsonl", _questions(store))
    expected = store.evaluate(path, k=3).model_dump(mode="json")
    as_json = _scoperag(data_dir, "eval", str(path), "--k", "3", "--json")
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout)["tools"] == expected["tools"]
    text = _scoperag(data_dir, "eval", str(path), "--k", "3")
    assert "qdrant-find" in text.stdout and "hit@3 0.667" in text.stdout
    assert "missed (1):" in text.stdout and "sentences past position 0" in text.stdout


def test_cli_refuses_k_below_one(data_dir: Path, tmp_path: Path) -> None:
    path = _write(tmp_path / "q.jsonl", [])
    refused = _scoperag(data_dir, "eval", str(path), "--k", "0")
    assert refused.returncode == 2 and "--k" in refused.stderr


def test_two_stores_scored_side_by_side_from_python_and_the_cli(
    store: Store, data_dir: Path, embedder: Embedder, tmp_path: Path
) -> None:
    """The same questions on a store built with another chunking: both reports, the changed
    questions and a paired test per metric; the CLI's `--against` prints the same."""
    path = _write(tmp_path / "q.jsonl", _questions(store))
    other_dir = tmp_path / "wide"
    with Store(other_dir, profiles=["pdf", "books"], embedder=embedder, progress=False) as wide:
        wide.pdf.ingest([str(PDF)], chunk_size=1024, chunk_overlap=0)
        wide.books.ingest(str(SAMPLES / "pride-and-prejudice-ch1-3.txt"), "pride", window=12)
        wide.books.set_position("pride", sentence=40)
        both = store.compare(path, wide, k=3)
    assert both.base.scores and both.other.scores
    assert [test.metric for test in both.significance] == ["hit", "recall", "mrr", "ndcg"]
    assert all(0.0 < test.p_value <= 1.0 for test in both.significance)
    shown = _scoperag(data_dir, "eval", str(path), "--k", "3", "--against", str(other_dir))
    assert shown.returncode == 0, shown.stderr
    assert f"compared: as asked → the store in {other_dir}" in shown.stdout
    assert "paired permutation" in shown.stdout
    as_json = _scoperag(
        data_dir, "eval", str(path), "--k", "3", "--against", str(other_dir), "--json"
    )
    compared = json.loads(as_json.stdout)["compare"]
    assert compared["overall"] == both.other.overall.model_dump(mode="json")
    both_given = _scoperag(
        data_dir, "eval", str(path), "--compare", "limit=1", "--against", str(other_dir)
    )
    assert both_given.returncode == 2 and "not both" in both_given.stderr
