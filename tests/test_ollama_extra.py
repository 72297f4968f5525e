"""Without the `ollama` extra, asking for Ollama embeddings says how to install it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from scoperag.core.config.settings import Settings
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.errors import EmbeddingServiceError


@pytest.mark.parametrize("missing", ["ollama", "llama_index.embeddings.ollama", "httpx"])
def test_a_missing_extra_says_the_install_command(
    missing: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, "scoperag.core.embedding.ollama", raising=False)
    monkeypatch.setitem(sys.modules, missing, None)  # an import of it fails as if not installed
    settings = Settings(data_dir=tmp_path, embed_provider="ollama", embed_model="all-minilm")
    with pytest.raises(EmbeddingServiceError) as caught:
        Embedder(settings).embed_query("Longbourn")
    message = str(caught.value)
    assert 'pip install "scoperag[ollama]"' in message
    assert f"no module '{missing}'" in message and "SCOPERAG_EMBED_PROVIDER=local" in message


def test_other_missing_modules_are_not_blamed_on_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, "scoperag.core.embedding.ollama", raising=False)
    monkeypatch.setitem(sys.modules, "llama_index.core.base.embeddings.base", None)
    settings = Settings(data_dir=tmp_path, embed_provider="ollama", embed_model="all-minilm")
    with pytest.raises(ModuleNotFoundError):
        Embedder(settings).embed_query("Longbourn")
