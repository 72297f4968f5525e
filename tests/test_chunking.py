"""Chunking is a parameter of ingestion: validated, recorded with the collection, kept on the
next ingestion unless changed, shown by `scoperag list`; a caller may bring its own parsers."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from llama_index.core.node_parser import SentenceSplitter

from scoperag.core.config.chunking import METADATA_KEY, TextChunking, WindowChunking, resolve
from scoperag.core.contracts import books as book_contract
from scoperag.core.contracts import docs as docs_contract
from scoperag.core.errors import InvalidParameterError
from scoperag.pipelines.book import ingest_book
from scoperag.pipelines.docs import ingest_docs_jsonl
from scoperag.server.cli.main import cli
from scoperag.server.profiles.pdf.service import ingest_paths
from scoperag.server.runtime import Runtime

SAMPLES = Path(__file__).resolve().parents[1] / "server" / "samples"
PDF = SAMPLES / "qpdf-page-labels-num-tree.pdf"
MANUAL = SAMPLES / "qpdf-manual-5.1.3.pdf"


def _chunking(runtime: Runtime, collection: str) -> dict[str, object] | None:
    return runtime.backend.collection_metadata(collection).get(METADATA_KEY)


def test_pdf_chunking_round_trips_and_is_kept_until_changed(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(profiles=["pdf"])
    collection = runtime.settings.pdf_collection
    small = ingest_paths(runtime, [MANUAL], None, None, {"chunk_size": 128, "chunk_overlap": 16})
    assert small.ingested == 1 and small.chunking == {"chunk_size": 128, "chunk_overlap": 16}
    assert _chunking(runtime, collection) == {"chunk_size": 128, "chunk_overlap": 16}
    kept = ingest_paths(runtime, [MANUAL], None, None)  # nothing given: the recorded setting
    assert kept.chunking == {"chunk_size": 128, "chunk_overlap": 16}
    assert kept.files[0]["chunks"] == small.files[0]["chunks"]
    wide = ingest_paths(runtime, [MANUAL], None, None, {"chunk_size": 1024})
    assert _chunking(runtime, collection) == {"chunk_size": 1024, "chunk_overlap": 16}
    assert wide.files[0]["chunks"] < small.files[0]["chunks"]  # fewer, longer chunks


def test_docs_and_books_record_their_chunking(make_runtime: Callable[..., Runtime]) -> None:
    runtime = make_runtime(profiles=["docs", "books"])
    backend, embedder = runtime.backend, runtime.embedder
    docs = ingest_docs_jsonl(
        SAMPLES / "docs.jsonl", backend, embedder, None, {"chunk_size": 96, "chunk_overlap": 0}
    )
    assert docs.documents and docs.chunking == {"chunk_size": 96, "chunk_overlap": 0}
    assert _chunking(runtime, docs_contract.COLLECTION) == docs.chunking
    book = SAMPLES / "pride-and-prejudice-ch1-3.txt"
    chunking = {"window": 4, "window_overlap": 1}
    report = ingest_book(book, backend, embedder, "pp", None, None, None, chunking)
    assert report.chunks and _chunking(runtime, book_contract.COLLECTION) == chunking
    again = ingest_book(book, backend, embedder, "pp", None, None, None, {"window": 8})
    assert again.chunking == {"window": 8, "window_overlap": 1} and again.chunks < report.chunks


def test_a_notebooks_own_transformations_are_used_and_named(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(profiles=["pdf"])
    own = [SentenceSplitter(chunk_size=48, chunk_overlap=0)]
    report = ingest_paths(runtime, [PDF], None, None, transformations=own)
    assert report.ingested == 1
    assert _chunking(runtime, runtime.settings.pdf_collection) == {
        "transformations": ["SentenceSplitter"]
    }


@pytest.mark.parametrize(
    ("kind", "given", "parameter"),
    [
        (TextChunking, {"chunk_size": 10}, "chunk_size"),
        (TextChunking, {"chunk_size": 64, "chunk_overlap": 64}, "chunk_overlap"),
        (TextChunking, {"chunk_overlap": -1}, "chunk_overlap"),
        (WindowChunking, {"window": 0}, "window"),
        (WindowChunking, {"window": 3, "window_overlap": 3}, "window_overlap"),
    ],
)
def test_a_chunking_out_of_range_is_an_error_naming_it(
    kind: type, given: dict[str, int], parameter: str
) -> None:
    with pytest.raises(InvalidParameterError) as error:
        resolve(kind, None, given)
    assert error.value.parameter == parameter
    assert f"'{parameter}'" in str(error.value) and "Accepted" in str(error.value)


def test_the_cli_takes_the_options_and_list_shows_the_chunking(
    cli_with_shared_model: CliRunner,
) -> None:
    refused = cli_with_shared_model.invoke(cli, ["ingest", "pdf", str(PDF), "--chunk-size", "8"])
    assert refused.exit_code != 0 and "chunk_size" in refused.output
    ingested = cli_with_shared_model.invoke(
        cli, ["ingest", "pdf", str(PDF), "--chunk-size", "128", "--chunk-overlap", "16", "--json"]
    )
    assert ingested.exit_code == 0, ingested.output
    listed = json.loads(cli_with_shared_model.invoke(cli, ["list", "--json"]).output)
    pdf = next(profile for profile in listed["profiles"] if profile["profile"] == "pdf")
    assert pdf["chunking"] == {"chunk_size": 128, "chunk_overlap": 16}
    text = cli_with_shared_model.invoke(cli, ["list"]).output
    assert "chunking: chunk_size 128, chunk_overlap 16" in text
