"""The local encoder gives sentence-transformers' vectors, so stored collections stay valid.

The reference vectors were made once by sentence-transformers (PyTorch) from the same model
folder: `evals/make_reference_vectors.py` wrote tests/data/minilm_reference_vectors.json.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

from scoperag.core.config.settings import Settings
from scoperag.core.embedding.bert_folder import BertFolder
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.embedding.onnx_encoder import BATCH_SIZE, OnnxEncoder
from scoperag.core.embedding.packaged_model import packaged_model_folder
from scoperag.core.errors import EmbeddingServiceError

FOLDER = packaged_model_folder()
REFERENCE = json.loads(
    (Path(__file__).parent / "data" / "minilm_reference_vectors.json").read_text(encoding="utf-8")
)
# sentence-transformers/all-MiniLM-L6-v2's files as published upstream (sha256)
UPSTREAM_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "sentence_bert_config.json": "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
}


@pytest.fixture(scope="module")
def texts() -> list[str]:
    """Real texts of several lengths: queries, odd strings, book passages (past 256 tokens)."""
    return REFERENCE["texts"]


def test_the_packaged_folder_is_the_upstream_model() -> None:
    """The installed model files are all-MiniLM-L6-v2's own bytes, the ones the reference
    vectors were made from."""
    got = {
        name: hashlib.sha256((FOLDER / name).read_bytes()).hexdigest() for name in UPSTREAM_SHA256
    }
    assert got == UPSTREAM_SHA256
    assert REFERENCE["model_safetensors_sha256"] == UPSTREAM_SHA256["model.safetensors"]


def test_vectors_match_sentence_transformers(embedder: Embedder, texts: list[str]) -> None:
    """Cosine 1.0 (to 1e-6) against `SentenceTransformer.encode`'s stored vectors, one by one
    and in a batch."""
    expected = np.array(REFERENCE["vectors"])
    batch = np.array(embedder.backend.embed_texts(texts))
    single = np.array([embedder.embed_query(text) for text in texts])
    for got in (batch, single):
        assert got.shape == expected.shape
        np.testing.assert_allclose((got * expected).sum(axis=1), 1.0, atol=1e-6)


def test_llama_index_embedding_is_the_same_encoder(embedder: Embedder) -> None:
    query = "What is the airspeed of an unladen swallow?"
    assert embedder.model.get_query_embedding(query) == embedder.embed_query(query)
    assert embedder.model.get_text_embedding_batch([query]) == embedder.embed_texts([query])


def test_one_text_runs_unpadded_a_batch_in_the_batch_session(
    embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One text goes through the one-by-one encoder (`embed_threads`), several through the
    batch encoder (the batch threads), each in a session of its own; only the batch session
    keeps a memory arena (its activations are MBs a batch)."""
    model = embedder.backend
    used: list[tuple[OnnxEncoder, int]] = []
    run = OnnxEncoder._run

    def counted(self: OnnxEncoder, encodings: list) -> list[list[float]]:
        used.append((self, len(encodings)))
        return run(self, encodings)

    monkeypatch.setattr(OnnxEncoder, "_run", counted)
    assert model.embed_texts(["one"]) == [model.embed_query("one")]
    model.embed_texts(["one", "two"])
    assert used == [(model.one_by_one, 1), (model.one_by_one, 1), (model.batches, 2)]
    settings = Settings()
    options = [
        encoder.session.get_session_options() for encoder in (model.one_by_one, model.batches)
    ]
    assert [option.intra_op_num_threads for option in options] == [
        settings.embed_threads,
        settings.effective_embed_batch_threads,
    ]
    assert [option.enable_cpu_mem_arena for option in options] == [False, True]


