"""Ranked hits above a similarity floor, fetched in growing top-k rounds instead of all at once."""

from __future__ import annotations

from llama_index.core.schema import NodeWithScore, QueryBundle

from scoperag.retrievers.filtered import FilteredRetriever

FIRST_ROUND = 32
GROWTH = 4


def hits_above(
    retriever: FilteredRetriever, query: QueryBundle, min_score: float, cap: int
) -> list[NodeWithScore]:
    """Every hit scoring at least `min_score` (at most `cap`), most similar first.

    LlamaIndex's vector store query has no score threshold, so the engine returns the filtered
    top k and the list is cut where scores fall below the floor; k grows until that happens, the
    filtered points run out, or `cap` is reached. The embedding is computed once.
    """
    if query.embedding is None:
        query.embedding = retriever.embedder.embed_query(query.query_str)
    top_k = min(FIRST_ROUND, cap)
    while True:
        retriever.top_k = top_k
        hits = retriever.retrieve(query)
        above = [hit for hit in hits if (hit.score or 0.0) >= min_score]
        if len(above) < len(hits) or len(hits) < top_k or top_k >= cap:
            return above
        top_k = min(top_k * GROWTH, cap)
