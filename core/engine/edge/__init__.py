"""Qdrant Edge, the embedded default: the Qdrant engine in-process, one shard per collection."""
