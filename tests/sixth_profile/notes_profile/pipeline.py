"""Notes file -> one LlamaIndex document a line (`topic: text`) -> embedded -> the notes
collection; re-ingesting the file replaces its notes."""

from __future__ import annotations

from pathlib import Path

from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode

from notes_profile.contract import COLLECTION, TOPIC
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.engine.backend import VectorBackend
from scoperag.pipelines.store import EmbedNodes, replace_sources


def ingest_notes(path: Path, backend: VectorBackend, embedder: Embedder) -> int:
    """Ingest every `topic: text` line of `path`; returns the notes written."""
    source = {NodeRelationship.SOURCE: RelatedNodeInfo(node_id=path.name)}  # the file
    notes = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        topic, _, text = line.partition(":")
        if text.strip():
            metadata = {"topic": topic.strip(), "line": number}
            note = TextNode(id_=f"{path.name}:{number}", text=text.strip(), metadata=metadata)
            note.relationships = dict(source)
            notes.append(note)
    nodes = IngestionPipeline(transformations=[EmbedNodes(embedder=embedder)]).run(nodes=notes)
    return replace_sources(backend, embedder, COLLECTION, [TOPIC], [path.name], nodes)
