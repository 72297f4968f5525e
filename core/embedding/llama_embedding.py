"""LlamaIndex's `BaseEmbedding` over scoperag's local model, for notebooks and pipelines.

The tools call the model directly; this adapter lets LlamaIndex components (`VectorStoreIndex`,
`IngestionPipeline`) embed with the very same weights and code, so their vectors match.
"""

from __future__ import annotations

from typing import Protocol

from llama_index.core.base.embeddings.base import BaseEmbedding
from pydantic import PrivateAttr


class TextModel(Protocol):
    """What the adapter needs of the local model (`embeddings._LocalModel`)."""

    def embed_query(self, text: str) -> list[float]: ...

    def embed_texts(self, texts: list[str]) -> list[list[float]]: ...


class LocalModelEmbedding(BaseEmbedding):
    """`BaseEmbedding` whose queries and texts go through the local model's encoders."""

    _model: TextModel = PrivateAttr()

    def __init__(self, model: TextModel, model_name: str) -> None:
        super().__init__(model_name=model_name, embed_batch_size=64)
        self._model = model

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._model.embed_query(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._model.embed_query(text)

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._model.embed_texts(texts)
