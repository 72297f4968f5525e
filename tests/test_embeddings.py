"""The embedder records what it really produces, and refuses settings the model cannot meet."""

from __future__ import annotations

import pytest

from scoperag.core.config.settings import Settings
from scoperag.core.embedding.embedders import Embedder, EmbedderInfo
from scoperag.core.embedding.recent_queries import RecentQueries
from scoperag.core.errors import EmbedderMismatchError, EmbeddingServiceError


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


def test_a_recent_query_is_not_embedded_again(
    embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Asking a text again (a page past the first, another profile) skips the model and gives
    the model's vector; each caller gets its own list."""
    fresh = _with_model(embedder)
    asked: list[str] = []
    model_embed = fresh.backend.embed_query
    monkeypatch.setattr(
        fresh.backend, "embed_query", lambda text: asked.append(text) or model_embed(text)
    )
    first = fresh.embed_query("Who has taken Netherfield Park?")
    first[0] = 99.0  # a caller's own copy
    again = fresh.embed_query("Who has taken Netherfield Park?")
    other = fresh.embed_query("Who has taken Longbourn?")  # another text: embedded
    assert asked == ["Who has taken Netherfield Park?", "Who has taken Longbourn?"]
    assert again == model_embed("Who has taken Netherfield Park?") and again[0] != 99.0
    assert other != again


def test_the_least_recently_asked_query_is_forgotten_first() -> None:
    asked: list[str] = []
    recent = RecentQueries(lambda text: asked.append(text) or [float(len(text))], size=2)
    for text in ["a", "bb", "a", "ccc", "a", "bb"]:
        assert recent.vector(text) == [float(len(text))]
    assert asked == ["a", "bb", "ccc", "bb"]  # "bb" was the least recent when "ccc" came
