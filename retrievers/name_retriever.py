"""`NameMatchRetriever`: `retrievers.name_search.NameSearch` as a LlamaIndex retriever."""

from __future__ import annotations

from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.vector_stores.utils import metadata_dict_to_node

from scoperag.retrievers.name_match import NameMatch
from scoperag.retrievers.name_search import NameSearch


class NameMatchRetriever(NameSearch, BaseRetriever):
    """`NameSearch`'s points as LlamaIndex nodes (same arguments), each scored by its name."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        NameSearch.__init__(self, *args, **kwargs)
        BaseRetriever.__init__(self)

    def retrieve_matches(self, matches: list[NameMatch]) -> list[NodeWithScore]:
        """`matched_records` as nodes."""
        return [
            NodeWithScore(node=metadata_dict_to_node(record.payload), score=score)
            for record, score in self.matched_records(matches)
        ]

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self.retrieve_matches(self.find(query_bundle.query_str, self.top_k).matches)
