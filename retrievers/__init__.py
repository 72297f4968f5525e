"""Retrievers: typed filter values in, native Qdrant filters out."""
