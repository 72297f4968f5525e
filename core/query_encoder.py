"""The packaged MiniLM for one text at a time (queries, a single memory), on numpy alone.

BERT's forward pass over one unpadded text: embeddings, then per layer self-attention and the
GELU feed-forward, each followed by a residual LayerNorm; mean pooling, L2 norm. It gives the
vectors of `local_encoder.py` (torch) and sentence-transformers to 1e-6 in cosine
(`tests/test_local_encoder.py`), loads in about 0.3 s where torch takes about 2 s, and embeds
one text a little faster than torch's modules do (no per-operation dispatch). Its BLAS runs on
`threads` threads (one keeps the tail short while another process keeps a core busy): set for
the whole process when the encoder loads, as OpenBLAS keeps one count per process, and setting
it around each call and back woke its idle thread, which then spun a core (CPU per search
38 -> 55 ms in `evals/memory_bench.py`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from safetensors.numpy import load_file
from threadpoolctl import ThreadpoolController

from scoperag.core.bert_folder import BertFolder, bert_weights
from scoperag.core.errors import EmbeddingServiceError

# Abramowitz and Stegun 7.1.26: erf to 1.5e-7, below float32's resolution of GELU's inputs
_ERF_P = 0.3275911
_ERF_A = (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)


def _erf(x: np.ndarray) -> np.ndarray:
    t = 1.0 / (1.0 + _ERF_P * np.abs(x))
    poly = _ERF_A[0]
    for coefficient in _ERF_A[1:]:
        poly = poly * t + coefficient
    return np.sign(x) * (1.0 - poly * t * np.exp(-x * x))


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / np.float32(math.sqrt(2.0))))


@dataclass
class _Norm:
    weight: np.ndarray
    bias: np.ndarray
    eps: float

    def __call__(self, x: np.ndarray) -> np.ndarray:
        centred = x - x.mean(-1, keepdims=True)
        variance = (centred * centred).mean(-1, keepdims=True)
        return centred / np.sqrt(variance + np.float32(self.eps)) * self.weight + self.bias


@dataclass
class _Layer:
    """One BERT encoder layer; linear weights stored transposed (inputs @ weight)."""

    qkv: np.ndarray
    qkv_bias: np.ndarray
    out: np.ndarray
    out_bias: np.ndarray
    norm1: _Norm
    up: np.ndarray
    up_bias: np.ndarray
    down: np.ndarray
    down_bias: np.ndarray
    norm2: _Norm

    @classmethod
    def from_weights(cls, weights: dict[str, np.ndarray], prefix: str, eps: float) -> _Layer:
        def linear(name: str) -> tuple[np.ndarray, np.ndarray]:
            return np.ascontiguousarray(weights[f"{name}.weight"].T), weights[f"{name}.bias"]

        def norm(name: str) -> _Norm:
            return _Norm(weights[f"{name}.weight"], weights[f"{name}.bias"], eps)

        parts = [linear(f"{prefix}attention.self.{part}") for part in ("query", "key", "value")]
        return cls(
            np.concatenate([weight for weight, _ in parts], axis=1),
            np.concatenate([bias for _, bias in parts]),
            *linear(f"{prefix}attention.output.dense"),
            norm(f"{prefix}attention.output.LayerNorm"),
            *linear(f"{prefix}intermediate.dense"),
            *linear(f"{prefix}output.dense"),
            norm(f"{prefix}output.LayerNorm"),
        )

    def __call__(self, x: np.ndarray, heads: int) -> np.ndarray:
        tokens, width = x.shape
        size = width // heads
        q, k, v = (
            part.reshape(tokens, heads, size).transpose(1, 0, 2)
            for part in np.split(x @ self.qkv + self.qkv_bias, 3, axis=1)
        )
        scores = q @ k.transpose(0, 2, 1) / np.float32(math.sqrt(size))
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        attended = (scores @ v).transpose(1, 0, 2).reshape(tokens, width)
        x = self.norm1(x + attended @ self.out + self.out_bias)
        return self.norm2(x + _gelu(x @ self.up + self.up_bias) @ self.down + self.down_bias)


class QueryEncoder:
    """Texts -> L2-normalised mean-pooled vectors, one text at a time."""

    def __init__(self, folder: BertFolder, threads: int) -> None:
        config = folder.config
        if config.get("hidden_act") != "gelu":
            raise EmbeddingServiceError(
                f"{folder.path} uses hidden_act={config.get('hidden_act')!r}; the local provider "
                "accepts BERT models with 'gelu' (such as all-MiniLM-L6-v2)"
            )
        weights = bert_weights(load_file(folder.weights_file))
        eps = config["layer_norm_eps"]
        self.tokenizer = folder.tokenizer(padding=False)
        self.heads = config["num_attention_heads"]
        self.words = weights["embeddings.word_embeddings.weight"]
        self.positions = weights["embeddings.position_embeddings.weight"]
        self.token_type = weights["embeddings.token_type_embeddings.weight"][0]
        self.norm = _Norm(
            weights["embeddings.LayerNorm.weight"], weights["embeddings.LayerNorm.bias"], eps
        )
        self.layers = [
            _Layer.from_weights(weights, f"encoder.layer.{index}.", eps)
            for index in range(config["num_hidden_layers"])
        ]
        self.use_threads(threads)

    def use_threads(self, count: int) -> None:
        """Run BLAS (the process's numpy) on `count` threads from now on."""
        ThreadpoolController().limit(limits=count, user_api="blas")
        self.threads = count

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order."""
        return [self._embed_one(text).tolist() for text in texts]

    def _embed_one(self, text: str) -> np.ndarray:
        ids = self.tokenizer.encode(text).ids
        x = self.norm(self.words[ids] + self.positions[: len(ids)] + self.token_type)
        for layer in self.layers:
            x = layer(x, self.heads)
        pooled = x.mean(0)
        return pooled / np.linalg.norm(pooled)
