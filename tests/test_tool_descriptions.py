"""Each tool's description says what it returns: the claims a test can check, checked against
the tools' real answers on the bundled samples; and the Python API's `help()` shows each
parameter's plain type, default and description."""

from __future__ import annotations

import pydoc
from collections.abc import Iterator
from typing import Any

import pytest

from scoperag import Store
from scoperag.core.embedding.embedders import Embedder
from scoperag.server.samples import SAMPLES


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Store]:
    data_dir = tmp_path_factory.mktemp("descriptions")
    with Store(data_dir, embedder=embedder, progress=False) as opened:
        opened.pdf.ingest([str(SAMPLES / "qpdf-page-labels-num-tree.pdf")])
        opened.memory.ingest(str(SAMPLES / "memories.json"))
        opened.dnd.ingest([str(SAMPLES / "dnd")])
        yield opened


def _description(store: Store, tool: str) -> str:
    return store._session.tools[tool].description or ""


def test_qdrant_find_hits_say_which_document_and_page(store: Store) -> None:
    assert "Each hit says which document and page it is from" in _description(store, "qdrant-find")
    hits = store.pdf.find("Potato", limit=5).hits
    assert hits and all(hit.document_id and hit.page_label is not None for hit in hits)


def test_memory_search_ranks_above_the_floor_or_lists_newest_first(store: Store) -> None:
    text = _description(store, "search")
    assert "at least min_similarity" in text and "without one, newest first" in text
    ranked = store.memory.search("where is the reading position kept?", min_similarity=0.1)
    assert ranked.memories and all(row.similarity >= 0.1 for row in ranked.memories)
    newest = store.memory.search(mode="tag", tags=["storage", "decision", "pdf"])
    dates = [row.created_at for row in newest.memories]
    assert len(dates) > 1 and dates == sorted(dates, reverse=True)


@pytest.mark.parametrize("tool", ["search_dnd_content", "lookup_spell", "lookup_creature"])
def test_dnd_results_say_which_document_they_come_from(store: Store, tool: str) -> None:
    assert "Every result says which document it comes from" in _description(store, tool)
    arguments: dict[str, Any] = {"query": "fire"} if tool == "search_dnd_content" else {}
    results = store.call(tool, **arguments).results
    assert results and all(result.document == "wotc-srd" for result in results)


def test_help_shows_plain_types_defaults_and_descriptions(store: Store) -> None:
    shown = pydoc.render_doc(store.memory.search, renderer=pydoc.plaintext)
    assert "Annotated" not in shown and "FieldInfo" not in shown and "Validator" not in shown
    assert "tags: list[str] | None = None" in shown
    assert "Tags to match: a list, or one comma-separated string." in shown
    assert "page_size (int, default 10): Memories per page (1-100)." in shown
    assert "min_similarity (float, default 0.2): Ranked searches only" in shown
    find = pydoc.render_doc(store.pdf.find, renderer=pydoc.plaintext)
    assert (
        "find(query: str, limit: int = 10, explain: bool = False, document_id: str | None" in find
    )
    assert "    query (str): What to look for" in find
