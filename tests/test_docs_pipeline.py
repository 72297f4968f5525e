"""`scoperag ingest docs`: JSONL lines -> chunks carrying doc_extension_payload/v1 in the store."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner
from qdrant_client import models

from scoperag.core.contracts.docs import COLLECTION, DocChunkPayload
from scoperag.pipelines.docs import ingest_docs_jsonl
from scoperag.server.cli.main import cli
from scoperag.server.runtime import Runtime

RUNBOOK = (
    "Restart the billing worker when invoices stop flowing. Check the queue depth first, then the "
    "last deploy. "
)


def _doc(doc_id: str, text: str = RUNBOOK, **fields: str) -> dict[str, str]:
    return {
        "doc_id": doc_id,
        "title": f"Title of {doc_id}",
        "text": text,
        "scope": "project_shared",
        "status": "active",
        "doc_type": "runbook",
        "agent_id": "agent-atlas",
        "updated_at": "2025-06-01T12:00:00+02:00",
        **fields,
    }


def _write(path: Path, lines: list[object]) -> Path:
    path.write_text(
        "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n"
    )
    return path


def _payloads(runtime: Runtime, doc_id: str | None = None) -> list[dict]:
    flt = None
    if doc_id is not None:
        flt = models.Filter(
            must=[models.FieldCondition(key="doc_id", match=models.MatchValue(value=doc_id))]
        )
    backend = runtime.backend
    return [record.payload or {} for record in backend.scroll(COLLECTION, flt, limit=1000)]


def test_bad_lines_are_reported_by_number_and_the_rest_go_in(
    make_runtime: Callable[..., Runtime], tmp_path: Path
) -> None:
    missing_zone = _doc("naive", updated_at="2025-06-01T12:00:00")
    no_status = {k: v for k, v in _doc("no-status").items() if k != "status"}
    path = _write(
        tmp_path / "docs.jsonl",
        [
            _doc("good-1"),
            '{"doc_id": "broken", ',
            no_status,
            "",
            _doc("bad-scope", scope="team"),
            missing_zone,
            ["not", "an", "object"],
            _doc("good-2", scope="org_shared", updated_at="2024-12-31T23:00:00Z"),
        ],
    )
    runtime = make_runtime(profiles=["docs"])
    report = ingest_docs_jsonl(path, runtime.backend, runtime.embedder)
    skipped = {item.line: item.error for item in report.skipped}
    assert sorted(skipped) == [2, 3, 5, 6, 7]
    assert "not valid JSON" in skipped[2]
    assert "'status' is missing" in skipped[3]
    assert "'scope' is 'team'" in skipped[5]
    assert "'updated_at' is '2025-06-01T12:00:00'" in skipped[6] and "time zone" in skipped[6]
    assert "expected a JSON object" in skipped[7]
    assert (report.lines, report.documents) == (8, 2)
    stored = _payloads(runtime)
    assert {p["doc_id"] for p in stored} == {"good-1", "good-2"}
    assert len(stored) == report.chunks


def test_every_chunk_carries_the_contract_fields(
    make_runtime: Callable[..., Runtime], tmp_path: Path
) -> None:
    long_text = " ".join(f"Step {n}: {RUNBOOK}" for n in range(40))
    doc = _doc("long", text=long_text, scope="agent_private", agent_id="agent-ember")
    runtime = make_runtime(profiles=["docs"])
    report = ingest_docs_jsonl(
        _write(tmp_path / "d.jsonl", [doc]), runtime.backend, runtime.embedder
    )
    stored = sorted(_payloads(runtime, "long"), key=lambda p: p["chunk_index"])
    assert len(stored) == report.chunks > 2
    assert [p["chunk_index"] for p in stored] == list(range(len(stored)))
    expected = {key: doc[key] for key in DocChunkPayload.model_fields if key != "chunk_index"}
    for payload in stored:
        assert (
            DocChunkPayload.model_validate(payload).model_dump(exclude={"chunk_index"}) == expected
        )


def test_reingesting_replaces_without_duplicates_or_stale_chunks(
    make_runtime: Callable[..., Runtime], tmp_path: Path
) -> None:
    long_text = " ".join(f"Paragraph {n}. {RUNBOOK}" for n in range(40))
    runtime = make_runtime(profiles=["docs"])
    first = _write(tmp_path / "v1.jsonl", [_doc("a", text=long_text), _doc("b")])
    ingest_docs_jsonl(first, runtime.backend, runtime.embedder)
    before = len(_payloads(runtime, "a"))
    ingest_docs_jsonl(first, runtime.backend, runtime.embedder)
    assert len(_payloads(runtime, "a")) == before > 2
    second = _write(
        tmp_path / "v2.jsonl",
        [_doc("a", status="archived"), _doc("b", status="draft"), _doc("b", status="archived")],
    )
    report = ingest_docs_jsonl(second, runtime.backend, runtime.embedder)
    assert report.notes == ["line 3: doc_id 'b' repeats line 2; the later line replaces it"]
    assert report.documents == 2
    assert [p["status"] for p in _payloads(runtime, "a")] == ["archived"]
    assert [p["status"] for p in _payloads(runtime, "b")] == ["archived"]
    assert len(_payloads(runtime)) == 2


def test_cli_ingest_reports_skipped_lines(
    make_runtime: Callable[..., Runtime], tmp_path: Path, backend_name: str
) -> None:
    path = _write(tmp_path / "cli.jsonl", [_doc("cli-1"), _doc("cli-2", updated_at="tomorrow")])
    runtime = make_runtime(profiles=["docs"])
    env = {"SCOPERAG_DATA_DIR": str(runtime.settings.data_dir)}
    if runtime.settings.qdrant_url:
        env["SCOPERAG_QDRANT_URL"] = runtime.settings.qdrant_url
    else:
        env["SCOPERAG_BACKEND"] = backend_name
    result = CliRunner().invoke(cli, ["ingest", "docs", str(path)], env=env)
    assert result.exit_code == 0, result.output
    assert "line 2: skipped, 'updated_at' is 'tomorrow'" in result.stderr
    assert "1 documents, 1 chunks written, 1 lines skipped" in result.stdout
    all_bad = _write(tmp_path / "bad.jsonl", ["{}", "[]"])
    result = CliRunner().invoke(cli, ["ingest", "docs", str(all_bad), "--json"], env=env)
    assert result.exit_code == 1
    assert [item["line"] for item in json.loads(result.stdout)["skipped"]] == [1, 2]
