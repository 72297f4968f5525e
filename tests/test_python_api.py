"""The Python API (`scoperag.Store`): the MCP tools as methods with the same parameters, results
and errors, LlamaIndex retrievers and query engines over them, list and delete."""

from __future__ import annotations

import inspect
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastmcp import Client
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.llms.mock import MockLLM

import scoperag
from scoperag import Store, ToolCallError
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.errors import ScoperagError
from scoperag.server.mcp.app import build_server
from scoperag.server.profiles import declarations
from scoperag.server.samples import SAMPLES

PDF = SAMPLES / "qpdf-page-labels-num-tree.pdf"


@pytest.fixture(scope="module")
def store(embedder: Embedder, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """A store with every profile's bundled sample ingested through the API."""
    with Store(tmp_path_factory.mktemp("api"), embedder=embedder, progress=False) as opened:
        opened.pdf.ingest([PDF])  # a Path is sent as its string
        opened.books.ingest(str(SAMPLES / "pride-and-prejudice-ch1-3.txt"), "pride")
        opened.memory.ingest(str(SAMPLES / "memories.json"))
        opened.dnd.ingest([str(SAMPLES / "dnd")])
        opened.docs.ingest(str(SAMPLES / "docs.jsonl"))
        yield opened


def test_importing_scoperag_loads_no_heavy_dependency() -> None:
    code = (
        "import sys, scoperag; heavy = ('llama_index', 'fastmcp', 'qdrant', 'torch', 'onnx');"
        "print(sorted({m.split('.')[0] for m in sys.modules if m.startswith(heavy)}))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert loaded.stdout.strip() == "[]", loaded.stderr


def test_all_names_exactly_the_public_api() -> None:
    assert sorted(scoperag.__all__) == ["EvalReport", "Store", "ToolCallError", "open", "sample"]
    for name in scoperag.__all__:
        assert getattr(scoperag, name) is not None
    with pytest.raises(AttributeError):
        scoperag.FilteredRetriever  # noqa: B018


async def test_each_method_has_its_tools_parameters_and_defaults(store: Store) -> None:
    async with Client(build_server(store.runtime)) as client:
        schemas = {tool.name: tool.input_schema for tool in await client.list_tools()}
    for profile in declarations():
        for method, tool in profile.methods.items():
            signature = inspect.signature(getattr(store.profile(profile.name), method))
            schema = schemas[tool]
            properties = schema.get("properties") or {}
            assert set(signature.parameters) == set(properties), (profile.name, method)
            for name, parameter in signature.parameters.items():
                required = name in (schema.get("required") or [])
                assert (parameter.default is inspect.Parameter.empty) == required, (tool, name)
                if not required and "default" in properties[name]:
                    assert parameter.default == properties[name]["default"], (tool, name)


def test_find_returns_the_tools_result_model_filtered(store: Store) -> None:
    found = store.pdf.find("page labels", page_label="IV", limit=3)
    assert type(found).__name__ == "FindResult"
    assert found.hits and all(hit.page_label == "IV" for hit in found.hits)


def test_positional_arguments_follow_the_tools_required_parameters(store: Store) -> None:
    store.books.set_position("pride", sentence=12)
    result = store.books.search("pride", "Who is Mr. Bingley?", top_k=5)
    assert result.user_pos == 12 and result.passages
    assert all(passage.pos_end <= 12 for passage in result.passages)


async def test_a_refused_value_raises_the_tools_own_message(store: Store) -> None:
    async with Client(build_server(store.runtime)) as client:
        answer = await client.call_tool(
            "qdrant-find", {"query": "x", "limit": 0}, raise_on_error=False
        )
    with pytest.raises(ToolCallError) as refused:
        store.pdf.find("x", limit=0)
    assert answer.is_error
    assert str(refused.value) == answer.content[0].text
    assert refused.value.tool == "qdrant-find" and "'limit'" in str(refused.value)


def test_a_refused_call_is_not_also_logged(store: Store, capfd: pytest.CaptureFixture[str]) -> None:
    """The exception is the report: a notebook shows no server log line beside it."""
    with pytest.raises(ToolCallError):
        store.pdf.find("x", limit=0)
    printed = capfd.readouterr()
    assert "qdrant-find" not in printed.out + printed.err


def test_an_unknown_keyword_is_a_type_error(store: Store) -> None:
    with pytest.raises(TypeError, match="page_lable"):
        store.pdf.find("x", page_lable="IV")


async def test_a_sync_call_works_inside_a_running_event_loop(store: Store) -> None:
    """A notebook cell's thread runs an event loop: the methods must not need it."""
    assert store.pdf.find("page labels", limit=1).hits
    assert store.pdf.retriever(top_k=1).retrieve("page labels")
    store.books.set_position("pride", sentence=20, reader="loop")
    assert store.books.retriever("pride", reader="loop").retrieve("Mr. Bingley")
    assert store.list().profiles


def test_a_profile_not_served_is_an_error_naming_the_served_ones(
    embedder: Embedder, tmp_path: Path
) -> None:
    with Store(tmp_path, profiles=["pdf"], embedder=embedder) as only_pdf:
        assert only_pdf.pdf.documents().documents == []
        with pytest.raises(ScoperagError, match="Accepted: pdf"):
            only_pdf.books  # noqa: B018
        assert "pdf" in dir(only_pdf) and "books" not in dir(only_pdf)


def test_pdf_retriever_applies_its_filters(store: Store) -> None:
    retriever = store.pdf.retriever(page_label="ii", top_k=2)
    assert isinstance(retriever, BaseRetriever)
    nodes = retriever.retrieve("page labels")
    assert 0 < len(nodes) <= 2
    assert all(node.node.metadata["page_label"] == "ii" for node in nodes)


def test_a_retriever_with_an_unknown_filter_is_refused_when_made(store: Store) -> None:
    with pytest.raises(TypeError, match="page_lable"):
        store.pdf.retriever(page_lable="ii")


def test_a_retriever_with_a_refused_value_is_refused_when_made(store: Store) -> None:
    with pytest.raises(ToolCallError, match="Invalid value for 'limit': 0"):
        store.pdf.retriever(top_k=0)
    store.books.set_position("pride", sentence=20, reader="bob")
    with pytest.raises(ToolCallError, match="Invalid value for 'top_k': 0"):
        store.books.retriever("pride", reader="bob", top_k=0)


@pytest.mark.parametrize(
    ("profile", "filters", "key", "value"),
    [
        ("memory", {"memory_type": "decision", "min_similarity": -1.0}, "memory_type", "decision"),
        ("dnd", {"documents": ["wotc-srd"]}, "document", "wotc-srd"),
        ("docs", {"status": "active"}, "status", "active"),
    ],
)
def test_every_profile_retriever_gives_filtered_nodes(
    store: Store, profile: str, filters: dict, key: str, value: str
) -> None:
    nodes = store.profile(profile).retriever(top_k=3, **filters).retrieve("storage")
    assert nodes and all(node.node.metadata[key] == value for node in nodes)
    assert all(node.node.get_content() for node in nodes)


def test_book_query_engine_never_passes_the_readers_position(store: Store) -> None:
    store.books.set_position("pride", sentence=30, reader="ann")
    engine = store.books.as_query_engine("pride", reader="ann", llm=MockLLM())
    response = engine.query("Will Mr. Bennet visit Mr. Bingley?")
    assert response.source_nodes
    assert all(node.node.metadata["pos_end"] <= 30 for node in response.source_nodes)
    raw = store.books.retriever("pride", reader="ann", top_k=8).retrieve("Mr. Bingley")
    assert raw and all(node.node.metadata["pos_start"] <= 30 for node in raw)


def test_book_retriever_without_a_position_is_refused(store: Store) -> None:
    with pytest.raises(ScoperagError, match="No reading position is saved for reader 'nobody'"):
        store.books.retriever("pride", reader="nobody")


def test_pdf_query_engine_answers_with_any_llamaindex_llm(store: Store) -> None:
    engine = store.pdf.as_query_engine(llm=MockLLM(), page_label="IV")
    response = engine.query("What is on this page?")
    assert response.source_nodes
    assert all(node.node.metadata["page_label"] == "IV" for node in response.source_nodes)


def test_list_and_delete_as_the_cli_has_them(embedder: Embedder, tmp_path: Path) -> None:
    with Store(tmp_path, profiles=["pdf"], embedder=embedder, progress=False) as own:
        own.pdf.ingest([str(PDF)], document_id="labels")
        listing = own.list()
        assert listing.profiles[0].groups["documents"] == {"labels": 30}
        report = own.delete("pdf", "labels")
        assert report.points_deleted == 30
        assert own.pdf.documents().documents == []
        with pytest.raises(ScoperagError, match='No PDF document "labels" is stored'):
            own.delete("pdf", "labels")


def test_two_stores_on_one_data_dir_share_it(embedder: Embedder, tmp_path: Path) -> None:
    with Store(tmp_path, profiles=["memory"], embedder=embedder) as first:
        first.memory.store("The build runs on two cores.", tags=["ci"])
        with Store(tmp_path, profiles=["memory"], embedder=embedder) as second:
            found = second.memory.search(mode="tag", tags="ci")
    assert [row.content for row in found.memories] == ["The build runs on two cores."]


def test_ingest_shows_a_progress_bar(
    embedder: Embedder, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Store(tmp_path, profiles=["pdf"], embedder=embedder) as shown:
        shown.pdf.ingest([str(PDF)])
    assert "qdrant-ingest-pdf" in capsys.readouterr().err
