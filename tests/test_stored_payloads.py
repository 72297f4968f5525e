"""Every profile's stored points read back as their LlamaIndex nodes, and its searches find the
samples from a new process.

The hits' text and metadata are read from the payloads (`core/engine/node_payload.py`) instead of
LlamaIndex nodes built from them; a book's hits are cut and merged as `SentenceRun`s
(`postprocessors/sentence_runs.py`), the functions LlamaIndex's `SpoilerTruncation` and
`SentenceDedup` run over nodes: the results must be the same."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from llama_index.core.vector_stores.utils import metadata_dict_to_node

from scoperag.core.config.settings import Settings
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.engine.node_payload import stored_text_and_metadata
from scoperag.pipelines.book import ingest_book
from scoperag.pipelines.dnd import ingest_folders
from scoperag.pipelines.docs import ingest_docs_jsonl
from scoperag.pipelines.memories import import_memories
from scoperag.postprocessors.sentence_dedup import SentenceDedup
from scoperag.postprocessors.spoiler_truncation import SpoilerTruncation
from scoperag.retrievers.spoiler_safe import SpoilerSafeRetriever
from scoperag.server.profiles.books.models import SearchBookParams
from scoperag.server.profiles.books.service import BookService
from scoperag.server.profiles.pdf.notes import store_note
from scoperag.server.profiles.pdf.service import ingest_paths
from scoperag.server.runtime import Runtime
from scoperag.server.samples import SAMPLES

QUESTIONS = [
    "who has taken Netherfield Park?",
    "Mrs. Bennet and her nerves",
    "a single man in possession of a good fortune",
    "the ball at the assembly",
]

PROBE = """
import asyncio
from fastmcp import Client
from scoperag.server.mcp.app import build_server

CALLS = [
    ("search", {"query": "where are reading positions saved?"}, "memories"),
    ("search", {"tags": ["books"], "mode": "tag"}, "memories"),
    ("qdrant-find", {"query": "page labels", "limit": 3}, "hits"),
    ("elf_docs_search_l0", {"query": "release checklist"}, "hits"),
    ("lookup_spell", {"name": "fire ball"}, "results"),
    ("lookup_creature", {}, "results"),
    ("search_dnd_content", {"query": "a dragon breathing fire"}, "results"),
    ("list_books", {}, "books"),
    ("set_reading_position", {"book_id": "pp", "chapter": 2}, "sid"),
    ("get_reading_position", {"book_id": "pp"}, "sid"),
    ("search_book", {"book_id": "pp", "query": "who has taken Netherfield?"}, "passages"),
]

def count(value):
    return len(value) if isinstance(value, list) else value

async def found():
    async with Client(build_server()) as client:
        return [
            count((await client.call_tool(name, arguments)).structured_content[key])
            for name, arguments, key in CALLS
        ]

print(*asyncio.run(found()))
"""


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    """Every profile's samples through its real pipeline, and a PDF note with nested metadata,
    in a data dir no process holds afterwards."""
    data_dir = tmp_path_factory.mktemp("samples")
    settings = Settings(data_dir=data_dir, backend="edge")
    runtime = Runtime(settings, embedder=embedder)
    backend = runtime.backend
    ingest_paths(runtime, [SAMPLES / "qpdf-page-labels-num-tree.pdf"], None, None)
    note = {"topic": "labels", "pages": [1, 2], "nested": {"é": "ü"}}
    store_note(backend, embedder, settings.pdf_collection, [], "A note on page labels.", note)
    ingest_book(SAMPLES / "pride-and-prejudice-ch1-3.txt", backend, embedder, "pp")
    ingest_folders([SAMPLES / "dnd" / "wotc-srd"], backend, embedder)
    ingest_docs_jsonl(SAMPLES / "docs.jsonl", backend, embedder)
    import_memories(SAMPLES / "memories.json", backend, embedder)
    runtime.close()
    return data_dir


def test_every_profiles_points_read_as_their_nodes(sample_store: Path, embedder: Embedder) -> None:
    """Every stored point's text and metadata, read from its payload, equal its LlamaIndex
    node's (`get_content()`, `metadata`), keys and values."""
    runtime = Runtime(Settings(data_dir=sample_store, backend="edge"), embedder=embedder)
    backend = runtime.backend
    compared: dict[str, int] = {}
    for collection in backend.list_collections():
        for page in backend.points(collection):
            for record in page:
                node = metadata_dict_to_node(record.payload)
                text, metadata = stored_text_and_metadata(record.payload)
                assert text == node.get_content() and text
                assert metadata == node.metadata and metadata
                compared[collection] = compared.get(collection, 0) + 1
    runtime.close()
    assert len(compared) == 5 and min(compared.values()) >= 2, compared


def test_a_payload_without_a_node_is_refused() -> None:
    with pytest.raises(ValueError, match="Node content"):
        stored_text_and_metadata({"text": "not in LlamaIndex's layout"})


def test_every_profiles_searches_find_the_samples_from_a_new_process(
    sample_store: Path,
) -> None:
    """Eleven calls of the five profiles in a new process (as a launched server runs them) find
    something each."""
    environment = {**os.environ, "SCOPERAG_DATA_DIR": str(sample_store)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=environment, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    counts = done.stdout.split()
    assert all(int(count) > 0 for count in counts) and len(counts) == 11, done.stdout


@pytest.mark.parametrize("user_pos", [0, 7, 40, 95, 10_000])
def test_a_book_search_gives_the_passages_of_the_llamaindex_pipeline(
    sample_store: Path, embedder: Embedder, user_pos: int
) -> None:
    """`search_book`'s lean path cuts and merges exactly as `SpoilerSafeRetriever` +
    `SpoilerTruncation` + `SentenceDedup` do: the same passages (text, score, positions,
    chapter; the tool lists them best first) and the same counts, at positions from the title
    page to past the book's end."""
    runtime = Runtime(Settings(data_dir=sample_store, backend="edge"), embedder=embedder)
    service = BookService(runtime)
    user_pos = min(user_pos, service.lookup.sentence_count("pp") - 1)
    service.state.set("pp", "lean-test", user_pos)
    compared = 0
    for query in QUESTIONS:
        lean = service.search(
            SearchBookParams(book_id="pp", query=query, top_k=12, reader="lean-test")
        )
        hits = SpoilerSafeRetriever(runtime.backend, embedder, "pp", user_pos, top_k=12).retrieve(
            query
        )
        kept = SpoilerTruncation(user_pos=user_pos).postprocess_nodes(hits)
        merged = SentenceDedup().postprocess_nodes(kept)
        expected = [
            (
                found.node.get_content(),
                found.score,
                *(found.node.metadata[key] for key in ("pos_start", "pos_end", "chapter")),
                found.node.metadata["chapter_title"],
            )
            for found in sorted(merged, key=lambda found: -(found.score or 0.0))
        ]
        got = [
            (p.text, p.score, p.pos_start, p.pos_end, p.chapter, p.chapter_title)
            for p in lean.passages
        ]
        assert got == expected, query
        assert (lean.chunks_retrieved, lean.chunks_kept) == (len(hits), len(kept))
        assert lean.passages and all(p.pos_end <= user_pos for p in lean.passages)
        compared += len(got)
    runtime.close()
    assert compared >= len(QUESTIONS)
