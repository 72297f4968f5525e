"""pdf profile over a real MCP client in memory: filters, schema, errors, listing, re-ingest."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from pypdf import PdfReader, PdfWriter

from scoperag.core.engine.collection_embedder import EMBEDDER_KEY
from scoperag.pipelines.page_labels import page_labels
from scoperag.pipelines.pdf import read_pdf
from scoperag.server.mcp.app import build_server
from scoperag.server.profiles.pdf.service import ingest_paths
from scoperag.server.runtime import Runtime

DOCS = {
    "qpdf-manual-5.1.3": "qpdf-manual-5.1.3.pdf",
    "GeoTopo-komprimiert": "GeoTopo-komprimiert.pdf",
    "cython-reference-guide-0.29a0": "cython-reference-guide-0.29a0.pdf",
    "data-in-brief-22-sanni-page4": "data-in-brief-22-sanni-page4.pdf",
    "qpdf-page-labels-num-tree": "qpdf-page-labels-num-tree.pdf",
}


@pytest.fixture(scope="session")
def labels(shared_data: Path) -> dict[str, list[str]]:
    return {doc: page_labels(PdfReader(shared_data / "pdf" / name)) for doc, name in DOCS.items()}


@pytest.fixture(scope="session")
def text_pages(shared_data: Path) -> set[tuple[str, int]]:
    """(document_id, page index) of every page with extractable text."""
    return {
        (doc, index)
        for doc, name in DOCS.items()
        for index, text in enumerate(read_pdf(shared_data / "pdf" / name).texts)
        if text
    }


async def find(runtime: Runtime, **arguments: object) -> dict:
    async with Client(build_server(runtime)) as client:
        result = await client.call_tool("qdrant-find", {"query": "text", **arguments})
    return result.structured_content


async def test_schema_shows_the_three_filters_typed_and_described(pdf_runtime: Runtime) -> None:
    async with Client(build_server(pdf_runtime)) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
    assert {"qdrant-find", "qdrant-store", "qdrant-list-documents", "qdrant-ingest-pdf"} <= set(
        tools
    )
    props = tools["qdrant-find"].input_schema["properties"]
    types = {name: {o.get("type") for o in props[name]["anyOf"]} for name in PDF_FILTERS}
    assert types == {
        "document_id": {"string", "null"},
        "physical_page_index": {"integer", "null"},
        "page_label": {"string", "null"},
    }
    assert all(len(props[name]["description"]) > 20 for name in PDF_FILTERS)
    assert tools["qdrant-find"].input_schema["required"] == ["query"]
    assert tools["qdrant-find"].annotations.readOnlyHint is True


PDF_FILTERS = ("document_id", "physical_page_index", "page_label")


def _cases(labels: dict[str, list[str]]) -> list[dict[str, object]]:
    """Filter combinations over pages of every document (labels that repeat included)."""
    cases: list[dict[str, object]] = []
    for doc, doc_labels in labels.items():
        for index in sorted({0, 1, 2, len(doc_labels) // 2, len(doc_labels) - 1}):
            if index >= len(doc_labels):
                continue
            page = {
                "document_id": doc,
                "physical_page_index": index,
                "page_label": doc_labels[index],
            }
            for size in (1, 2, 3):
                cases += [dict(combo) for combo in itertools.combinations(page.items(), size)]
    unique = {tuple(sorted(case.items())): case for case in cases}
    return list(unique.values())


def _matches(hit: dict, case: dict[str, object]) -> bool:
    return all(hit[key] == value for key, value in case.items())


def _expected_pages(
    case: dict[str, object], labels: dict[str, list[str]], text_pages: set[tuple[str, int]]
) -> set[tuple[str, int]]:
    """Pages with text that satisfy every filter of the case, from the PDFs themselves."""
    return {
        (doc, index)
        for doc, index in text_pages
        if _matches(
            {"document_id": doc, "physical_page_index": index, "page_label": labels[doc][index]},
            case,
        )
    }


async def test_every_filter_alone_and_combined_returns_only_matching_pages(
    pdf_runtime: Runtime, labels: dict[str, list[str]], text_pages: set[tuple[str, int]]
) -> None:
    cases = _cases(labels)
    assert len(cases) > 100
    async with Client(build_server(pdf_runtime)) as client:
        for case in cases:
            result = await client.call_tool("qdrant-find", {"query": "page", "limit": 50, **case})
            hits = result.structured_content["hits"]
            expected = _expected_pages(case, labels, text_pages)
            assert all(_matches(hit, case) for hit in hits), case  # precision 1.0
            assert bool(hits) == bool(expected), case
            if len(expected) <= 3:  # small page sets fit in the limit: recall 1.0
                found = {(hit["document_id"], hit["physical_page_index"]) for hit in hits}
                assert found == expected, case


async def test_a_page_filter_finds_every_chunk_of_that_page(
    pdf_runtime: Runtime, labels: dict[str, list[str]]
) -> None:
    """Recall: the label '1' occurs twice in the Cython guide; both pages come back."""
    doc = "cython-reference-guide-0.29a0"
    result = await find(pdf_runtime, document_id=doc, page_label="1", limit=100)
    pages = {hit["physical_page_index"] for hit in result["hits"]}
    expected = {i for i, label in enumerate(labels[doc]) if label == "1"}
    assert len(expected) == 2 and pages == expected


async def test_hits_say_where_they_come_from(pdf_runtime: Runtime) -> None:
    result = await find(pdf_runtime, query="page labels number tree", limit=5)
    assert len(result["hits"]) == 5
    for hit in result["hits"]:
        assert hit["document_id"] in DOCS and hit["source"] == DOCS[hit["document_id"]]
        assert isinstance(hit["physical_page_index"], int) and isinstance(hit["page_label"], str)
        assert hit["text"] and 0 < hit["similarity"] <= 1


async def test_the_computed_label_is_the_one_stored(pdf_runtime: Runtime) -> None:
    """The page that pypdf mislabels "11" is found under its right label, "2"."""
    result = await find(
        pdf_runtime, document_id="qpdf-page-labels-num-tree", physical_page_index=10
    )
    assert [hit["page_label"] for hit in result["hits"]] == ["2"]


async def test_an_empty_page_label_is_a_label_like_any_other(pdf_runtime: Runtime) -> None:
    """Regression: the strict parameter types refused page_label="", but the qpdf num-tree PDF
    has a page whose label is empty, so that page could no longer be asked for by its label."""
    result = await find(pdf_runtime, document_id="qpdf-page-labels-num-tree", page_label="")
    assert result["hits"] and {hit["page_label"] for hit in result["hits"]} == {""}


@pytest.mark.parametrize(
    ("arguments", "needle"),
    [
        ({"physical_page_index": "abc"}, "physical_page_index"),
        ({"physical_page_index": -1}, "greater than or equal to 0"),
        ({"limit": 0}, "limit"),
        ({"query": ""}, "query"),
    ],
)
async def test_bad_values_are_clear_errors(
    pdf_runtime: Runtime, arguments: dict, needle: str
) -> None:
    async with Client(build_server(pdf_runtime)) as client:
        with pytest.raises(ToolError, match=needle):
            await client.call_tool("qdrant-find", {"query": "x", **arguments})


@pytest.mark.parametrize(
    "arguments",
    [
        {"document_id": "no-such-document"},
        {"document_id": "QPDF-MANUAL-5.1.3"},  # ids are case-sensitive
        {"physical_page_index": 100000},
        {"page_label": "no-such-label"},
    ],
)
async def test_what_does_not_exist_is_an_empty_result(
    pdf_runtime: Runtime, arguments: dict
) -> None:
    result = await find(pdf_runtime, **arguments)
    assert result["hits"] == [] and result["message"]


@pytest.mark.parametrize("query", ["encryption password", "page labels", "linearize", "qpdf"])
async def test_hits_come_in_the_order_of_their_scores_with_the_cosine_beside(
    pdf_runtime: Runtime, query: str
) -> None:
    hits = (await find(pdf_runtime, query=query, limit=20))["hits"]
    assert len(hits) == 20
    scores = [hit["score"] for hit in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(-1.0 <= hit["similarity"] <= 1.0 for hit in hits)


async def test_an_unknown_document_id_is_named_with_the_stored_ones(pdf_runtime: Runtime) -> None:
    result = await find(pdf_runtime, query="encryption", document_id="qpdf-manual")
    assert result["hits"] == []
    assert "Unknown value \"qpdf-manual\" in 'document_id'; stored: " in result["message"]
    assert "qpdf-manual-5.1.3" in result["message"]
    known = await find(
        pdf_runtime, query="encryption", document_id="qpdf-manual-5.1.3", page_label="no-such"
    )
    assert known["hits"] == [] and "Unknown value" not in known["message"]


async def test_list_documents_gives_ids_page_counts_and_label_ranges(pdf_runtime: Runtime) -> None:
    async with Client(build_server(pdf_runtime)) as client:
        listing = (await client.call_tool("qdrant-list-documents", {})).structured_content
    documents = {doc["document_id"]: doc for doc in listing["documents"]}
    assert set(documents) == set(DOCS)
    manual = documents["qpdf-manual-5.1.3"]
    assert manual["page_count"] == 43
    assert [(r["first_label"], r["last_label"]) for r in manual["label_ranges"]] == [
        ("i", "iv"),
        ("1", "39"),
    ]


async def test_an_empty_profile_answers_with_a_hint(make_runtime: Callable[..., Runtime]) -> None:
    runtime = make_runtime(profiles=["pdf"])
    result = await find(runtime)
    assert result["hits"] == [] and "scoperag ingest pdf" in result["message"]


async def test_reingesting_replaces_pages_without_duplicates(
    make_runtime: Callable[..., Runtime], shared_data: Path, tmp_path: Path
) -> None:
    runtime = make_runtime(profiles=["pdf"])
    source = shared_data / "pdf" / "qpdf-page-labels-num-tree.pdf"
    first = ingest_paths(runtime, [source], "labels", None)
    again = ingest_paths(runtime, [source], "labels", None)
    collection = runtime.settings.pdf_collection
    assert first.files[0]["chunks"] == again.files[0]["chunks"]
    assert runtime.backend.count(collection, None) == first.files[0]["chunks"]

    shorter = PdfWriter()
    for page in PdfReader(source).pages[:5]:
        shorter.add_page(page)
    short_path = tmp_path / "labels-short.pdf"
    shorter.write(short_path)
    ingest_paths(runtime, [short_path], "labels", None)
    assert runtime.backend.count(collection, None) == 5
    result = await find(runtime, document_id="labels", physical_page_index=20)
    assert result["hits"] == []


def _encrypted(path: Path, source: Path) -> Path:
    writer = PdfWriter(clone_from=source)
    writer.encrypt("secret")
    writer.write(path)
    return path


def _blank(path: Path) -> Path:
    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    writer.write(path)
    return path


async def test_bad_files_are_reported_and_skipped(
    make_runtime: Callable[..., Runtime], shared_data: Path, tmp_path: Path
) -> None:
    runtime = make_runtime(profiles=["pdf"])
    good = shared_data / "pdf" / "data-in-brief-22-sanni-page4.pdf"
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4 this is not really a pdf")
    files = [
        _encrypted(tmp_path / "locked.pdf", good),
        broken,
        _blank(tmp_path / "scanned.pdf"),
        good,
        tmp_path / "missing.pdf",
    ]
    result = ingest_paths(runtime, files, None, None)
    assert (result.ingested, result.skipped) == (1, 4)
    errors = [item.get("error", "") for item in result.files]
    assert "encrypted" in errors[0]
    assert "not a readable PDF" in errors[1]
    assert "no page has extractable text" in errors[2]
    assert errors[3] == ""
    assert "does not exist" in errors[4]
    hits = (await find(runtime, document_id="data-in-brief-22-sanni-page4"))["hits"]
    assert hits and all(hit["page_label"] == "4" for hit in hits)


async def test_store_then_find_by_its_metadata(make_runtime: Callable[..., Runtime]) -> None:
    runtime = make_runtime(profiles=["pdf"])
    async with Client(build_server(runtime)) as client:
        for page in (1, 2):
            await client.call_tool(
                "qdrant-store",
                {
                    "information": f"Margin note on page {page}: check the proof.",
                    "metadata": {"document_id": "notes", "physical_page_index": page},
                },
            )
        result = await client.call_tool(
            "qdrant-find", {"query": "proof", "document_id": "notes", "physical_page_index": 2}
        )
    hits = result.structured_content["hits"]
    assert [hit["text"] for hit in hits] == ["Margin note on page 2: check the proof."]


async def test_ingest_tool_refuses_paths_outside_allowed_dirs(
    make_runtime: Callable[..., Runtime], shared_data: Path, tmp_path: Path
) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (allowed / "escape").symlink_to(shared_data / "pdf")
    runtime = make_runtime(profiles=["pdf"], allowed_dirs=[allowed])
    async with Client(build_server(runtime)) as client:
        for raw in (str(shared_data / "pdf"), str(allowed / ".." / ".."), str(allowed / "escape")):
            with pytest.raises(ToolError, match="paths below"):
                await client.call_tool("qdrant-ingest-pdf", {"paths": [raw]})


async def test_ingest_tool_reports_progress(
    make_runtime: Callable[..., Runtime], shared_data: Path, tmp_path: Path
) -> None:
    allowed = tmp_path / "pdfs"
    allowed.mkdir()
    for name in ("data-in-brief-22-sanni-page4.pdf", "qpdf-page-labels-num-tree.pdf"):
        (allowed / name).write_bytes((shared_data / "pdf" / name).read_bytes())
    runtime = make_runtime(profiles=["pdf"], allowed_dirs=[allowed])
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    async with Client(build_server(runtime), progress_handler=on_progress) as client:
        result = await client.call_tool("qdrant-ingest-pdf", {"paths": [str(allowed)]})
    assert result.structured_content["ingested"] == 2
    pages = sum(len(PdfReader(path).pages) for path in allowed.iterdir())  # progress counts pages
    assert seen[-1] == (pages, pages) and len(seen) >= 3


async def test_a_collection_built_by_another_embedder_is_refused(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(profiles=["pdf"])
    other = {"provider": "ollama", "model": "nomic-embed-text", "dimension": 768}
    runtime.backend.create_collection(runtime.settings.pdf_collection, 768, {EMBEDDER_KEY: other})
    async with Client(build_server(runtime)) as client:
        with pytest.raises(ToolError) as error:
            await client.call_tool("qdrant-find", {"query": "x"})
    message = str(error.value)
    assert "ollama/nomic-embed-text (768-d)" in message
    assert "local/sentence-transformers/all-MiniLM-L6-v2 (384-d)" in message
    assert "re-ingest" in message
