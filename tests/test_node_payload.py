"""A hit's text and metadata read straight from its payload equal what LlamaIndex's node gives
(issue 15: the tools' searches build no nodes and do not import LlamaIndex)."""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_index.core.vector_stores.utils import metadata_dict_to_node

from scoperag.core.embeddings import Embedder
from scoperag.core.node_payload import stored_text_and_metadata
from scoperag.core.settings import Settings
from scoperag.pipelines.book import ingest_book
from scoperag.pipelines.dnd import ingest_folders
from scoperag.pipelines.docs import ingest_docs_jsonl
from scoperag.pipelines.memories import import_memories
from scoperag.server.demo import SAMPLES
from scoperag.server.pdf_notes import store_note
from scoperag.server.pdf_service import ingest_paths
from scoperag.server.runtime import Runtime


def test_every_profiles_points_read_as_their_nodes(tmp_path: Path, embedder: Embedder) -> None:
    """The profiles' sample data through their real pipelines (and a PDF note with nested
    metadata); every stored point's text and metadata equal its node's, keys and values."""
    settings = Settings(data_dir=tmp_path, backend="edge", allowed_dirs=[SAMPLES])
    runtime = Runtime(settings, embedder=embedder)
    backend = runtime.backend
    ingest_paths(runtime, [SAMPLES / "qpdf-page-labels-num-tree.pdf"], None, None)
    note = {"topic": "labels", "pages": [1, 2], "nested": {"é": "ü"}}
    store_note(backend, embedder, settings.pdf_collection, [], "A note on page labels.", note)
    ingest_book(SAMPLES / "pride-and-prejudice-ch1-3.txt", backend, embedder, "pp")
    ingest_folders([SAMPLES / "dnd" / "wotc-srd"], backend, embedder)
    ingest_docs_jsonl(SAMPLES / "docs.jsonl", backend, embedder)
    import_memories(SAMPLES / "memories.json", backend, embedder)
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
