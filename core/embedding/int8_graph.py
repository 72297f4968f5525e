"""The local model's graph in int8 (SCOPERAG_EMBED_PRECISION=int8): onnxruntime's dynamic
quantization, per output channel, of the fp32 graph `bert_graph` builds from the pinned weights.
It is made once, in the cache dir, named by the fp32 graph's digest, and checked against its
own recorded digest at every load (a damaged file is made again). Its vectors are an embedder
of their own (`<model>+int8`, `Settings.effective_embed_model`): a collection built with one
precision is never searched with the other."""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path

FOLDER = "int8"  # in the cache dir


def int8_graph(fp32: bytes, cache_dir: Path) -> bytes:
    """The int8 graph of `fp32` (a serialized ONNX model), from the cache or made now."""
    folder = cache_dir / FOLDER
    name = hashlib.sha256(fp32).hexdigest()[:32]
    model, digest = folder / f"{name}.onnx", folder / f"{name}.sha256"
    try:
        data = model.read_bytes()
        if hashlib.sha256(data).hexdigest() == digest.read_text().strip():
            return data
    except OSError:
        pass  # not made yet
    from onnxruntime.quantization import QuantType, quantize_dynamic

    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as work:
        plain, quantized = Path(work) / "fp32.onnx", Path(work) / "int8.onnx"
        plain.write_bytes(fp32)
        logging.disable(logging.WARNING)  # its advice to pre-process, which this graph needs not
        try:
            quantize_dynamic(plain, quantized, per_channel=True, weight_type=QuantType.QInt8)
        finally:
            logging.disable(logging.NOTSET)
        data = quantized.read_bytes()
        digest.write_text(hashlib.sha256(data).hexdigest())
        os.replace(quantized, model)
    return data
