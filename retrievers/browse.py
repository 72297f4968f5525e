"""`BrowseRetriever`: query-less browsing, newest first, one page at a time, all in Qdrant.

The filter, the order (`order_by` on a numeric key with a range index), the page (offset and
limit of the scroll) and the total (a filtered count) are all evaluated by the engine. Tools
take the page's payloads (`BrowseSearch.records`); `retrieve` wraps the same records in
LlamaIndex nodes.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.vector_stores.utils import metadata_dict_to_node

from scoperag.retrievers.searches import BrowseSearch


class BrowseRetriever(BrowseSearch, BaseRetriever):
    """`BrowseSearch`'s page as LlamaIndex nodes: the query text is ignored, `retrieve("")`
    returns page `offset // limit + 1`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        BrowseSearch.__init__(self, *args, **kwargs)
        BaseRetriever.__init__(self)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [
            NodeWithScore(node=metadata_dict_to_node(record.payload or {}))
            for record in self.records()
        ]
