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

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from referee.detection.learned import GRID_STRIDES, grid

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
    network that is not such an export (its head's constants named, shaped or valued
    otherwise than ultralytics' YOLOv8-obb export makes them (8.3 and 8.4), with ``learned.grid``'s
    anchors) is refused (NotAnExportError) before any change."""
    graph = model.graph
    if len(graph.input) == 3 and [i.name for i in graph.input[1:]] == [ANCHORS, STRIDES]:
        return False
    if len(graph.input) != 1 or len(graph.output) != 1:
        raise NotAnExportError("expected one input and one output")
    dims = graph.input[0].type.tensor_type.shape.dim
    counted = graph.output[0].type.tensor_type.shape.dim
    if len(dims) != 4 or len(counted) != 3 or not all(d.HasField("dim_value") for d in dims):
        raise NotAnExportError("expected an input of 4 fixed dimensions and an output of 3")
    # Everything looked up and checked first.
    stored = {init.name: init for init in graph.initializer}
    if not set(COUNTED_SHAPES) <= set(stored):
        raise NotAnExportError("its head's reshapes are not the ones of a YOLOv8-obb export")
    made = {node.output[0]: node for node in graph.node}
    height, width = dims[2].dim_value, dims[3].dim_value
    dropped = []
    built = grid(height, width)
    count = built[1].shape[-1]
    for name, expected in zip((ANCHORS, STRIDES), built, strict=True):
        if name in stored:
            constant = numpy_helper.to_array(stored[name])
        elif name in made and made[name].op_type == "Cast" and made[name].input[0] in stored:
            dropped.append(made[name])  # stored as float16 (training.onnx_weights)
            constant = numpy_helper.to_array(stored[made[name].input[0]])
        else:
            raise NotAnExportError(f"its head has no {name} built in")
        if constant.shape != expected.shape or not np.array_equal(constant, expected):
            raise NotAnExportError(f"{name} is not the grid of a {height} x {width} input's "
                                   f"cells (strides {GRID_STRIDES})")
    cells = {int(numpy_helper.to_array(stored[name])[-1]) for name in COUNTED_SHAPES}
    if cells != {count} or counted[2].dim_value != count:
        raise NotAnExportError(f"its head counts {sorted(cells)} cells, its grid {count}")
    # Then changed.
    for name in COUNTED_SHAPES:
        values = numpy_helper.to_array(stored[name]).copy()
        values[-1] = -1
        stored[name].CopyFrom(numpy_helper.from_array(values, name))
    for node in dropped:
        graph.node.remove(node)
    used = {name for node in graph.node for name in node.input}
    gone = {ANCHORS, STRIDES} | {node.input[0] for node in dropped if node.input[0] not in used}
    for init in [init for init in graph.initializer if init.name in gone]:
        graph.initializer.remove(init)
    for dim, name in ((dims[2], "height"), (dims[3], "width")):
        dim.Clear()
        dim.dim_param = name
    counted[2].Clear()
    counted[2].dim_param = "cells"
    graph.input.append(helper.make_tensor_value_info(ANCHORS, TensorProto.FLOAT,
                                                     [1, 2, "cells"]))
    graph.input.append(helper.make_tensor_value_info(STRIDES, TensorProto.FLOAT, [1, "cells"]))
    del graph.value_info[:]  # shapes inferred for the square input
    onnx.checker.check_model(model)
    return True


def ship(export: Path, out: Path) -> None:
    """An ultralytics export (``export``) written at ``out`` as the referee runs it: any
    height and width (``any_size``), weights stored as float16 (``training.onnx_weights``).
    Nothing is written when it is no such export (NotAnExportError, naming ``export``)."""
    from training.onnx_weights import float_layers, half_weights

    model = onnx.load(str(export))
    try:
        any_size(model)
    except NotAnExportError as error:
        raise NotAnExportError(f"{export}: {error}") from None
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
