"""MiniLM's attention and GELU as one onnxruntime operator each, in the exported graph.

The package's export spells each layer's attention out as ~30 small operators (the heads'
reshapes and transposes, shape arithmetic, a mask built with `GatherND`/`Where`, the scaled
product, `Softmax`, a NaN guard) and each GELU as five (`Div`, `Erf`, `Add`, `Mul`, `Mul`).
onnxruntime's own transformer optimiser looks for the older export's mask pattern and fuses
neither, so every call ran 264 kernels, most of them on a few dozen numbers.

`fuse` replaces, per layer, everything between the query/key/value projections and the output
projection with one `com.microsoft.MultiHeadAttention` (the padding mask as its
`key_padding_mask`; its default scale is the export's 1/√head size), and each GELU with
`com.microsoft.Gelu`; what nothing reads any more is dropped. The arithmetic is the same: the
fused float graph's vectors match the unfused one's to rounding. It runs on the float graph,
before quantisation (`quantized_model.derive`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import onnx
from onnx import NodeProto, TensorProto, helper, numpy_helper

MICROSOFT = "com.microsoft"
HEADS = 12
"""all-MiniLM-L6-v2: hidden size 384 in 12 heads of 32."""

_MASK = "opsgraph_key_padding_mask"


class UnexpectedGraph(ValueError):
    """The graph is not the export this fusion was written for."""


def fuse(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` (the float export, shapes inferred) with fused attention and GELU, in place."""
    graph = model.graph
    if "attention_mask" not in {value.name for value in graph.input}:
        raise UnexpectedGraph("the graph has no attention_mask input")
    producer = {out: node for node in graph.node for out in node.output}
    consumers: dict[str, list[NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    constants = {init.name: numpy_helper.to_array(init) for init in graph.initializer}

    replacing = {**_attention(graph, producer, consumers), **_gelu(producer, consumers,
                                                                  constants)}
    if not any(node.op_type == "MultiHeadAttention" for node in replacing.values()):
        raise UnexpectedGraph("no attention layer found to fuse")
    nodes = [helper.make_node("Cast", ["attention_mask"], [_MASK], to=TensorProto.INT32,
                              name="opsgraph_mask_int32")]
    nodes += [replacing.get(node.output[0], node) for node in graph.node]
    kept = _live(nodes, [out.name for out in graph.output])
    del graph.node[:]
    graph.node.extend(kept)
    read = {name for node in kept for name in node.input}
    initializers = [init for init in graph.initializer if init.name in read]
    del graph.initializer[:]
    graph.initializer.extend(initializers)
    del graph.value_info[:]  # inferred for nodes that are gone; quantisation infers again
    if not any(op.domain == MICROSOFT for op in model.opset_import):
        model.opset_import.append(helper.make_opsetid(MICROSOFT, 1))
    return model


def _attention(graph: onnx.GraphProto, producer: dict[str, NodeProto],
               consumers: dict[str, list[NodeProto]]) -> dict[str, NodeProto]:
    """{the attention context's name: the MultiHeadAttention node that makes it}, per layer:
    its inputs are the outputs of the query, key and value bias `Add`s; its output is what the
    output projection's `MatMul` reads."""
    names = {init.name for init in graph.initializer}
    fused: dict[str, NodeProto] = {}
    layer = 0
    while (prefix := f"inner.encoder.layer.{layer}.attention.") + "self.query.bias" in names:
        q, k, v = (_bias_add(consumers, f"{prefix}self.{part}.bias").output[0]
                   for part in ("query", "key", "value"))
        out_bias = f"{prefix}output.dense.bias"
        add = _bias_add(consumers, out_bias)
        projection = producer[next(name for name in add.input if name != out_bias)]
        if projection.op_type != "MatMul":
            raise UnexpectedGraph(f"layer {layer}: the output projection is a "
                                  f"{projection.op_type}, not a MatMul")
        context = projection.input[0]
        fused[context] = helper.make_node(
            "MultiHeadAttention", [q, k, v, "", _MASK], [context], domain=MICROSOFT,
            num_heads=HEADS, name=f"opsgraph_attention_{layer}")
        layer += 1
    return fused


def _gelu(producer: dict[str, NodeProto], consumers: dict[str, list[NodeProto]],
          constants: dict[str, np.ndarray]) -> dict[str, NodeProto]:
    """{a GELU's output: the Gelu node that makes it}: x · 0.5 · (1 + erf(x / √2)) as
    exported (`Div`, `Erf`, `Add`, `Mul`, `Mul`), each constant checked."""
    fused: dict[str, NodeProto] = {}
    for erf in (node for node in producer.values() if node.op_type == "Erf"):
        div = producer[erf.input[0]]
        x = div.input[0]
        add = _only(consumers, erf.output[0], "Add")
        half = _only(consumers, add.output[0], "Mul")
        product = _only(consumers, half.output[0], "Mul")
        checks = ((div, math.sqrt(2)), (add, 1.0), (half, 0.5))
        if (div.op_type != "Div" or x not in product.input
                or not all(_is_constant(node, value, constants) for node, value in checks)):
            raise UnexpectedGraph(f"{erf.name} is not the GELU this fusion knows")
        fused[product.output[0]] = helper.make_node(
            "Gelu", [x], [product.output[0]], domain=MICROSOFT, name=f"opsgraph_{erf.name}")
    return fused


def _bias_add(consumers: dict[str, list[NodeProto]], bias: str) -> NodeProto:
    adds = [node for node in consumers.get(bias, []) if node.op_type == "Add"]
    if len(adds) != 1:
        raise UnexpectedGraph(f"{bias} is added {len(adds)} times, not once")
    return adds[0]


def _only(consumers: dict[str, list[NodeProto]], name: str, op_type: str) -> NodeProto:
    readers = consumers.get(name, [])
    if len(readers) != 1 or readers[0].op_type != op_type:
        raise UnexpectedGraph(f"{name} is read by {[n.op_type for n in readers]}, "
                              f"not by one {op_type}")
    return readers[0]


def _is_constant(node: NodeProto, value: float, constants: dict[str, np.ndarray]) -> bool:
    """Whether one of `node`'s inputs is a scalar initializer equal to `value`."""
    return any(name in constants and constants[name].size == 1
               and math.isclose(float(constants[name].reshape(())), value, rel_tol=1e-6)
               for name in node.input)


def _live(nodes: Iterable[NodeProto], outputs: list[str]) -> list[NodeProto]:
    """`nodes` (in order) that the graph's outputs depend on."""
    needed = set(outputs)
    kept: list[NodeProto] = []
    for node in reversed(list(nodes)):
        if needed.intersection(node.output):
            kept.append(node)
            needed.update(name for name in node.input if name)
    kept.reverse()
    return kept
