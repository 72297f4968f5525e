"""The names of the two vectors every scoperag collection keeps per point."""

DENSE_VECTOR = "text-dense"  # the vector name LlamaIndex's QdrantVectorStore reads and writes
SPARSE_VECTOR = (
    "text-bm25"  # BM25 sparse vectors (core.embedding.bm25), with the engine's IDF modifier
)
