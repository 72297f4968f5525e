"""The packaged MiniLM sentence encoder on torch alone: tokenizer, BERT layers, mean pooling.

It gives the vectors sentence-transformers gives for the same model folder (BERT, mean pooling,
L2-normalised; `tests/test_local_encoder.py` pins it), without importing sentence-transformers or
transformers: the weights load from `model.safetensors` into torch's own
`nn.TransformerEncoderLayer` (post-norm, GELU: BERT's layer), so a cold process starts seconds
sooner and one query pays no per-call framework overhead.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors.torch import load_file
from tokenizers import Tokenizer
from torch import nn

from scoperag.core.errors import EmbeddingServiceError


def _read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


class _Bert(nn.Module):
    """BERT's embeddings and encoder layers, built from the model folder's `config.json`."""

    def __init__(self, config: dict) -> None:
        super().__init__()
        width, eps = config["hidden_size"], config["layer_norm_eps"]
        self.words = nn.Embedding(config["vocab_size"], width)
        self.positions = nn.Embedding(config["max_position_embeddings"], width)
        self.token_types = nn.Embedding(config["type_vocab_size"], width)
        self.norm = nn.LayerNorm(width, eps=eps)
        layer = {
            "d_model": width,
            "nhead": config["num_attention_heads"],
            "dim_feedforward": config["intermediate_size"],
            "dropout": 0.0,
            "activation": config["hidden_act"],
            "layer_norm_eps": eps,
            "batch_first": True,
        }
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(**layer) for _ in range(config["num_hidden_layers"])
        )

    def load_bert_weights(self, weights: dict[str, torch.Tensor]) -> None:
        """Copy a Hugging Face `BertModel` state dict (with or without the `bert.` prefix)."""
        weights = {key.removeprefix("bert."): value for key, value in weights.items()}
        mine = {
            "words.weight": weights["embeddings.word_embeddings.weight"],
            "positions.weight": weights["embeddings.position_embeddings.weight"],
            "token_types.weight": weights["embeddings.token_type_embeddings.weight"],
            "norm.weight": weights["embeddings.LayerNorm.weight"],
            "norm.bias": weights["embeddings.LayerNorm.bias"],
        }
        for index in range(len(self.layers)):
            hf, to = f"encoder.layer.{index}.", f"layers.{index}."
            for kind in ("weight", "bias"):
                mine[f"{to}self_attn.in_proj_{kind}"] = torch.cat(
                    [
                        weights[f"{hf}attention.self.{part}.{kind}"]
                        for part in ("query", "key", "value")
                    ]
                )
                mine[f"{to}self_attn.out_proj.{kind}"] = weights[
                    f"{hf}attention.output.dense.{kind}"
                ]
                mine[f"{to}norm1.{kind}"] = weights[f"{hf}attention.output.LayerNorm.{kind}"]
                mine[f"{to}linear1.{kind}"] = weights[f"{hf}intermediate.dense.{kind}"]
                mine[f"{to}linear2.{kind}"] = weights[f"{hf}output.dense.{kind}"]
                mine[f"{to}norm2.{kind}"] = weights[f"{hf}output.LayerNorm.{kind}"]
        self.load_state_dict(mine, strict=True)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(ids.shape[1]).unsqueeze(0)
        hidden = self.norm(
            self.words(ids) + self.positions(positions) + self.token_types(torch.zeros_like(ids))
        )
        padding = mask == 0
        for layer in self.layers:
            hidden = layer(hidden, src_key_padding_mask=padding)
        return hidden


class LocalEncoder:
    """Texts -> L2-normalised mean-pooled vectors of a sentence-transformers BERT model folder.

    `query_threads` torch threads embed one text (a query: on a busy machine one thread keeps
    the tail short), `batch_threads` embed several at once (ingestion).
    """

    def __init__(self, folder: Path, query_threads: int, batch_threads: int) -> None:
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
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length)
        self.tokenizer.enable_padding(pad_id=config.get("pad_token_id", 0))
        self.model = _Bert(config)
        self.model.load_bert_weights(load_file(folder / "model.safetensors"))
        self.model.eval()
        self.query_threads, self.batch_threads = query_threads, batch_threads
        self._batch_size = 64

    def _use_threads(self, count: int) -> None:
        # torch's thread count belongs to the calling thread (OpenMP): set it where we run
        if torch.get_num_threads() != count:
            torch.set_num_threads(count)

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order."""
        self._use_threads(self.query_threads if len(texts) == 1 else self.batch_threads)
        vectors: list[list[float]] = []
        with torch.inference_mode():
            for start in range(0, len(texts), self._batch_size):
                vectors.extend(self._embed_batch(texts[start : start + self._batch_size]))
        return vectors

    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        encodings = self.tokenizer.encode_batch(texts)
        ids = torch.tensor([e.ids for e in encodings])
        mask = torch.tensor([e.attention_mask for e in encodings])
        hidden = self.model(ids, mask)
        weights = mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
        return nn.functional.normalize(pooled, p=2, dim=1).tolist()
