"""LlamaIndex's `BaseEmbedding` over scoperag's local encoder, for notebooks and pipelines.

The tools call the encoder directly; this adapter lets LlamaIndex components (`VectorStoreIndex`,
`IngestionPipeline`) embed with the very same weights and code, so their vectors match.
"""

from __future__ import annotations

from llama_index.core.base.embeddings.base import BaseEmbedding
from pydantic import PrivateAttr

from scoperag.core.local_encoder import LocalEncoder


class LocalEncoderEmbedding(BaseEmbedding):
    """`BaseEmbedding` whose queries and texts go through one `LocalEncoder`."""

    _encoder: LocalEncoder = PrivateAttr()

    def __init__(self, encoder: LocalEncoder, model_name: str) -> None:
        super().__init__(model_name=model_name, embed_batch_size=64)
        self._encoder = encoder

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._encoder.embed([query])[0]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._encoder.embed([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._encoder.embed(texts)
