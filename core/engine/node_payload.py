"""The text and metadata of a node stored in LlamaIndex's Qdrant payload layout, read lean.

Payloads follow LlamaIndex's Qdrant layout: the node's metadata flat at the top, `_node_content`
holding the node as JSON (written by `node_to_metadata_dict`, read back whole by
`metadata_dict_to_node`), `_node_type`, and the source id as `document_id`, `doc_id` and
`ref_doc_id`. Payloads are written by LlamaIndex; a tool's hit needs only the node's text and
metadata, so reading them here spares a LlamaIndex node per hit and LlamaIndex's import on a
search's path. `tests/test_stored_payloads.py` checks the reader against
`metadata_dict_to_node` on every profile's points.
"""

from __future__ import annotations

import json
from typing import Any


def stored_text_and_metadata(payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(`node.get_content()`, `node.metadata`) of the node stored in `payload`."""
    content = payload.get("_node_content")
    if content is None:
        raise ValueError("Node content not found in the payload.")
    node = json.loads(content)
    return node.get("text") or "", node.get("metadata") or {}
