"""qdrant-store notes: kept across re-ingestion of their document, reserved keys checked."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError

from scoperag.server.mcp.app import build_server
from scoperag.server.profiles.pdf.service import ingest_paths
from scoperag.server.runtime import Runtime

PDF = "data-in-brief-22-sanni-page4.pdf"
DOC = "data-in-brief-22-sanni-page4"


@pytest.fixture(scope="module")
def one_pdf(make_runtime: Callable[..., Runtime], shared_data: Path) -> Runtime:
    """One small PDF ingested once per engine (refused notes leave it as it is)."""
    runtime = make_runtime(profiles=["pdf"])
    ingest_paths(runtime, [shared_data / "pdf" / PDF], None, None)
    return runtime


async def test_reingesting_a_pdf_keeps_the_notes_that_name_it(
    make_runtime: Callable[..., Runtime], shared_data: Path
) -> None:
    """Regression: a note's source id was its document_id, so re-ingesting the PDF deleted it."""
    runtime = make_runtime(profiles=["pdf"])
    ingest_paths(runtime, [shared_data / "pdf" / PDF], None, None)
    note = "Margin note: the sample sizes in table 2 do not add up."
    async with Client(build_server(runtime)) as client:
        await client.call_tool(
            "qdrant-store",
            {"information": note, "metadata": {"document_id": DOC, "physical_page_index": 0}},
        )
        ingest_paths(runtime, [shared_data / "pdf" / PDF], None, None)
        found = await client.call_tool(
            "qdrant-find", {"query": "sample sizes do not add up", "document_id": DOC}
        )
        listing = await client.call_tool("qdrant-list-documents", {})
    assert note in [hit["text"] for hit in found.structured_content["hits"]]
    [document] = listing.structured_content["documents"]
    assert (document["document_id"], document["pages_indexed"]) == (DOC, 1)


@pytest.mark.parametrize(
    ("metadata", "named"),
    [
        ({"document_id": 123}, "metadata.document_id"),
        ({"document_id": "  "}, "metadata.document_id"),
        ({"physical_page_index": -1}, "metadata.physical_page_index"),
        ({"physical_page_index": "3"}, "metadata.physical_page_index"),
        ({"physical_page_index": True}, "metadata.physical_page_index"),
        ({"page_label": 4}, "metadata.page_label"),
        ({"chunk_index": 0}, "metadata.chunk_index"),
        ({"page_count": 9}, "metadata.page_count"),
        ({"_node_content": "{}"}, "metadata._node_content"),
        ({"doc_id": "x"}, "metadata.doc_id"),
        ({"ingest_id": "x"}, "metadata.ingest_id"),
    ],
)
async def test_notes_with_reserved_keys_of_the_wrong_type_are_refused(
    one_pdf: Runtime, metadata: dict, named: str
) -> None:
    """Regression: `{"document_id": 123}` and `{"chunk_index": 0}` notes broke qdrant-find and
    qdrant-list-documents for everyone."""
    async with Client(build_server(one_pdf)) as client:
        with pytest.raises(ToolError, match=f"'{named}'"):
            await client.call_tool("qdrant-store", {"information": "a note", "metadata": metadata})
        listing = await client.call_tool("qdrant-list-documents", {})
        found = await client.call_tool("qdrant-find", {"query": "note"})
    assert [d["document_id"] for d in listing.structured_content["documents"]] == [DOC]
    hits = found.structured_content["hits"]
    assert hits and all(hit["text"] != "a note" for hit in hits)
