"""A stored node's text and metadata, read from its payload without building the node.

Payloads follow LlamaIndex's Qdrant layout: `_node_content` holds the node as JSON (written by
`node_to_metadata_dict`, read back whole by `metadata_dict_to_node`), with its `text` and
`metadata` among its fields. A tool's hit needs only those two: reading them here spares a
LlamaIndex node per hit, and LlamaIndex's import on a search's path (issue 15).
`tests/test_lean_searches.py` pins both against `metadata_dict_to_node` on every profile's points.
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
