"""`BrowseRetriever`: query-less browsing, newest first, one page at a time, all in Qdrant.

The filter, the order (`order_by` on a numeric key with a range index), the page (offset and
limit of the scroll) and the total (a filtered count) are all evaluated by the engine.
"""

from __future__ import annotations

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.vector_stores.utils import metadata_dict_to_node
from qdrant_client import models

from scoperag.core.backend import VectorBackend


class BrowseRetriever(BaseRetriever):
    """The points of `collection` matching `qdrant_filter`, ordered by `order_key` (newest first).

    The query text is ignored: `retrieve("")` returns page `offset // limit + 1`.
    """

    def __init__(
        self,
        backend: VectorBackend,
        collection: str,
        order_key: str,
        qdrant_filter: models.Filter | None = None,
        offset: int = 0,
        limit: int = 10,
    ) -> None:
        super().__init__()
        self.backend = backend
        self.collection = collection
        self.qdrant_filter = qdrant_filter
        self.order_by = models.OrderBy(key=order_key, direction=models.Direction.DESC)
        self.offset = offset
        self.limit = limit

    def total(self) -> int:
        """How many points match the filter (a count in the engine)."""
        if not self.backend.collection_exists(self.collection):
            return 0
        return self.backend.count(self.collection, self.qdrant_filter)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if not self.backend.collection_exists(self.collection):
            return []
        records = self.backend.scroll(
            self.collection, self.qdrant_filter, self.limit, self.offset, order_by=self.order_by
        )
        return [
            NodeWithScore(node=metadata_dict_to_node(record.payload or {})) for record in records
        ]
