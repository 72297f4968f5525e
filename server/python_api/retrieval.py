"""A LlamaIndex retriever over a profile's search tool."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

# the fields a search hit's text is in, by profile kind (memories carry `content`)
TEXT_KEYS = ("text", "content")


def hit_list(result: Any) -> list[dict[str, Any]]:
    """The hits of a search result: its first field holding a list of objects."""
    data = result.model_dump(mode="json") if hasattr(result, "model_dump") else result
    for value in (data or {}).values():
        if isinstance(value, list) and all(isinstance(item, dict) for item in value):
            return value
    return []


def hit_payload(hit: dict[str, Any]) -> dict[str, Any]:
    """A hit's fields with its `metadata` object (other payload fields) merged in."""
    extra = hit.get("metadata")
    flat = {key: value for key, value in hit.items() if key != "metadata"}
    return {**extra, **flat} if isinstance(extra, dict) else flat


class ToolRetriever(BaseRetriever):
    """A search tool's hits as LlamaIndex nodes: the hit's text, its other fields as metadata,
    its score; the filters are the tool's own parameters, fixed when the retriever is made."""

    def __init__(self, search: Callable[[str], Any]) -> None:
        super().__init__()
        self._search = search

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        nodes = []
        for hit in hit_list(self._search(query_bundle.query_str)):
            payload = hit_payload(hit)
            key = next((k for k in TEXT_KEYS if isinstance(payload.get(k), str)), None)
            text = payload.pop(key) if key else ""
            score = payload.pop("score", None)
            node = TextNode(text=text, metadata=payload)
            nodes.append(NodeWithScore(node=node, score=score))
        return nodes
