"""Ollama embeddings (`POST /api/embed`) through LlamaIndex's `OllamaEmbedding`."""

from __future__ import annotations

from llama_index.core.base.embeddings.base import BaseEmbedding

from core.settings import Settings


def make_ollama_embedding(settings: Settings) -> BaseEmbedding:
    """LlamaIndex's Ollama embedding for the configured base URL and model."""
    from llama_index.embeddings.ollama import OllamaEmbedding

    return OllamaEmbedding(
        model_name=settings.effective_embed_model,
        base_url=settings.ollama_base_url,
        embed_batch_size=32,
    )
