"""Embedding models: the packaged MiniLM on onnxruntime, Ollama, BM25 sparse vectors."""
