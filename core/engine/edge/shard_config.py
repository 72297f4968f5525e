"""The shape of every scoperag shard on Qdrant Edge: its vectors, its HNSW graph, and the
payload index types qdrant-client's names stand for."""

from __future__ import annotations

import qdrant_edge as edge

from scoperag.core.engine.vector_names import DENSE_VECTOR, SPARSE_VECTOR

# ef_construct 64 instead of 100 halves the indexing work (ingestion keeps up with embedding);
# the search beams of `EdgeCollection.plan_search` keep recall@10 >= 0.99 on such graphs.
HNSW = edge.HnswIndexConfig(m=16, ef_construct=64, full_scan_threshold=10_000)
# qdrant-client's `PayloadSchemaType` values (a str enum, so its members find these too)
SCHEMAS = {
    "keyword": edge.PayloadSchemaType.Keyword,
    "integer": edge.PayloadSchemaType.Integer,
    "float": edge.PayloadSchemaType.Float,
    "bool": edge.PayloadSchemaType.Bool,
    "datetime": edge.PayloadSchemaType.Datetime,
    "text": edge.PayloadSchemaType.Text,
    "geo": edge.PayloadSchemaType.Geo,
    "uuid": edge.PayloadSchemaType.Uuid,
}


def shard_config(dimension: int) -> edge.EdgeConfig:
    """A shard with the dense vector and BM25 sparse vectors (the engine applies their IDF)."""
    return edge.EdgeConfig(
        vectors={DENSE_VECTOR: edge.EdgeVectorParams(dimension, edge.Distance.Cosine)},
        sparse_vectors={SPARSE_VECTOR: edge.EdgeSparseVectorParams(modifier=edge.Modifier.Idf)},
        hnsw_config=HNSW,
    )