def test_batches_group_texts_of_similar_length(
    embedder: Embedder, texts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long text does not pad a batch of short ones: batches run shortest first, and the
    vectors still come back in the callers' order."""
    model = embedder.backend
    short, long = texts[:6], texts[6:]  # queries and odd strings; book passages
    # a passage at the head of every slice of BATCH_SIZE: in the callers' order, each batch
    # would be padded to 256 tokens
    many = [
        long[index % len(long)] if index % BATCH_SIZE == 0 else short[index % len(short)]
        for index in range(2 * BATCH_SIZE + 5)
    ]
    widths: list[int] = []
    run = OnnxEncoder._run

    def counted(self: OnnxEncoder, encodings: list) -> list[list[float]]:
        widths.append(len(encodings[0].ids))
        return run(self, encodings)

    monkeypatch.setattr(OnnxEncoder, "_run", counted)
    vectors = model.embed_texts(many)
    assert len(widths) == -(-len(many) // BATCH_SIZE)
    assert widths == sorted(widths) and widths[0] < widths[-1]
    expected = {text: model.embed_query(text) for text in texts}
    for text, vector in zip(many, vectors, strict=True):
        assert np.dot(vector, expected[text]) == pytest.approx(1.0, abs=1e-6)


def _threads() -> set[str]:
    return set(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc")
def test_a_session_starts_one_pool_thread_fewer_than_its_threads() -> None:
    """onnxruntime runs each operator on the calling thread plus `threads - 1` of its pool: one
    thread (the default for a query) starts none that could take a core between calls."""
    folder = BertFolder.open(FOLDER)
    before = _threads()
    single = OnnxEncoder(folder, 1, padding=False)
    assert _threads() - before == set()
    before = _threads()
    triple = OnnxEncoder(folder, 3, padding=True)
    assert len(_threads() - before) == 2  # threads started (one that ended meanwhile is no matter)
    assert single.embed(["a"]) == [pytest.approx(triple.embed(["a"])[0], abs=1e-6)]


def test_thread_settings_are_checked() -> None:
    assert Settings(embed_threads=1).embed_threads == 1
    assert Settings(embed_batch_threads=3).effective_embed_batch_threads == 3
    assert Settings().effective_embed_batch_threads >= 1
    with pytest.raises(ValueError, match="embed_threads"):
        Settings(embed_threads=0)


def test_a_folder_without_weights_is_refused(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingServiceError, match="SCOPERAG_EMBED_MODEL.*all-MiniLM"):
        BertFolder.open(tmp_path)


def test_a_model_without_gelu_is_refused(tmp_path: Path) -> None:
    """The encoder's graph computes BERT's GELU only: another activation is an error naming it."""
    for item in FOLDER.iterdir():
        (tmp_path / item.name).symlink_to(item)
    config = json.loads((FOLDER / "config.json").read_text(encoding="utf-8"))
    (tmp_path / "config.json").unlink()
    (tmp_path / "config.json").write_text(json.dumps({**config, "hidden_act": "relu"}))
    with pytest.raises(EmbeddingServiceError, match="hidden_act='relu'.*'gelu'"):
        OnnxEncoder(BertFolder.open(tmp_path), 1, padding=False)


def _link_all_but_the_weights(folder: Path) -> None:
    """`folder` becomes the packaged model's folder but for `model.safetensors`."""
    for item in FOLDER.iterdir():
        if item.name != "model.safetensors":
            (folder / item.name).symlink_to(item)


def test_a_folder_with_float16_weights_embeds_in_float32(tmp_path: Path) -> None:
    """Some model folders store float16 weights: they are computed in float32, and give the
    float32 model's vectors to float16's precision."""
    from safetensors.numpy import load_file, save_file

    _link_all_but_the_weights(tmp_path)
    weights = load_file(FOLDER / "model.safetensors")
    save_file(
        {key: value.astype(np.float16) for key, value in weights.items()},
        tmp_path / "model.safetensors",
    )
    texts = ["fireball damage at higher levels", "Why do I get database locked errors?"]
    half = OnnxEncoder(BertFolder.open(tmp_path), 1, padding=False).embed(texts)
    full = OnnxEncoder(BertFolder.open(FOLDER), 1, padding=False).embed(texts)
    for got, expected in zip(half, full, strict=True):
        assert np.dot(got, expected) == pytest.approx(1.0, abs=1e-3)


def test_the_word_table_stays_in_the_model_file() -> None:
    """The 47 MB word table is mapped from the folder's file, not copied into memory: a query
    reads the rows of its own tokens only, and processes share them."""
    folder = BertFolder.open(FOLDER)
    encoder = OnnxEncoder(folder, 1, padding=False)
    mapping = encoder.words
    while mapping is not None and not isinstance(mapping, np.memmap):
        mapping = mapping.base
    assert isinstance(mapping, np.memmap)
    assert Path(mapping.filename) == folder.weights_file.resolve()
    assert encoder.words.shape == (folder.config["vocab_size"], folder.config["hidden_size"])


def test_a_folder_with_weights_of_another_type_is_refused(tmp_path: Path) -> None:
    """bfloat16 (which numpy cannot read) is an error naming the types the encoder reads."""
    _link_all_but_the_weights(tmp_path)
    header = json.dumps({"x": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}}).encode()
    (tmp_path / "model.safetensors").write_bytes(
        len(header).to_bytes(8, "little") + header + bytes(4)
    )
    with pytest.raises(EmbeddingServiceError, match=r"\['BF16'\].*'F32'"):
        BertFolder.open(tmp_path).weights()


def test_a_truncated_weights_file_is_refused(tmp_path: Path) -> None:
    """A weights file cut short (an interrupted copy) is an error naming the file, not a crash
    when a query reaches the missing part."""
    _link_all_but_the_weights(tmp_path)
    whole = (FOLDER / "model.safetensors").read_bytes()
    (tmp_path / "model.safetensors").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(
        EmbeddingServiceError, match="model.safetensors does not load as safetensors weights"
    ):
        OnnxEncoder(BertFolder.open(tmp_path), 1, padding=False)
