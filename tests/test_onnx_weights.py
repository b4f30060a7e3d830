"""training/onnx_weights.py: an 8-bit model's float convolutions back, its weights stored as
float16, and the same network out of it (on a small convolutional model built here)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnxruntime import InferenceSession  # noqa: E402
from onnxruntime.quantization import QuantType, quantize_dynamic  # noqa: E402

from training.onnx_weights import convert  # noqa: E402


def _conv_net(path: Path) -> None:
    """Two 3 x 3 convolutions with biases and a SiLU between, then a linear head: the shape
    of a YOLO classifier."""
    rng = np.random.default_rng(7)
    w1 = rng.normal(0, 0.3, (8, 3, 3, 3)).astype(np.float32)
    w2 = rng.normal(0, 0.3, (4, 8, 3, 3)).astype(np.float32)
    b1 = rng.normal(0, 0.1, 8).astype(np.float32)
    b2 = rng.normal(0, 0.1, 4).astype(np.float32)
    head = rng.normal(0, 0.1, (4 * 16 * 16, 5)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("Sigmoid", ["c1"], ["s1"], name="sig"),
        helper.make_node("Mul", ["c1", "s1"], ["a1"], name="silu"),
        helper.make_node("Conv", ["a1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], name="conv2"),
        helper.make_node("Flatten", ["c2"], ["f"], name="flat"),
        helper.make_node("MatMul", ["f", "head"], ["y"], name="linear"),
    ]
    graph = helper.make_graph(
        nodes, "net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])],
        [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (w2, "w2"), (b1, "b1"),
                                                     (b2, "b2"), (head, "head"))])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


INTEGER_OPS = {"ConvInteger", "MatMulInteger", "DynamicQuantizeLinear"}
MODELS = Path(__file__).resolve().parents[1] / "models"


def _run(path: Path, x: np.ndarray) -> np.ndarray:
    return np.asarray(InferenceSession(str(path), providers=["CPUExecutionProvider"])
                      .run(None, {"x": x})[0])


def test_an_8_bit_model_gets_float_layers_with_half_stored_weights(tmp_path: Path) -> None:
    float_model, quantised = tmp_path / "float.onnx", tmp_path / "int8.onnx"
    _conv_net(float_model)
    quantize_dynamic(str(float_model), str(quantised), weight_type=QuantType.QUInt8)
    ops = {n.op_type for n in onnx.load(str(quantised)).graph.node}
    assert {"ConvInteger", "MatMulInteger"} <= ops  # the pattern the shipped models had
    x = np.random.default_rng(1).random((1, 3, 16, 16)).astype(np.float32)
    reference, eight_bit = _run(float_model, x), _run(quantised, x)

    convert(quantised)

    model = onnx.load(str(quantised))
    ops = {n.op_type for n in model.graph.node}
    assert not ops & INTEGER_OPS
    assert {"Conv", "MatMul", "Cast"} <= ops
    weights = {i.name: i.data_type for i in model.graph.initializer}
    assert TensorProto.FLOAT16 in weights.values()
    converted = _run(quantised, x)
    # The weights are the 8-bit ones: as near the float network as the 8-bit model is, and
    # nearer than it, since the activations are no longer quantised frame by frame.
    scale = float(np.abs(reference).max())
    assert np.abs(converted - reference).max() <= np.abs(eight_bit - reference).max() + 1e-3 * scale
    assert np.abs(converted - reference).max() < 0.05 * scale


def test_a_float_model_keeps_its_outputs_with_half_stored_weights(tmp_path: Path) -> None:
    path, copy = tmp_path / "float.onnx", tmp_path / "half.onnx"
    _conv_net(path)
    x = np.random.default_rng(2).random((1, 3, 16, 16)).astype(np.float32)
    convert(path, copy)
    assert copy.stat().st_size < path.stat().st_size
    np.testing.assert_allclose(_run(copy, x), _run(path, x), atol=5e-3)


@pytest.mark.parametrize("name", ["card_detector", "card_index", "card_index_15", "card_index_18",
                                  "card_index_19", "card_face", "card_verifier", "card_suit",
                                  "card_corners", "card_corners_2"])
def test_the_shipped_models_run_float_arithmetic_on_half_stored_weights(name: str) -> None:
    model = onnx.load(str(MODELS / f"{name}.onnx"))
    assert not {n.op_type for n in model.graph.node} & INTEGER_OPS
    types = [i.data_type for i in model.graph.initializer]
    assert TensorProto.UINT8 not in types and TensorProto.INT8 not in types
    assert TensorProto.FLOAT16 in types
