"""The embedder records what it really produces, and refuses settings the model cannot meet."""

from __future__ import annotations

import pytest

from scoperag.core.embeddings import Embedder, EmbedderInfo
from scoperag.core.errors import EmbedderMismatchError, EmbeddingServiceError
from scoperag.core.settings import Settings


def _with_model(embedder: Embedder, **settings: object) -> Embedder:
    return Embedder(Settings(**settings), same_model_as=embedder)  # reuse the loaded weights


def test_local_model_is_384_dimensional(embedder: Embedder) -> None:
    info = _with_model(embedder).info
    assert info == EmbedderInfo(
        provider="local", model="sentence-transformers/all-MiniLM-L6-v2", dimension=384
    )


def test_dimensions_the_model_cannot_give_are_refused(embedder: Embedder) -> None:
    with pytest.raises(EmbeddingServiceError, match="SCOPERAG_EMBED_DIMENSIONS=128.*384-d"):
        _ = _with_model(embedder, embed_dimensions=128).info


def test_another_embedder_is_named_in_the_error(embedder: Embedder) -> None:
    stored = EmbedderInfo(provider="ollama", model="nomic-embed-text", dimension=768)
    with pytest.raises(EmbedderMismatchError, match="ollama/nomic-embed-text \\(768-d\\)"):
        _with_model(embedder).check_compatible("pdf_pages", stored)
