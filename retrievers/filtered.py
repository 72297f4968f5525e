"""`FilteredRetriever`: dense search restricted by a native Qdrant filter, as a LlamaIndex
retriever (`retrievers.searches.FilteredSearch` with nodes built from its hits)."""

from __future__ import annotations

from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.vector_stores.utils import metadata_dict_to_node

from scoperag.retrievers.searches import FilteredSearch


class FilteredRetriever(FilteredSearch, BaseRetriever):
    """`FilteredSearch`'s hits as LlamaIndex nodes (same arguments, same scores)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        FilteredSearch.__init__(self, *args, **kwargs)
        BaseRetriever.__init__(self)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [
            NodeWithScore(node=metadata_dict_to_node(point.payload or {}), score=point.score)
            for point in self.points(query_bundle)
        ]
