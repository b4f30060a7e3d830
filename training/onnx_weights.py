"""How the shipped ONNX models store their weights: float16 in the file, float32 at run time.

    python -m training.onnx_weights models/card_detector.onnx models/card_index.onnx ...

rewrites each file in place. A model whose layers onnxruntime's ``quantize_dynamic`` made
8-bit (``ConvInteger`` and ``MatMulInteger`` on activations quantised frame by frame, as the
models up to session 14 were shipped) first gets its float layers back, with the weights
the 8-bit ones stand for; then every float weight is stored as float16 behind a ``Cast`` to float32,
which onnxruntime folds into a constant when it loads the model. So the file is half the
size of a float32 export, and the arithmetic is float32: on this 2-core CPU the card
detector ran in 43 ms instead of 74 and the index classifier read 16 corners in 9 ms
instead of 16 (``ConvInteger`` is slow here), with the same weights (models/README.md).

Training-only (needs the ``onnx`` package of the ``train`` and ``test`` extras); the runtime
never imports it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

#: Float initializers smaller than this (scales, shapes, biases of small layers) stay float32.
MIN_HALF_SIZE = 64
#: ``quantize_dynamic``'s integer operators and the float ones they stand for.
FLOAT_OF = {"ConvInteger": "Conv", "MatMulInteger": "MatMul"}


def float_layers(model: onnx.ModelProto) -> onnx.ModelProto:
    """``quantize_dynamic``'s pattern DynamicQuantizeLinear(x) -> ConvInteger (or
    MatMulInteger, a classifier's last layer) -> Cast -> Mul (by the input's and the
    weights' scales) replaced by Conv(x, weights dequantised) (or MatMul)."""
    graph = model.graph
    initializers = {init.name: init for init in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    consumers: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)

    def array(name: str) -> np.ndarray[Any, Any]:
        return numpy_helper.to_array(initializers[name])

    replaced: dict[int, Any] = {}  # id of an integer node -> its float one
    dropped: set[int] = set()
    weights = []
    for node in graph.node:
        if node.op_type not in FLOAT_OF:
            continue
        quantise = producer[node.input[0]]
        cast = consumers[node.output[0]][0]
        scale = consumers[cast.output[0]][0]
        scales = producer[scale.input[1]]
        if (quantise.op_type, cast.op_type, scale.op_type, scales.op_type) != (
                "DynamicQuantizeLinear", "Cast", "Mul", "Mul"):
            raise ValueError(f"{node.name}: not quantize_dynamic's pattern")
        zero = array(node.input[3]).astype(np.float32) if len(node.input) > 3 else 0.0
        step = array(next(n for n in scales.input if n in initializers)).astype(np.float32)
        if node.op_type == "ConvInteger":  # per output channel: the first axis of a kernel
            per_channel = [1] * (array(node.input[1]).ndim - 1)
            if np.ndim(zero) == 1:
                zero = np.reshape(zero, (-1, *per_channel))
            if np.ndim(step) == 1:
                step = np.reshape(step, (-1, *per_channel))
        # (MatMulInteger's per-column scales, shape (N,), broadcast over its K x N weights.)
        name = node.input[1].removesuffix("_quantized")
        weights.append(numpy_helper.from_array(
            ((array(node.input[1]).astype(np.float32) - zero) * step).astype(np.float32), name))
        done = helper.make_node(FLOAT_OF[node.op_type], [quantise.input[0], name],
                                [scale.output[0]], name=node.name.removesuffix("_quant") or name)
        done.attribute.extend(node.attribute)
        replaced[id(node)] = done
        dropped.update({id(cast), id(scale)})
    if not replaced:
        return model
    nodes = [replaced.get(id(n), n) for n in graph.node if id(n) not in dropped]
    graph.initializer.extend(weights)
    _keep(graph, nodes)
    return model


def half_weights(model: onnx.ModelProto) -> onnx.ModelProto:
    """Every float32 weight of at least ``MIN_HALF_SIZE`` values stored as float16, cast back
    to float32 at load (onnxruntime folds the cast)."""
    graph = model.graph
    casts, kept = [], []
    for init in graph.initializer:
        values = numpy_helper.to_array(init)
        if values.dtype != np.float32 or values.size < MIN_HALF_SIZE:
            kept.append(init)
            continue
        half = numpy_helper.from_array(values.astype(np.float16), f"{init.name}_fp16")
        kept.append(half)
        casts.append(helper.make_node("Cast", [half.name], [init.name],
                                      to=onnx.TensorProto.FLOAT, name=f"{init.name}_to_float"))
    nodes = [*casts, *graph.node]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    _keep(graph, nodes)
    return model


def _keep(graph: Any, nodes: list[Any]) -> None:
    """The graph's nodes become ``nodes`` less those no output needs; unused weights go."""
    needed = {out.name for out in graph.output}
    live = []
    for node in reversed(nodes):
        if any(out in needed for out in node.output):
            live.append(node)
            needed.update(name for name in node.input if name)
    del graph.node[:]
    graph.node.extend(reversed(live))
    used = [init for init in graph.initializer if init.name in needed]
    del graph.initializer[:]
    graph.initializer.extend(used)


def convert(path: Path, out: Path | None = None) -> Path:
    """``path`` (float or 8-bit) rewritten with float16-stored weights, at ``out`` or in place."""
    model = half_weights(float_layers(onnx.load(str(path))))
    onnx.checker.check_model(model)
    target = out or path
    onnx.save(model, str(target))
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", type=Path, nargs="+")
    for path in parser.parse_args().models:
        before = path.stat().st_size
        convert(path)
        print(f"{path}: {before / 1e6:.1f} MB -> {path.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
