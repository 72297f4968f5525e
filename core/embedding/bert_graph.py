"""A sentence-transformers BERT folder's encoder as an ONNX graph, built from its safetensors.

The graph takes a batch's summed token embeddings (`embedded`, float [batch, tokens, width]: word
+ position + token type, looked up by the caller) and its `attention_mask` (int64 [batch,
tokens]) and returns `vectors` (float [batch, width]): the embeddings' LayerNorm, BERT's layers
(self-attention over the unmasked tokens, exact erf GELU, residual LayerNorms), mean pooling over
the unmasked tokens, L2 norm. It is built in memory at load time (no file to ship or convert)
and run by onnxruntime (`onnx_encoder.py`).
"""

from __future__ import annotations

import math

import numpy as np
from onnx import ModelProto, NodeProto, TensorProto, helper, numpy_helper

EMBEDDED, MASK, VECTORS = "embedded", "attention_mask", "vectors"
_OPSET = 20  # the first with `Gelu`
# the IR version of opset 20 (onnx 1.15): onnx's helpers would stamp the newest they know (14 in
# onnx 1.23), which an older onnxruntime refuses (macOS x86_64 gets onnxruntime 1.23)
_IR_VERSION = 9


class _Graph:
    """Nodes and constants of the graph being built; each helper returns its output's name."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        self.weights = weights
        self.nodes: list[NodeProto] = []
        self.constants: list[TensorProto] = []

    def const(self, name: str, array: np.ndarray) -> str:
        self.constants.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(self, op: str, inputs: list[str], output: str, **attributes: object) -> str:
        self.nodes.append(helper.make_node(op, inputs, [output], **attributes))
        return output

    def linear(self, x: str, prefix: str) -> str:
        """x @ W^T + b of the folder's `prefix.weight` and `prefix.bias`."""
        weight = self.const(f"{prefix}.weight", self.weights[f"{prefix}.weight"].T)
        product = self.node("MatMul", [x, weight], f"{prefix}.product")
        bias = self.const(f"{prefix}.bias", self.weights[f"{prefix}.bias"])
        return self.node("Add", [product, bias], f"{prefix}.out")

    def norm(self, x: str, prefix: str, eps: float) -> str:
        scale = self.const(f"{prefix}.weight", self.weights[f"{prefix}.weight"])
        shift = self.const(f"{prefix}.bias", self.weights[f"{prefix}.bias"])
        return self.node("LayerNormalization", [x, scale, shift], f"{prefix}.out", epsilon=eps)


def bert_graph(config: dict, weights: dict[str, np.ndarray]) -> ModelProto:
    """The encoder of a BERT `config.json` and its state dict (keys without `bert.`)."""
    graph = _Graph(weights)
    heads, width, eps = (
        config["num_attention_heads"],
        config["hidden_size"],
        config["layer_norm_eps"],
    )
    hidden = graph.norm(EMBEDDED, "embeddings.LayerNorm", eps)
    mask = graph.node("Cast", [MASK], "mask", to=TensorProto.FLOAT)
    attention_bias = _attention_bias(graph, mask)
    for index in range(config["num_hidden_layers"]):
        hidden = _layer(graph, hidden, attention_bias, f"encoder.layer.{index}.", heads, eps)
    vectors = _mean_pooled(graph, hidden, mask)
    graph.node("LpNormalization", [vectors], VECTORS, axis=-1, p=2)
    inputs = [
        helper.make_tensor_value_info(EMBEDDED, TensorProto.FLOAT, ["batch", "tokens", width]),
        helper.make_tensor_value_info(MASK, TensorProto.INT64, ["batch", "tokens"]),
    ]
    output = helper.make_tensor_value_info(VECTORS, TensorProto.FLOAT, ["batch", width])
    body = helper.make_graph(graph.nodes, "bert", inputs, [output], graph.constants)
    return helper.make_model(
        body, opset_imports=[helper.make_opsetid("", _OPSET)], ir_version=_IR_VERSION
    )


def _attention_bias(graph: _Graph, mask: str) -> str:
    """0 for a token to attend to, -10,000 for padding, as [batch, 1, 1, tokens] (BERT's)."""
    padding = graph.node("Sub", [graph.const("one", np.array(1.0, np.float32)), mask], "padding")
    bias = graph.node("Mul", [padding, graph.const("masked", np.array(-1e4, np.float32))], "bias")
    axes = graph.const("head_and_query_axes", np.array([1, 2], np.int64))
    return graph.node("Unsqueeze", [bias, axes], "attention_bias")


def _layer(graph: _Graph, x: str, attention_bias: str, prefix: str, heads: int, eps: float) -> str:
    """One encoder layer: self-attention, then the GELU feed-forward, each with a residual norm."""
    width = graph.weights[f"{prefix}attention.output.dense.weight"].shape[0]
    size = width // heads
    per_head = graph.const(f"{prefix}per_head", np.array([0, 0, heads, size], np.int64))
    merged = graph.const(f"{prefix}merged", np.array([0, 0, width], np.int64))
    parts = {}
    for part, order in (("query", [0, 2, 1, 3]), ("key", [0, 2, 3, 1]), ("value", [0, 2, 1, 3])):
        projected = graph.linear(x, f"{prefix}attention.self.{part}")
        split = graph.node("Reshape", [projected, per_head], f"{prefix}{part}.heads")
        parts[part] = graph.node("Transpose", [split], f"{prefix}{part}.t", perm=order)
    scores = graph.node("MatMul", [parts["query"], parts["key"]], f"{prefix}scores")
    scale = graph.const(f"{prefix}scale", np.array(1 / math.sqrt(size), np.float32))
    scores = graph.node("Mul", [scores, scale], f"{prefix}scaled")
    scores = graph.node("Add", [scores, attention_bias], f"{prefix}biased")
    weights = graph.node("Softmax", [scores], f"{prefix}weights", axis=-1)
    attended = graph.node("MatMul", [weights, parts["value"]], f"{prefix}attended")
    attended = graph.node("Transpose", [attended], f"{prefix}attended.t", perm=[0, 2, 1, 3])
    attended = graph.node("Reshape", [attended, merged], f"{prefix}attended.merged")
    out = graph.linear(attended, f"{prefix}attention.output.dense")
    x = graph.node("Add", [x, out], f"{prefix}attention.residual")
    x = graph.norm(x, f"{prefix}attention.output.LayerNorm", eps)
    up = graph.node("Gelu", [graph.linear(x, f"{prefix}intermediate.dense")], f"{prefix}gelu")
    down = graph.linear(up, f"{prefix}output.dense")
    x = graph.node("Add", [x, down], f"{prefix}output.residual")
    return graph.norm(x, f"{prefix}output.LayerNorm", eps)


def _mean_pooled(graph: _Graph, hidden: str, mask: str) -> str:
    """The mean of the unmasked tokens' states."""
    weights = graph.node("Unsqueeze", [mask, graph.const("last", np.array([2], np.int64))], "w")
    kept = graph.node("Mul", [hidden, weights], "kept")
    tokens = graph.const("tokens_axis", np.array([1], np.int64))
    summed = graph.node("ReduceSum", [kept, tokens], "summed", keepdims=0)
    count = graph.node("ReduceSum", [mask, tokens], "count", keepdims=1)
    return graph.node("Div", [summed, count], "pooled")
