"""The local model in int8 (SCOPERAG_EMBED_PRECISION=int8): close to fp32, an embedder of its
own, made once in the cache dir and made again when its file is damaged."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scoperag.core.config.settings import Settings
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.embedding.int8_graph import FOLDER
from scoperag.core.errors import EmbedderMismatchError

TEXTS = [
    "The cat sat on the mat.",
    "Qdrant Edge runs in process, with payload indexes and HNSW.",
    "def double(x): return x * 2",
    "Il pleut des cordes à Paris ce matin.",
    "A wizard casts fireball at 3rd level: 8d6 fire damage in a 20-foot radius.",
    "Mr. Bennet's daughters hoped to meet Mr. Bingley at the ball.",
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("int8-cache")


def _embedder(cache: Path, precision: str) -> Embedder:
    return Embedder(Settings(cache_dir=cache, embed_precision=precision))


def test_int8_vectors_are_close_to_fp32_and_of_unit_norm(cache: Path, embedder: Embedder) -> None:
    int8 = np.array(_embedder(cache, "int8").embed_texts(TEXTS))
    fp32 = np.array(embedder.embed_texts(TEXTS))
    assert int8.shape == fp32.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(int8, axis=1), 1.0, atol=1e-4)
    assert (int8 * fp32).sum(axis=1).min() >= 0.98
    assert list((cache / FOLDER).glob("*.onnx"))  # made in the cache dir


def test_an_int8_embedder_is_its_own_and_never_searches_an_fp32_collection(
    cache: Path, embedder: Embedder
) -> None:
    int8 = _embedder(cache, "int8")
    assert int8.info.model.endswith("+int8") and not embedder.info.model.endswith("+int8")
    with pytest.raises(EmbedderMismatchError):
        int8.check_compatible("memories", embedder.info)
    with pytest.raises(EmbedderMismatchError):
        embedder.check_compatible("memories", int8.info)


def test_a_damaged_int8_file_is_made_again(cache: Path) -> None:
    _embedder(cache, "int8").embed_query("made")
    [model] = (cache / FOLDER).glob("*.onnx")
    model.write_bytes(b"not a model")
    vector = _embedder(cache, "int8").embed_query("made again")
    assert len(vector) == 384
    assert model.stat().st_size > 1_000_000
