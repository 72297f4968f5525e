"""Embedding models behind one factory; the heavy backend is imported only when first used.

The local model runs on onnxruntime (`onnx_encoder.py`: one text unpadded, loaded in about 0.4 s;
batches padded, in a session of their own loaded on the first batch); LlamaIndex is imported only
for notebooks and pipelines that ask for `Embedder.model`.
"""

from __future__ import annotations

import os
import threading
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from scoperag.core.config.settings import Settings
from scoperag.core.embedding.packaged_model import checked_packaged_folder
from scoperag.core.embedding.recent_queries import RecentQueries
from scoperag.core.embedding.vector_check import check_vectors
from scoperag.core.errors import EmbedderMismatchError, EmbeddingServiceError

if TYPE_CHECKING:  # LlamaIndex and onnxruntime load when used, not at start-up
    from llama_index.core.base.embeddings.base import BaseEmbedding

    from scoperag.core.embedding.onnx_encoder import OnnxEncoder


class EmbedderInfo(BaseModel):
    """What a collection records about the embedder that built it."""

    provider: str
    model: str
    dimension: int

    def label(self) -> str:
        return f"{self.provider}/{self.model} ({self.dimension}-d)"

    def check_builds(self, collection: str, stored: EmbedderInfo | None) -> None:
        """Raise unless `collection`, built with `stored` (None: not recorded), takes this
        embedder's vectors."""
        if stored is None:
            return
        if (stored.provider, stored.model, stored.dimension) != (
            self.provider,
            self.model,
            self.dimension,
        ):
            raise EmbedderMismatchError(collection, stored.label(), self.label())


def model_folder(settings: Settings) -> Path:
    """The local provider's model folder: SCOPERAG_EMBED_MODEL's (the user's own, not pinned),
    else the packaged one, checked against upstream's digests."""
    if settings.embed_model:
        return Path(settings.embed_model)
    return checked_packaged_folder(settings.cache_dir)


class _LocalModel:
    """The packaged (or SCOPERAG_EMBED_MODEL's) sentence-transformers folder: one text on
    `embed_threads`, batches on the batch threads (loaded on the first batch); both give the
    same vectors."""

    normalises = True  # the graph ends in an L2 norm

    def __init__(self, settings: Settings) -> None:
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        from scoperag.core.embedding.bert_folder import BertFolder
        from scoperag.core.embedding.onnx_encoder import OnnxEncoder

        self.name = settings.effective_embed_model
        self.folder = BertFolder.open(model_folder(settings))
        self.batch_threads = settings.effective_embed_batch_threads
        self.int8_cache = settings.cache_dir if settings.embed_precision == "int8" else None
        self.one_by_one = OnnxEncoder(
            self.folder, settings.embed_threads, padding=False, int8_cache=self.int8_cache
        )
        self._loading = threading.Lock()

    @property
    def batches(self) -> OnnxEncoder:
        """The batch encoder, loaded by the first caller (others wait for it)."""
        with self._loading:
            if "_batches" not in self.__dict__:
                from scoperag.core.embedding.onnx_encoder import OnnxEncoder

                self.__dict__["_batches"] = OnnxEncoder(
                    self.folder, self.batch_threads, padding=True, int8_cache=self.int8_cache
                )
        return self.__dict__["_batches"]

    def embed_query(self, text: str) -> list[float]:
        return self.one_by_one.embed([text])[0]

    def embed_texts(self, texts: list[str]) -> list[list[float]]:
        if len(texts) <= 1:
            return self.one_by_one.embed(texts)
        return self.batches.embed(texts)

    def as_llama_index(self, checked: Embedder) -> BaseEmbedding:
        from scoperag.core.embedding.llama_embedding import LocalModelEmbedding

        return LocalModelEmbedding(checked, self.name)  # its vectors checked as the tools' are


class _OllamaModel:
    """An Ollama model over HTTP, through LlamaIndex's Ollama embedding."""

    normalises = False  # a model's own choice: not checked

    def __init__(self, settings: Settings) -> None:
        try:
            from scoperag.core.embedding.ollama import make_ollama_embedding
        except ModuleNotFoundError as exc:
            if not _in_ollama_extra(exc.name):
                raise
            raise EmbeddingServiceError(
                f"SCOPERAG_EMBED_PROVIDER=ollama needs the Ollama integration, which is not "
                f"installed (no module '{exc.name}'). Install it with "
                '`pip install "scoperag[ollama]"`, or set SCOPERAG_EMBED_PROVIDER=local for '
                "the packaged model."
            ) from None
        self.embedding = make_ollama_embedding(settings)

    def embed_query(self, text: str) -> list[float]:
        return self.embedding.get_query_embedding(text)

    def embed_texts(self, texts: list[str]) -> list[list[float]]:
        return self.embedding.get_text_embedding_batch(texts)

    def as_llama_index(self, checked: Embedder) -> BaseEmbedding:
        return self.embedding


# The modules of the `ollama` extra (pyproject.toml): LlamaIndex's integration and its client.
_OLLAMA_EXTRA = ("llama_index.embeddings", "ollama", "httpx")


def _in_ollama_extra(module: str | None) -> bool:
    return any(module == name or (module or "").startswith(f"{name}.") for name in _OLLAMA_EXTRA)


_FACTORIES = {"local": _LocalModel, "ollama": _OllamaModel}


class Embedder:
    """The process's embedder: loaded on first use (`serve` starts it in the background),
    shared by every profile."""

    def __init__(
        self, settings: Settings, same_model_as: Embedder | None = None, model: Any = None
    ) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._recent = RecentQueries(self._checked_query)
        if same_model_as is not None:  # reuse loaded weights (tests, benchmarks)
            self.__dict__["_backend"] = same_model_as.backend
        if model is not None:  # a model run elsewhere (the resident engine's, `server/daemon/`)
            self.__dict__["_backend"] = model

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
        return loaded

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (a call that embeds would not wait for it)."""
        return "_backend" in self.__dict__

    @cached_property
    def model(self) -> BaseEmbedding:
        """The same model as a LlamaIndex `BaseEmbedding` (notebooks, `VectorStoreIndex`)."""
        return self.backend.as_llama_index(self)

    @cached_property
    def info(self) -> EmbedderInfo:
        probe = self.backend.embed_query("dimension probe")
        check_vectors([probe], None, self.backend.normalises, "query")
        dimension = len(probe)
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
        """The query's vector; a text asked recently is not embedded again."""
        return self._recent.vector(text)

    def embed_texts(self, texts: list[str]) -> list[list[float]]:
        """The texts' vectors, in order; `InvalidVectorError` names the first that is not a
        vector (not finite, another dimension, not of unit norm where the model normalises)."""
        vectors = self.backend.embed_texts(texts)
        check_vectors(vectors, self._dimension(), self.backend.normalises, "text")
        return vectors

    def _checked_query(self, text: str) -> list[float]:
        vector = self.backend.embed_query(text)
        check_vectors([vector], self._dimension(), self.backend.normalises, "query")
        return vector

    def _dimension(self) -> int | None:
        """The model's dimension once known (no probe is made for it: the engine checks each
        vector against its collection's dimension too)."""
        info = self.__dict__.get("info")
        return info.dimension if info is not None else None

    def check_compatible(self, collection: str, stored: EmbedderInfo | None) -> None:
        """Refuse to mix vectors of different embedders in one collection."""
        self.info.check_builds(collection, stored)
