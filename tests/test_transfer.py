"""Export -> import into an empty data dir: every profile's tools answer exactly as before (same
ids, same hits in the same order, scores within 1e-6), on each profile's bundled sample."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scoperag import Store
from scoperag.core.embedding.embedders import Embedder
from scoperag.server.samples import SAMPLES

# A few searches and lookups per profile, through the MCP tools.
CALLS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "pdf": [
        ("qdrant-find", {"query": "encrypt a file with a password", "limit": 5}),
        ("qdrant-find", {"query": "page labels", "limit": 3}),
        ("qdrant-list-documents", {}),
    ],
    "books": [
        ("search_book", {"book_id": "pride", "query": "Who is Mr. Bingley?", "top_k": 5}),
        ("list_books", {}),
        ("get_reading_position", {"book_id": "pride"}),
    ],
    "memory": [
        ("search", {"query": "embedded engine", "page_size": 5}),
        ("search", {"mode": "tag", "tags": "decision"}),
    ],
    "dnd": [
        ("search_dnd_content", {"query": "fire damage in an area"}),
        ("lookup_spell", {"name": "firebal", "limit": 1}),
        ("lookup_creature", {"name": "goblin"}),
    ],
    "docs": [("elf_docs_search_l0", {"query": "how do I install it", "top_k": 5})],
}


def _ingest_samples(store: Store) -> None:
    store.pdf.ingest([str(SAMPLES / "qpdf-manual-5.1.3.pdf")])
    store.books.ingest(str(SAMPLES / "pride-and-prejudice-ch1-3.txt"), "pride")
    store.memory.ingest(str(SAMPLES / "memories.json"))
    store.dnd.ingest([str(SAMPLES / "dnd")])
    store.docs.ingest(str(SAMPLES / "docs.jsonl"))


def _answers(store: Store, profile: str) -> list[dict[str, Any]]:
    return [
        store.call(tool, **arguments).model_dump(mode="json") for tool, arguments in CALLS[profile]
    ]


@pytest.fixture(scope="module")
def stores(
    embedder: Embedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Store, Store, dict[str, Path]]]:
    """A store with every sample, its profiles exported, and a store that imported them."""
    files = tmp_path_factory.mktemp("exports")
    with Store(tmp_path_factory.mktemp("source"), embedder=embedder, progress=False) as source:
        _ingest_samples(source)
        source.books.set_position("pride", chapter=2)  # a reader's state: exported with the book
        exported = {}
        for profile in CALLS:
            exported[profile] = files / f"{profile}.jsonl"
            source.export(profile, exported[profile])
        with Store(tmp_path_factory.mktemp("copy"), embedder=embedder, progress=False) as copy:
            for path in exported.values():
                copy.import_file(path)
            yield source, copy, exported


def _same(before: Any, after: Any, where: str = "") -> None:
    """Equal, floats within 1e-6."""
    if isinstance(before, float) or isinstance(after, float):
        assert after == pytest.approx(before, abs=1e-6), where
    elif isinstance(before, dict):
        assert isinstance(after, dict) and sorted(before) == sorted(after), where
        for key in before:
            _same(before[key], after[key], f"{where}.{key}")
    elif isinstance(before, list):
        assert isinstance(after, list) and len(before) == len(after), where
        for index, (one, other) in enumerate(zip(before, after, strict=True)):
            _same(one, other, f"{where}[{index}]")
    else:
        assert before == after, where


def _items(answer: dict[str, Any]) -> int:
    """How many hits (or rows) an answer holds, in its lists."""
    return sum(len(value) for value in answer.values() if isinstance(value, list))


@pytest.mark.parametrize("profile", list(CALLS))
def test_import_into_an_empty_store_answers_exactly_as_before(
    stores: tuple[Store, Store, dict[str, Path]], profile: str
) -> None:
    source, copy, exported = stores
    header = json.loads(exported[profile].read_text(encoding="utf-8").splitlines()[0])
    assert header["format"] == "scoperag-export" and header["profile"] == profile
    assert header["points"] > 0 and header["embedder"]["dimension"] == 384
    before, after = _answers(source, profile), _answers(copy, profile)
    assert all(_items(answer) > 0 or answer.get("sid") for answer in before), before
    _same(before, after, profile)


def test_the_copy_holds_what_the_source_holds(stores: tuple[Store, Store, dict[str, Path]]) -> None:
    source, copy, _ = stores
    listed = {p.profile: p.model_dump() for p in source.list().profiles}
    restored = {p.profile: p.model_dump() for p in copy.list().profiles}
    assert listed and all(data["points"] for data in listed.values())
    for profile, data in listed.items():
        assert {**restored[profile], "data_dir": None} == {**data, "data_dir": None}, profile
