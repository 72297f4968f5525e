"""`HybridRetriever`: meaning and keywords, fused by the engine, restricted by a Qdrant filter,
as a LlamaIndex retriever (`retrievers.searches.HybridSearch` with nodes built from its hits)."""

from __future__ import annotations

from scoperag.retrievers.filtered import FilteredRetriever
from scoperag.retrievers.searches import HybridSearch


class HybridRetriever(HybridSearch, FilteredRetriever):
    """`HybridSearch`'s hits as LlamaIndex nodes (same arguments, same scores)."""
