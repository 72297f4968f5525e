"""Ollama embeddings (`POST /api/embed`) through LlamaIndex's `OllamaEmbedding`.

On top of LlamaIndex's class: SCOPERAG_EMBED_DIMENSIONS is sent as `dimensions`, every vector
is checked to have that length, and the three failures a person meets (Ollama not running, the
model not pulled, vectors of another size) become errors that say which and what to do.

Its imports are the `ollama` extra's (`pip install "scoperag[ollama]"`); `embedders.py` imports
this module only for SCOPERAG_EMBED_PROVIDER=ollama and says how to install the extra.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.embeddings.ollama import OllamaEmbedding
from ollama import ResponseError
from pydantic import Field

from scoperag.core.config.settings import Settings
from scoperag.core.errors import EmbeddingServiceError

Input = str | Sequence[str]
_FAILURES = (ConnectionError, ResponseError, httpx.HTTPError)


class OllamaUnreachableError(EmbeddingServiceError):
    def __init__(self, base_url: str) -> None:
        super().__init__(
            f"Ollama is unreachable at {base_url} (connection refused or no answer). Start it "
            "(`ollama serve`, or `docker compose up -d ollama`), or set SCOPERAG_OLLAMA_BASE_URL "
            "to where it runs."
        )


class OllamaModelMissingError(EmbeddingServiceError):
    def __init__(self, model: str, base_url: str) -> None:
        super().__init__(
            f"Ollama at {base_url} does not have the model '{model}': it is not pulled. Run "
            f"`ollama pull {model}` (with docker compose: `docker compose exec ollama ollama pull "
            f"{model}`), or set SCOPERAG_EMBED_MODEL to a model you have pulled."
        )


class OllamaDimensionError(EmbeddingServiceError):
    def __init__(self, model: str, wanted: int, got: int) -> None:
        super().__init__(
            f"Ollama model '{model}' returned {got}-dimensional vectors but "
            f"SCOPERAG_EMBED_DIMENSIONS={wanted}: the model (or this Ollama version) does not "
            f"shorten its vectors to that size. Unset SCOPERAG_EMBED_DIMENSIONS, or set it to "
            f"{got} or less for a model that supports `dimensions`."
        )


class CheckedOllamaEmbedding(OllamaEmbedding):
    """`OllamaEmbedding` that sends `dimensions` and explains Ollama's failures."""

    dimensions: int | None = Field(default=None, description="Output size asked of Ollama.")

    def _failure(self, exc: Exception) -> EmbeddingServiceError:
        if isinstance(exc, ConnectionError):
            return OllamaUnreachableError(self.base_url)
        if isinstance(exc, ResponseError) and exc.status_code == 404:
            if "model" in str(exc.error).lower():
                return OllamaModelMissingError(self.model_name, self.base_url)
            return EmbeddingServiceError(
                f"Ollama at {self.base_url} has no /api/embed endpoint ({exc.error}); it is "
                "older than 0.3.4: upgrade it."
            )
        return EmbeddingServiceError(f"Ollama at {self.base_url} failed to embed: {exc!r}")

    def _request(self, texts: Input) -> dict[str, Any]:
        return {
            "model": self.model_name,
            "input": texts,
            "options": self.ollama_additional_kwargs,
            "keep_alive": self.keep_alive,
            "dimensions": self.dimensions,
        }

    def _checked(self, vectors: Sequence[Sequence[float]]) -> list[list[float]]:
        for vector in vectors:
            if self.dimensions and len(vector) != self.dimensions:
                raise OllamaDimensionError(self.model_name, self.dimensions, len(vector))
        return [list(vector) for vector in vectors]

    def _embed(self, texts: Input) -> list[list[float]]:
        try:
            result = self._client.embed(**self._request(texts))
        except _FAILURES as exc:
            raise self._failure(exc) from None
        return self._checked(result.embeddings)

    async def _aembed(self, texts: Input) -> list[list[float]]:
        try:
            result = await self._async_client.embed(**self._request(texts))
        except _FAILURES as exc:
            raise self._failure(exc) from None
        return self._checked(result.embeddings)

    def get_general_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._embed(texts)

    async def aget_general_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return await self._aembed(texts)

    def get_general_text_embedding(self, texts: str) -> list[float]:
        return self._embed(texts)[0]

    async def aget_general_text_embedding(self, prompt: str) -> list[float]:
        return (await self._aembed(prompt))[0]


def make_ollama_embedding(settings: Settings) -> BaseEmbedding:
    """LlamaIndex's Ollama embedding for the configured base URL, model and dimensions."""
    return CheckedOllamaEmbedding(
        model_name=settings.effective_embed_model,
        base_url=settings.ollama_base_url,
        embed_batch_size=32,
        dimensions=settings.embed_dimensions,
    )
