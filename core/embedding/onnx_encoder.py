"""The packaged MiniLM on onnxruntime: texts -> L2-normalised mean-pooled vectors.

The tokens' embeddings (word + position + token type) are looked up in numpy; the rest of BERT
runs as `bert_graph.py`'s graph in an onnxruntime session on `threads` threads, whose matrix
products read weights packed once when the session loads. It gives sentence-transformers'
vectors for the same folder to 1e-6 in cosine (`tests/test_local_encoder.py`). A short query
takes about 5 ms on one thread (`evals/embedding_load.py`, docs/benchmarks.md).
"""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path

import numpy as np
import onnxruntime

from scoperag.core.embedding.bert_folder import BertFolder
from scoperag.core.embedding.bert_graph import EMBEDDED, MASK, bert_graph
from scoperag.core.embedding.int8_graph import int8_graph
from scoperag.core.errors import EmbeddingServiceError

# texts a batch: measured here (2 threads), 4 embeds short passages 64% faster than 64 and long
# ones 23% faster, and loading a book peaks at 340 MB instead of 1.2 GB: a small batch's
# activations stay in the caches, a large one's do not
BATCH_SIZE = 4


class OnnxEncoder:
    """One text at a time unpadded (`padding=False`: queries, one memory), or padded batches of
    `BATCH_SIZE` (ingestion); with `int8_cache`, the graph quantized to int8 (`int8_graph`)."""

    def __init__(
        self, folder: BertFolder, threads: int, padding: bool, int8_cache: Path | None = None
    ) -> None:
        config = folder.config
        if config.get("hidden_act") != "gelu":
            raise EmbeddingServiceError(
                f"{folder.path} uses hidden_act={config.get('hidden_act')!r}; the local provider "
                "accepts BERT models with 'gelu' (such as all-MiniLM-L6-v2)"
            )
        # float32 throughout, whatever the folder stores (some keep float16 weights); float32
        # tables stay mapped from the file
        weights = {
            key: value.astype(np.float32, copy=False) for key, value in folder.weights().items()
        }
        self.tokenizer = folder.tokenizer(padding=padding)
        self.padding = padding
        self.threads = threads
        self.words = weights.pop("embeddings.word_embeddings.weight")
        self.positions = weights.pop("embeddings.position_embeddings.weight")
        self.token_type = weights.pop("embeddings.token_type_embeddings.weight")[0]
        graph = bert_graph(config, weights).SerializeToString()
        if int8_cache is not None:  # SCOPERAG_EMBED_PRECISION=int8
            graph = int8_graph(graph, int8_cache)
        self.session = onnxruntime.InferenceSession(
            graph,
            _options(threads, arena=padding),
            providers=["CPUExecutionProvider"],
        )
        _return_freed_memory()

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order.

        Batches group texts of similar length (as sentence-transformers does), so a batch is
        padded to little more than its own texts."""
        if not self.padding:
            return [self._run([self.tokenizer.encode(text)])[0] for text in texts]
        by_length = sorted(range(len(texts)), key=lambda index: len(texts[index]))
        vectors: list[list[float]] = [[] for _ in texts]
        for start in range(0, len(texts), BATCH_SIZE):
            batch = by_length[start : start + BATCH_SIZE]
            encodings = self.tokenizer.encode_batch([texts[index] for index in batch])
            for index, vector in zip(batch, self._run(encodings), strict=True):
                vectors[index] = vector
        return vectors

    def _run(self, encodings: list) -> list[list[float]]:
        ids = np.array([encoding.ids for encoding in encodings])
        mask = np.array([encoding.attention_mask for encoding in encodings], dtype=np.int64)
        embedded = self.words[ids] + self.positions[: ids.shape[1]] + self.token_type
        return self.session.run(None, {EMBEDDED: embedded, MASK: mask})[0].tolist()


def _return_freed_memory() -> None:
    """Hand the heap memory freed after loading (the graph's and its weights' copies) back to
    the system: glibc keeps freed memory for reuse, and loading frees more than a call ever
    needs again. Elsewhere than Linux's glibc, nothing to do."""
    if sys.platform.startswith("linux"):
        trim = getattr(ctypes.CDLL(None), "malloc_trim", None)  # glibc's, not musl's
        if trim is not None:
            trim(0)


def _options(threads: int, arena: bool) -> onnxruntime.SessionOptions:
    """`threads` for each operator; idle pool threads sleep instead of spinning (a spinning
    thread would take a core from other work between calls). With `arena` (batches),
    activations reuse the last batch's memory: without it, each MB-sized tensor was fresh pages
    from the system (20 times the page faults, 8% slower on long passages); a query's tensors
    are small (no faster with it)."""
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.enable_cpu_mem_arena = arena
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options
