"""`scoperag eval --run FILE --qrels FILE --compare PARAM=VALUE`, and an eval whose documents
are not in the store saying so: the real CLI on a store holding the bundled samples.

The TREC files are read back with a reader written to the TREC format (whitespace-separated
`qid Q0 docid rank score tag` and `qid iter docid rel`), as trec_eval, ranx and pytrec_eval
read them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from scoperag.server.cli.main import cli
from scoperag.server.samples import SAMPLES

ROOT = Path(__file__).resolve().parents[1]
DOCUMENT = "qpdf-page-labels-num-tree"


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    env = {"SCOPERAG_DATA_DIR": str(tmp_path_factory.mktemp("eval-output"))}
    for args in (
        ["pdf", str(SAMPLES / "qpdf-page-labels-num-tree.pdf")],
        ["memory", str(SAMPLES / "memories.json")],
    ):
        result = CliRunner().invoke(cli, ["ingest", *args], env=env)
        assert result.exit_code == 0, result.output
    return env


def _eval(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scoperag", "eval", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


QUESTIONS = [
    {  # page labelled "V" (index 8): its own text finds it first
        "id": "page V",
        "tool": "qdrant-find",
        "arguments": {"query": "Potato 8", "document_id": DOCUMENT},
        "relevant": [{"page_label": "V"}],
    },
    {  # two relevant pages: one found, one (index 99) is not in the file
        "id": "half",
        "tool": "qdrant-find",
        "arguments": {"query": "Potato 3", "document_id": DOCUMENT},
        "relevant": [{"physical_page_index": 3}, {"physical_page_index": 99}],
    },
    {  # the fix memory is unrelated to the query: the similarity floor hides it
        "id": "floor",
        "tool": "search",
        "arguments": {"query": "qdrant", "page_size": 5},
        "relevant": [{"memory_type": "fix"}],
    },
]


def _write(path: Path, questions: list[dict]) -> Path:
    path.write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    return path


def read_run(path: Path) -> dict[str, list[tuple[str, int, float]]]:
    """A TREC run: qid -> [(docid, rank, score)]; every line has six fields, Q0 second."""
    run: dict[str, list[tuple[str, int, float]]] = {}
    for line in path.read_text().splitlines():
        qid, q0, docid, rank, score, tag = line.split()
        assert q0 == "Q0" and tag
        run.setdefault(qid, []).append((docid, int(rank), float(score)))
    return run


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """TREC qrels: qid -> {docid: relevance}; every line has four fields."""
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        qid, _iteration, docid, relevance = line.split()
        qrels.setdefault(qid, {})[docid] = int(relevance)
    return qrels


def test_run_and_qrels_give_the_reports_figures(env: dict[str, str], tmp_path: Path) -> None:
    questions = _write(tmp_path / "q.jsonl", QUESTIONS)
    run_file, qrels_file = tmp_path / "run.txt", tmp_path / "qrels.txt"
    done = _eval(env, str(questions), "--json", "--run", str(run_file), "--qrels", str(qrels_file))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    run, qrels = read_run(run_file), read_qrels(qrels_file)
    assert set(qrels) == {"page%20V", "half", "floor"}
    assert len(qrels["half"]) == 2 and set(qrels["floor"].values()) == {1}
    for ranked in run.values():
        assert [rank for _, rank, _ in ranked] == list(range(1, len(ranked) + 1))
        assert len({docid for docid, _, _ in ranked}) == len(ranked)  # each docid once
        scores = [score for _, _, score in ranked]
        assert scores == sorted(scores, reverse=True)  # trec_eval orders by score
    # recall@5 computed from the two files is the report's, question by question
    by_id = {item["id"].replace(" ", "%20"): item for item in report["scores"]}
    for qid, relevant in qrels.items():
        found = {docid for docid, _, _ in run.get(qid, [])} & set(relevant)
        assert len(found) / len(relevant) == by_id[qid]["recall"]
    assert run["page%20V"][0][0] == "page_label=V"


def test_compare_scores_again_with_one_argument_changed(
    env: dict[str, str], tmp_path: Path
) -> None:
    questions = _write(tmp_path / "q.jsonl", QUESTIONS)
    done = _eval(env, str(questions), "--compare", "min_similarity=-1")
    assert done.returncode == 0, done.stderr
    assert "compared: as asked → min_similarity=-1" in done.stdout
    assert "search                       0.000 → 1.000" in done.stdout
    changed = done.stdout.split("changed (1):")[1].strip().splitlines()
    assert changed[0].startswith("floor: hit 0 → 1, rank - → ")
    as_json = json.loads(
        _eval(env, str(questions), "--compare", "min_similarity=-1", "--json").stdout
    )
    assert [item["id"] for item in as_json["compare"]["changed"]] == ["floor"]
    refused = _eval(env, str(questions), "--compare", "minimum=0")
    assert refused.returncode == 1
    assert "Invalid value for '--compare': \"minimum=0\"" in refused.stderr
    assert "min_similarity" in refused.stderr


def test_questions_on_documents_not_in_the_store_say_so(env: dict[str, str]) -> None:
    """The bundled question file asks about PDFs the samples do not hold."""
    done = _eval(env, str(ROOT / "evals" / "questions" / "pdf_known_pages.jsonl"))
    assert done.returncode == 0, done.stderr
    assert "not in the store (4; ingest them first" in done.stdout
    assert '  document_id "qpdf-manual-5.1.3": qdrant-find, lines 29, 30,' in done.stdout


def test_an_entry_no_stored_item_has_is_named(env: dict[str, str], tmp_path: Path) -> None:
    questions = _write(tmp_path / "q.jsonl", QUESTIONS[1:2])
    report = json.loads(_eval(env, str(questions), "--json").stdout)
    assert report["scores"] and report["missing"] == []  # one of its two entries was found
    wrong = [{**QUESTIONS[0], "relevant": [{"page_label": "5"}]}]
    report = json.loads(_eval(env, str(_write(tmp_path / "w.jsonl", wrong)), "--json").stdout)
    assert report["scores"][0]["hit"] == 0
    assert report["missing"] == [
        {"key": "", "value": '{"page_label": "5"}', "tool": "qdrant-find", "lines": [1]}
    ]
