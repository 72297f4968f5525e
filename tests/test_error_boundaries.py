"""One error boundary per surface: a domain error is a `ScoperagError`; the CLI ends with its
message on one line, MCP answers a tool error with the message as it is, HTTP answers one JSON
shape (`error_body`) with the status its kind calls for."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from fastapi import FastAPI
from fastapi.testclient import TestClient

from scoperag.core.errors import ConflictError, InvalidParameterError, ScoperagError, error_body
from scoperag.pipelines.book import BookRejectedError
from scoperag.server.cli.main import cli
from scoperag.server.http.errors import add_error_boundary
from scoperag.server.samples import SAMPLES


def test_a_pipeline_rejection_is_one_line_on_the_cli() -> None:
    """A pipeline's refusal was a plain ValueError the CLI had to catch by its base class."""
    pdf = SAMPLES / "qpdf-page-labels-num-tree.pdf"
    args = ["ingest", "pdf", str(pdf), str(pdf), "--document-id", "manual"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    assert "Invalid value for 'document_id': \"manual\"" in result.output
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)


def test_a_book_the_reader_refuses_is_a_domain_error(tmp_path: Path) -> None:
    assert issubclass(BookRejectedError, ScoperagError)
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    result = CliRunner().invoke(cli, ["ingest", "books", str(empty), "--book-id", "empty"])
    assert result.exit_code == 1
    assert "empty.txt: not ingested," in result.output and "Traceback" not in result.output


def test_an_error_has_one_json_shape() -> None:
    refused = error_body(InvalidParameterError("limit", 0, "a whole number from 1"))
    assert refused == {
        "error": "invalid_parameter",
        "message": "Invalid value for 'limit': 0. Accepted: a whole number from 1.",
        "field": "limit",
        "value": 0,
        "rule": "a whole number from 1",
    }
    assert error_body(ConflictError("changed")) == {"error": "conflict", "message": "changed"}


def test_http_answers_every_domain_error_in_that_shape() -> None:
    app = FastAPI()
    add_error_boundary(app)

    @app.get("/conflict")
    def conflict() -> None:
        raise ConflictError("another writer replaced it")

    @app.get("/refused")
    def refused() -> None:
        raise InvalidParameterError("page", "x", "a page number")

    @app.get("/broken")
    def broken() -> None:
        raise ScoperagError("the store cannot answer")

    client = TestClient(app)
    answers = {path: client.get(path) for path in ("/conflict", "/refused", "/broken")}
    assert {path: answer.status_code for path, answer in answers.items()} == {
        "/conflict": 409,
        "/refused": 400,
        "/broken": 500,
    }
    assert answers["/conflict"].json() == {
        "error": "conflict",
        "message": "another writer replaced it",
    }
    assert answers["/refused"].json()["field"] == "page"
    assert answers["/broken"].json()["error"] == "scoperag"
