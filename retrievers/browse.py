"""`BrowseRetriever`: query-less browsing, newest first, one page at a time, all in Qdrant.

The filter, the order (`order_by` on a numeric key with a range index), the page (offset and
limit of the scroll) and the total (a filtered count) are all evaluated by the engine. Tools
take the page's payloads (`records`); `retrieve` wraps the same records in LlamaIndex nodes.
"""

from __future__ import annotations

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.vector_stores.utils import metadata_dict_to_node
from qdrant_client import models

from scoperag.core.backend import VectorBackend


class BrowseRetriever(BaseRetriever):
    """The points of `collection` matching `qdrant_filter`, ordered by `order_key` (newest first).

    The query text is ignored: `retrieve("")` returns page `offset // limit + 1`. `start_from`
    (an order key value, e.g. the end of a date window) lets the engine start reading the order
    there instead of at the newest point; it must not exclude any point the filter keeps.
    """

    def __init__(
        self,
        backend: VectorBackend,
        collection: str,
        order_key: str,
        qdrant_filter: models.Filter | None = None,
        offset: int = 0,
        limit: int = 10,
        start_from: float | None = None,
    ) -> None:
        super().__init__()
        self.backend = backend
        self.collection = collection
        self.qdrant_filter = qdrant_filter
        self.order_by = models.OrderBy(
            key=order_key, direction=models.Direction.DESC, start_from=start_from
        )
        self.offset = offset
        self.limit = limit

    def total(self) -> int:
        """How many points match the filter (a count in the engine)."""
        if not self.backend.collection_exists(self.collection):
            return 0
        return self.backend.count(self.collection, self.qdrant_filter)

    def records(self) -> list[models.Record]:
        """The page's points as the engine returns them (payloads, no nodes built)."""
        if not self.backend.collection_exists(self.collection):
            return []
        return self.backend.scroll(
            self.collection, self.qdrant_filter, self.limit, self.offset, order_by=self.order_by
        )

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [
            NodeWithScore(node=metadata_dict_to_node(record.payload or {}))
            for record in self.records()
        ]
