"""The fused attention and GELU compute what the export's operators compute, padding and
all, and a graph that is not the export is refused by name, not fused wrongly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from onnxruntime.quantization.shape_inference import quant_pre_process
from tokenizers import Tokenizer

from opsgraph.knowledge import quantized_model
from opsgraph.knowledge.embeddings import TOKENIZER_PATH, model_path
from opsgraph.knowledge.graph_fusion import UnexpectedGraph, fuse

TEXTS = ["book Jane into the 6pm class and email her the invoice", "refund",
         "who's got court 2 booked today?", "what are the opening hours on sunday"]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package's float export, pre-processed as `quantized_model.derive` does."""
    path = tmp_path_factory.mktemp("fusion") / "prepared.onnx"
    quant_pre_process(str(quantized_model.source_path()), str(path), skip_symbolic_shape=True)
    return path


def _pooled(model: onnx.ModelProto | Path) -> np.ndarray:
    """Mean-pooled last hidden states of TEXTS as one padded batch."""
    data = model.SerializeToString() if isinstance(model, onnx.ModelProto) else str(model)
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.enable_padding()
    encodings = tokenizer.encode_batch(TEXTS)
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    assert mask.min() == 0  # the batch is padded: the mask matters
    hidden = session.run(None, {"input_ids": ids, "attention_mask": mask,
                                "token_type_ids": np.zeros_like(ids)})[0]
    return np.asarray((hidden * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True))


def test_the_fused_graph_computes_what_the_export_computes(prepared: Path) -> None:
    fused = fuse(onnx.load(str(prepared)))
    ops = [node.op_type for node in fused.graph.node]
    assert ops.count("MultiHeadAttention") == 6 and ops.count("Gelu") == 6
    assert not {"Softmax", "Erf", "Transpose", "Where", "IsNaN"} & set(ops)
    assert len(ops) < 150  # 315 before
    np.testing.assert_allclose(_pooled(fused), _pooled(prepared), atol=2e-5)


def test_the_derived_model_runs_the_fused_operators() -> None:
    ops = {node.op_type for node in onnx.load(str(model_path())).graph.node}
    assert {"MultiHeadAttention", "Gelu", "MatMulInteger"} <= ops
    assert "Softmax" not in ops


def test_a_graph_that_is_not_the_export_is_refused() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "not-minilm", [x], [y]))
    with pytest.raises(UnexpectedGraph, match="no attention_mask input"):
        fuse(model)
    mask = helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [1, 1])
    model.graph.input.append(mask)
    with pytest.raises(UnexpectedGraph, match="no attention layer found"):
        fuse(model)
