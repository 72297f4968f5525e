"""`scoperag search ... --explain` and `scoperag eval ... --explain` on the bundled samples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_search_cli import run, store  # noqa: F401 (a fixture)

import scoperag


def test_search_explain_prints_a_table_per_hit_then_the_filter_and_drops(
    store: dict[str, str],  # noqa: F811
) -> None:
    plain = run(store, "search", "pdf", "Potato", "--physical-page-index", "10", "--limit", "2")
    result = run(
        store, "search", "pdf", "Potato", "--physical-page-index", "10", "--limit", "2", "--explain"
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith(plain.output)  # the usual listing, then the tables
    tables = result.output[len(plain.output) :]
    assert tables.count("rank  fused") == 1 and "dense (rank)  BM25 (rank)" in tables  # 1 hit
    assert "#1 " in tables and "Potato" in tables and " dbsf " in tables
    filter_line = next(line for line in tables.splitlines() if line.startswith("filter: "))
    condition = {"key": "physical_page_index", "match": {"value": 10}}
    assert json.loads(filter_line.removeprefix("filter: ")) == {"must": [condition]}
    assert "candidates: dense " in tables and "dropped: " in tables
    as_json = run(store, "search", "pdf", "Potato", "--limit", "1", "--explain", "--json")
    assert json.loads(as_json.output)["hits"][0]["explain"]["fused"]["rank"] == 1


def test_eval_explain_says_why_a_question_missed(
    store: dict[str, str],  # noqa: F811
    tmp_path: Path,
) -> None:
    questions = tmp_path / "questions.jsonl"
    lines = [  # page index 10 holds "Potato"; asked with a limit of 1 and a filter elsewhere
        {
            "tool": "qdrant-find",
            "arguments": {"query": "Potato", "physical_page_index": 3},
            "relevant": [{"physical_page_index": 10}],
            "id": "filtered-out",
        },
        {
            "tool": "qdrant-find",
            "arguments": {"query": "page", "limit": 1},
            "relevant": [{"physical_page_index": 10}],
            "id": "past-the-limit",
        },
    ]
    malformed = '{"tool": "qdrant-find"}\n'  # no arguments: reported, the others still run
    questions.write_text("".join(json.dumps(line) + "\n" for line in lines) + malformed)
    result = run(store, "eval", str(questions), "--k", "1", "--explain")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "filtered-out" in out and "past-the-limit" in out and "line 3" in out
    blocks = out.split("why ")
    filtered = next(block for block in blocks if block.startswith("filtered-out"))
    assert "filter" in filtered and "neither branch returned it" in filtered
    limited = next(block for block in blocks if block.startswith("past-the-limit"))
    assert "dense rank" in limited and "limit" in limited


def test_the_python_api_takes_explain(
    store: dict[str, str],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SCOPERAG_DATA_DIR", store["SCOPERAG_DATA_DIR"])
    with scoperag.Store() as opened:
        plain = opened.pdf.find("Potato", limit=2)
        explained = opened.pdf.find("Potato", limit=2, explain=True)
        remembered = opened.memory.search("database", explain=True)
    assert plain.hits and plain.explain is None and plain.hits[0].explain is None
    assert [hit.text for hit in explained.hits] == [hit.text for hit in plain.hits]
    assert explained.explain is not None and explained.explain.candidates.bm25
    assert [hit.explain.fused.rank for hit in explained.hits] == [1, 2]
    assert remembered.memories and remembered.explain is not None
    assert remembered.explain.candidates.dense >= len(remembered.memories)
    assert all(memory.explain is not None for memory in remembered.memories)
    assert remembered.explain.dropped_total >= len(remembered.explain.dropped)
