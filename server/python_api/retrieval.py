"""A LlamaIndex retriever over a profile's search tool."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from scoperag.server.results.hits import hits_of


class ToolRetriever(BaseRetriever):
    """A search tool's hits as LlamaIndex nodes: the hit's text, its other fields as metadata
    (`similarity`, `fusion` among them), its `score` as the node's score; the filters are the
    tool's own parameters, fixed when the retriever is made."""

    def __init__(self, tool: str, search: Callable[[str], Any]) -> None:
        super().__init__()
        self._tool = tool
        self._search = search

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        nodes = []
        for hit in hits_of(self._tool, self._search(query_bundle.query_str)):
            metadata = dict(hit.fields)
            score = metadata.pop("score", None)
            nodes.append(
                NodeWithScore(node=TextNode(text=hit.text, metadata=metadata), score=score)
            )
        return nodes
