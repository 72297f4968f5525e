"""A sentence-transformers BERT model folder: its checked config, tokenizer and weights."""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from safetensors import SafetensorError, safe_open
from tokenizers import Tokenizer

from scoperag.core.errors import EmbeddingServiceError

# the files a folder needs, beside `model.safetensors`
NEEDED = ("config.json", "1_Pooling/config.json", "sentence_bert_config.json", "tokenizer.json")
_ACCEPTED = (
    "SCOPERAG_EMBED_MODEL (local provider) accepts the folder of a sentence-transformers BERT "
    "model such as all-MiniLM-L6-v2"
)
_REPAIR = (
    "copy that file again from the model's source (for all-MiniLM-L6-v2: "
    "huggingface.co/sentence-transformers/all-MiniLM-L6-v2), or unset SCOPERAG_EMBED_MODEL for "
    "the packaged model"
)


def unloadable(path: Path, what: str, error: object) -> EmbeddingServiceError:
    """The error for a file of the folder that does not load: its path, why, what to do."""
    return EmbeddingServiceError(f"{path} does not load as {what} ({error}): {_REPAIR}")


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:  # UnicodeDecodeError and JSONDecodeError included
        raise unloadable(path, "JSON", error) from None
    if not isinstance(data, dict):
        raise unloadable(path, "a JSON object", f"found {type(data).__name__}")
    return data


@dataclass(frozen=True)
class BertFolder:
    """A folder such as the packaged all-MiniLM-L6-v2: BERT weights, mean pooling."""

    path: Path
    config: dict[str, Any]
    max_length: int  # tokens kept per text (`sentence_bert_config.json`)

    @classmethod
    def open(cls, folder: Path) -> BertFolder:
        """The folder's settings, or an error naming SCOPERAG_EMBED_MODEL and what it accepts."""
        if not (folder / "model.safetensors").is_file():
            raise EmbeddingServiceError(
                f"{folder} holds no model.safetensors: {_ACCEPTED}; unset it for the packaged model"
            )
        missing = [name for name in NEEDED if not (folder / name).is_file()]
        if missing:
            raise EmbeddingServiceError(
                f"{folder} lacks {', '.join(missing)}: {_ACCEPTED}, with its "
                f"{', '.join(NEEDED)} and model.safetensors; {_REPAIR}"
            )
        config = _read_json(folder / "config.json")
        pooling = _read_json(folder / "1_Pooling" / "config.json")
        if config.get("model_type") != "bert" or not pooling.get("pooling_mode_mean_tokens"):
            raise EmbeddingServiceError(
                f"{folder} is not a BERT model with mean pooling (model_type="
                f"{config.get('model_type')!r}); SCOPERAG_EMBED_MODEL accepts a "
                "sentence-transformers BERT folder such as all-MiniLM-L6-v2"
            )
        max_length = _read_json(folder / "sentence_bert_config.json").get("max_seq_length")
        if not isinstance(max_length, int):
            path = folder / "sentence_bert_config.json"
            raise unloadable(path, "a sentence-transformers config", "no whole max_seq_length")
        return cls(folder, config, max_length)

    def tokenizer(self, padding: bool) -> Tokenizer:
        """The folder's tokenizer, truncating at `max_length`; padding a batch if asked."""
        path = self.path / "tokenizer.json"
        try:
            tokenizer = Tokenizer.from_file(str(path))
        except Exception as error:  # the tokenizers library raises plain Exception
            raise unloadable(path, "a tokenizer", error) from None
        tokenizer.enable_truncation(self.max_length)
        if padding:
            tokenizer.enable_padding(pad_id=self.config.get("pad_token_id", 0))
        else:
            tokenizer.no_padding()
        return tokenizer

    @property
    def weights_file(self) -> Path:
        return self.path / "model.safetensors"

    def weights(self) -> dict[str, np.ndarray]:
        """The folder's tensors, mapped read-only from its safetensors file (not read into
        memory: a lookup table's rows are read when used, and shared with other processes)."""
        path = self.weights_file
        try:
            with safe_open(str(path), framework="numpy"):
                pass  # safetensors checks the header, and that the data covers it
        except SafetensorError as error:
            raise unloadable(path, "safetensors weights", error) from error
        with path.open("rb") as file:
            (header_size,) = struct.unpack("<Q", file.read(8))
            header = json.loads(file.read(header_size))
        header.pop("__metadata__", None)
        unknown = {info["dtype"] for info in header.values()} - _DTYPES.keys()
        if unknown:
            raise EmbeddingServiceError(
                f"{path} stores tensors as {sorted(unknown)}; the local provider reads "
                f"{sorted(_DTYPES)} (such as all-MiniLM-L6-v2's F32)"
            )
        # a mapping a tensor, so the ones a caller drops after use are unmapped with them; plain
        # arrays over it (arithmetic on np.memmap objects, and onnxruntime's inputs, are slower)
        return {
            key.removeprefix("bert."): np.asarray(
                np.memmap(
                    path,
                    dtype=_DTYPES[info["dtype"]],
                    mode="r",
                    offset=8 + header_size + info["data_offsets"][0],
                    shape=tuple(info["shape"]),
                )
            )
            for key, info in header.items()
        }


# safetensors dtype names -> numpy's
_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64}
