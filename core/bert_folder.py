"""A sentence-transformers BERT model folder: its checked config, tokenizer and weights."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer

from scoperag.core.errors import EmbeddingServiceError


def _read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


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
                f"{folder} holds no model.safetensors: SCOPERAG_EMBED_MODEL (local provider) "
                "accepts the folder of a sentence-transformers BERT model such as "
                "all-MiniLM-L6-v2; unset it for the packaged model"
            )
        config = _read_json(folder / "config.json")
        pooling = _read_json(folder / "1_Pooling" / "config.json")
        if config.get("model_type") != "bert" or not pooling.get("pooling_mode_mean_tokens"):
            raise EmbeddingServiceError(
                f"{folder} is not a BERT model with mean pooling (model_type="
                f"{config.get('model_type')!r}); SCOPERAG_EMBED_MODEL accepts a "
                "sentence-transformers BERT folder such as all-MiniLM-L6-v2"
            )
        max_length = _read_json(folder / "sentence_bert_config.json")["max_seq_length"]
        return cls(folder, config, max_length)

    def tokenizer(self, padding: bool) -> Tokenizer:
        """The folder's tokenizer, truncating at `max_length`; padding a batch if asked."""
        tokenizer = Tokenizer.from_file(str(self.path / "tokenizer.json"))
        tokenizer.enable_truncation(self.max_length)
        if padding:
            tokenizer.enable_padding(pad_id=self.config.get("pad_token_id", 0))
        else:
            tokenizer.no_padding()
        return tokenizer

    @property
    def weights_file(self) -> Path:
        return self.path / "model.safetensors"


def bert_weights(weights: dict[str, Any]) -> dict[str, Any]:
    """A Hugging Face `BertModel` state dict's keys without the `bert.` prefix some carry."""
    return {key.removeprefix("bert."): value for key, value in weights.items()}
