"""A stored memory is a LlamaIndex text node in LlamaIndex's Qdrant payload layout, and the lean
reader (`core.engine.node_payload`) gives back its text and metadata."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores.utils import metadata_dict_to_node, node_to_metadata_dict

from scoperag.core.embedding.bm25 import document_vector, node_text
from scoperag.core.engine.node_payload import stored_text_and_metadata
from scoperag.core.engine.vector_names import DENSE_VECTOR, SPARSE_VECTOR
from scoperag.pipelines.memories import make_memory, memory_id, memory_point


def llama_index_payload(
    node_id: str, text: str, metadata: dict[str, Any], source: str, embed: list, llm: list
) -> dict[str, Any]:
    node = TextNode(
        id_=node_id,
        text=text,
        metadata=metadata,
        excluded_embed_metadata_keys=embed,
        excluded_llm_metadata_keys=llm,
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=source)},
    )
    return node_to_metadata_dict(node, remove_text=False, flat_metadata=False)


def test_a_memory_point_reads_back_as_its_llamaindex_node() -> None:
    """The point a memory is stored as: LlamaIndex reads its node back (text, metadata, source,
    what is embedded), and the lean reader gives the same text and metadata."""
    moment = datetime(2026, 11, 23, 21, 0, tzinfo=UTC)
    extra = {"k": 1, "seen": moment, "pair": (1, 2)}  # not JSON: stored as LlamaIndex stores it
    memory = make_memory("Qdrant keeps the memories.", ["storage", "qdrant"], "note", None, extra)
    point = memory_point(memory, [0.5, 0.5], keywords=True)
    node = metadata_dict_to_node(point.payload)
    assert node.node_id == point.id == memory_id(memory.content_hash)
    assert node.ref_doc_id == memory.content_hash
    assert node.metadata == memory.model_dump(mode="json")
    assert node.metadata["metadata"] == {"k": 1, "seen": "2026-11-23T21:00:00Z", "pair": [1, 2]}
    theirs = llama_index_payload(
        node.node_id,
        memory.content,
        memory.model_dump(),
        memory.content_hash,
        node.excluded_embed_metadata_keys,
        node.excluded_llm_metadata_keys,
    )
    assert point.payload == theirs
    assert node.get_content(metadata_mode="embed") == memory.content  # the content alone
    seen_by_an_llm = node.get_content(metadata_mode="llm")
    assert "memory_type: note" in seen_by_an_llm and memory.content_hash not in seen_by_an_llm
    assert stored_text_and_metadata(point.payload) == (memory.content, node.metadata)
    assert set(point.vector) == {DENSE_VECTOR, SPARSE_VECTOR}
    # the BM25 vector of what is embedded, as `upsert_points` computes it for a point without one
    assert point.vector[SPARSE_VECTOR] == document_vector(node_text(point.payload))


def test_a_memory_point_has_no_keyword_vector_where_the_collection_keeps_none() -> None:
    point = memory_point(make_memory("No keywords here."), [1.0], keywords=False)
    assert list(point.vector) == [DENSE_VECTOR]
    assert json.loads(point.payload["_node_content"])["text"] == "No keywords here."
