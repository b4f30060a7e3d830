"""Let the exported card detector take any height and width, not only the square it was
exported for.

    python -m training.detector_shapes models/card_detector.onnx

rewrites the file in place (a file already so made is left as it is). Ultralytics exports a
YOLOv8-obb network for one input size: its head's anchor points and strides are constants
built for that size (4,725 cells on 480 x 480), and two of its reshapes name that count.
Everything before the head is convolutions, pooling and resizing by a factor, which run on
any size. So the count becomes -1 in those reshapes, the input's height and width are left
open, and the anchor points and strides become the network's second and third inputs
(``referee.detection.learned.grid`` computes them for the input's size). On a square input
fed the grid of that square the outputs are the same, number for number, as the export's.

Why: a 1280 x 720 frame letterboxed onto 480 x 480 is 44% grey bands, and the network costs
as much there as on the picture. On 480 x 288 a pass took 26 ms against 46 (session 57,
models/README.md).

Training-only (needs the ``onnx`` package of the ``train`` and ``test`` extras); the runtime
never imports it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import onnx
from onnx import TensorProto, helper, numpy_helper

#: The export's constants of the head: its anchor points (1 x 2 x N) and strides (1 x N),
#: each stored as float16 behind a Cast (``training.onnx_weights``) or as float32.
ANCHORS = "/model.22/Constant_14_output_0"
STRIDES = "/model.22/Constant_15_output_0"
#: The reshapes of the head that name the count of cells (the distribution focal loss's).
COUNTED_SHAPES = ("/model.22/dfl/Constant_output_0", "/model.22/dfl/Constant_1_output_0")


class NotAnExportError(ValueError):
    """The file is not a YOLOv8-obb export this knows how to open up."""


def any_size(model: onnx.ModelProto) -> bool:
    """Open ``model`` up in place (see the module's doc); False when it was so already. A
    network that is not such an export is refused (NotAnExportError) before any change."""
    graph = model.graph
    if len(graph.input) == 3 and [i.name for i in graph.input[1:]] == [ANCHORS, STRIDES]:
        return False
    if len(graph.input) != 1 or len(graph.output) != 1:
        raise NotAnExportError("expected one input and one output")
    # Everything looked up and checked first.
    shapes = {init.name: init for init in graph.initializer if init.name in COUNTED_SHAPES}
    for node in graph.node:  # (a Constant node where the export was not folded)
        if node.op_type == "Constant" and node.output[0] in COUNTED_SHAPES:
            values = [a.t for a in node.attribute if a.name == "value"]
            if not values:
                raise NotAnExportError(f"{node.output[0]} holds no tensor")
            shapes[node.output[0]] = values[0]
    if set(shapes) != set(COUNTED_SHAPES):
        raise NotAnExportError("its head's reshapes are not the ones of a YOLOv8-obb export")
    made = {node.output[0]: node for node in graph.node}
    stored = {init.name: init for init in graph.initializer}
    dropped, cells = [], set()
    for name, rank in ((ANCHORS, 3), (STRIDES, 2)):
        if name in stored:
            constant = numpy_helper.to_array(stored[name])
        elif name in made and made[name].op_type == "Cast" and made[name].input[0] in stored:
            dropped.append(made[name])  # stored as float16 (training.onnx_weights)
            constant = numpy_helper.to_array(stored[made[name].input[0]])
        else:
            raise NotAnExportError(f"its head has no {name} built in")
        if constant.ndim != rank:
            raise NotAnExportError(f"{name} is shaped {constant.shape}")
        cells.add(constant.shape[-1])
    cells |= {int(numpy_helper.to_array(tensor)[-1]) for tensor in shapes.values()}
    if len(cells) != 1:
        raise NotAnExportError(f"its head's constants count different cells ({sorted(cells)})")
    # Then changed.
    for tensor in shapes.values():
        values = numpy_helper.to_array(tensor).copy()
        values[-1] = -1
        tensor.CopyFrom(numpy_helper.from_array(values, tensor.name))
    for node in dropped:
        graph.node.remove(node)
    used = {name for node in graph.node for name in node.input}
    for init in list(graph.initializer):
        if init.name in (ANCHORS, STRIDES) or init.name not in used:
            graph.initializer.remove(init)
    dims = graph.input[0].type.tensor_type.shape.dim
    for dim, name in ((dims[2], "height"), (dims[3], "width")):
        dim.Clear()
        dim.dim_param = name
    count = graph.output[0].type.tensor_type.shape.dim[2]
    count.Clear()
    count.dim_param = "cells"
    graph.input.append(helper.make_tensor_value_info(ANCHORS, TensorProto.FLOAT,
                                                     [1, 2, "cells"]))
    graph.input.append(helper.make_tensor_value_info(STRIDES, TensorProto.FLOAT, [1, "cells"]))
    del graph.value_info[:]  # shapes inferred for the square input
    onnx.checker.check_model(model)
    return True


def ship(export: Path, out: Path) -> None:
    """An ultralytics export (``export``) written at ``out`` as the referee runs it: any
    height and width (``any_size``), weights stored as float16 (``training.onnx_weights``).
    Nothing is written when it is no such export."""
    from training.onnx_weights import float_layers, half_weights

    model = onnx.load(str(export))
    any_size(model)
    model = half_weights(float_layers(model))
    onnx.checker.check_model(model)
    onnx.save(model, str(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", type=Path, help="card detector ONNX files")
    args = parser.parse_args()
    for path in args.models:
        model = onnx.load(str(path))
        try:
            changed = any_size(model)
        except NotAnExportError as error:
            raise SystemExit(f"error: {path}: {error}") from None
        if changed:
            onnx.save(model, str(path))
        print(f"{path}: {'takes any height and width now' if changed else 'already did'}")


if __name__ == "__main__":
    main()
