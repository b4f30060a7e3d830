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
    """Open ``model`` up in place (see the module's doc); False when it was so already."""
    graph = model.graph
    if len(graph.input) == 3 and [i.name for i in graph.input[1:]] == [ANCHORS, STRIDES]:
        return False
    if len(graph.input) != 1 or len(graph.output) != 1:
        raise NotAnExportError("expected one input and one output")
    shapes = {init.name: init for init in graph.initializer if init.name in COUNTED_SHAPES}
    for node in graph.node:  # (a Constant node where the export was not folded)
        if node.op_type == "Constant" and node.output[0] in COUNTED_SHAPES:
            shapes[node.output[0]] = node.attribute[0].t
    if set(shapes) != set(COUNTED_SHAPES):
        raise NotAnExportError("its head's reshapes are not the ones of a YOLOv8-obb export")
    for tensor in shapes.values():
        values = numpy_helper.to_array(tensor).copy()
        values[-1] = -1
        tensor.CopyFrom(numpy_helper.from_array(values, tensor.name))
    constants = [node for node in graph.node if node.output[0] in (ANCHORS, STRIDES)]
    stored = {init.name for init in graph.initializer if init.name in (ANCHORS, STRIDES)}
    if len(constants) + len(stored) != 2:
        raise NotAnExportError("its head has no anchor points and strides built in")
    for node in constants:  # a Cast from float16, or a Constant
        graph.node.remove(node)
    used = {name for node in graph.node for name in node.input}
    for init in list(graph.initializer):
        if init.name in stored or init.name not in used:
            graph.initializer.remove(init)
    dims = graph.input[0].type.tensor_type.shape.dim
    for dim, name in ((dims[2], "height"), (dims[3], "width")):
        dim.Clear()
        dim.dim_param = name
    cells = graph.output[0].type.tensor_type.shape.dim[2]
    cells.Clear()
    cells.dim_param = "cells"
    graph.input.append(helper.make_tensor_value_info(ANCHORS, TensorProto.FLOAT,
                                                     [1, 2, "cells"]))
    graph.input.append(helper.make_tensor_value_info(STRIDES, TensorProto.FLOAT, [1, "cells"]))
    del graph.value_info[:]  # shapes inferred for the square input
    onnx.checker.check_model(model)
    return True


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
