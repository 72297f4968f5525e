"""LlamaIndex's Qdrant payload layout of a text node, read and written without LlamaIndex.

Payloads follow LlamaIndex's Qdrant layout: the node's metadata flat at the top, `_node_content`
holding the node as JSON (written by `node_to_metadata_dict`, read back whole by
`metadata_dict_to_node`), `_node_type`, and the source id as `document_id`, `doc_id` and
`ref_doc_id`. A tool's hit needs only the node's text and metadata, and a stored memory is one
text node: reading and writing them here spares a LlamaIndex node per hit and LlamaIndex's
import on a search's or a memory write's path. `tests/test_lean_searches.py` pins the
reader against `metadata_dict_to_node` on every profile's points, and
`tests/test_node_payload.py` pins the writer against `node_to_metadata_dict`, byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

_SOURCE = "1"  # LlamaIndex's NodeRelationship.SOURCE


def stored_text_and_metadata(payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(`node.get_content()`, `node.metadata`) of the node stored in `payload`."""
    content = payload.get("_node_content")
    if content is None:
        raise ValueError("Node content not found in the payload.")
    node = json.loads(content)
    return node.get("text") or "", node.get("metadata") or {}


def text_node_payload(
    node_id: str,
    text: str,
    metadata: dict[str, Any],
    source_id: str,
    excluded_embed_metadata_keys: Sequence[str] = (),
    excluded_llm_metadata_keys: Sequence[str] = (),
) -> dict[str, Any]:
    """What `node_to_metadata_dict(TextNode(...), remove_text=False, flat_metadata=False)` gives
    for a text node with these fields, its source relationship and LlamaIndex's defaults.

    `metadata` holds JSON values (what LlamaIndex's `model_dump(mode="json")` would make of it)."""
    node = {
        "id_": node_id,
        "embedding": None,
        "metadata": metadata,
        "excluded_embed_metadata_keys": list(excluded_embed_metadata_keys),
        "excluded_llm_metadata_keys": list(excluded_llm_metadata_keys),
        "relationships": {
            _SOURCE: {
                "node_id": source_id,
                "node_type": None,
                "metadata": {},
                "hash": None,
                "class_name": "RelatedNodeInfo",
            }
        },
        "metadata_template": "{key}: {value}",
        "metadata_separator": "\n",
        "text": text,
        "mimetype": "text/plain",
        "start_char_idx": None,
        "end_char_idx": None,
        "text_template": "{metadata_str}\n\n{content}",
        "class_name": "TextNode",
    }
    return {
        **metadata,
        "_node_content": json.dumps(node, ensure_ascii=False),
        "_node_type": "TextNode",
        "document_id": source_id,
        "doc_id": source_id,
        "ref_doc_id": source_id,
    }
