"""The training tools that need no torch: the detector's data set over several exports, and
reading the shipped detector's weights back out of its ONNX file (for
``training/detector_from_onnx.py``, whose rebuild itself is checked when torch is here)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from training.card_detector import data_yaml  # noqa: E402
from training.detector_from_onnx import MODELS, letterboxed, onnx_weights  # noqa: E402


def _export(root: Path, name: str) -> Path:
    folder = root / name / "detect-obb"
    for split in ("train", "val"):
        (folder / "images" / split).mkdir(parents=True)
    (folder / "data.yaml").write_text("path: x\n")
    return folder


def test_one_export_is_trained_on_its_own_data_yaml(tmp_path: Path) -> None:
    folder = _export(tmp_path, "a")
    assert data_yaml([folder], tmp_path / "run") == folder / "data.yaml"
    assert not (tmp_path / "run").exists()


def test_several_exports_are_listed_in_one_data_yaml(tmp_path: Path) -> None:
    first, second = _export(tmp_path, "a"), _export(tmp_path, "b")
    path = data_yaml([first, second], tmp_path / "run")
    listed = json.loads(path.read_text())  # JSON is YAML, as ultralytics reads it
    assert listed["train"] == [str(first / "images" / "train"), str(second / "images" / "train")]
    assert listed["val"] == [str(first / "images" / "val"), str(second / "images" / "val")]
    assert listed["names"] == {"0": "card"}


def test_a_folder_that_is_no_export_is_refused(tmp_path: Path) -> None:
    first = _export(tmp_path, "a")
    with pytest.raises(SystemExit, match="not an export"):
        data_yaml([first, tmp_path / "nothing"], tmp_path / "run")


def test_the_shipped_detectors_weights_read_back_by_module_name() -> None:
    weights = onnx_weights(MODELS / "card_detector.onnx")
    assert weights["model.0.conv.weight"].shape == (16, 3, 3, 3)
    assert weights["model.0.conv.bias"].shape == (16,)
    # float16 initialisers come back under the name the network uses, as float32
    assert not any(name.endswith("_fp16") for name in weights)
    assert {array.dtype for array in weights.values()} == {np.dtype(np.float32)}
    # every Conv of the head, the last (plain) convolutions included
    for level in range(3):
        for branch in ("cv2", "cv3", "cv4"):
            assert f"model.22.{branch}.{level}.2.weight" in weights


def test_letterboxed_pads_grey_around_the_scaled_image(tmp_path: Path) -> None:
    image = np.zeros((100, 200, 3), np.uint8)
    image[:, :, 2] = 255  # red in BGR
    path = tmp_path / "red.png"
    cv2.imwrite(str(path), image)
    x = letterboxed(path, 64)
    assert x.shape == (3, 64, 64) and x.dtype == np.float32
    assert x[:, 0, 0] == pytest.approx([114 / 255] * 3)  # padding above
    assert x[:, 32, 32] == pytest.approx([1.0, 0.0, 0.0])  # RGB now


def test_the_rebuilt_checkpoint_computes_what_the_onnx_file_does(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("ultralytics")
    from training.detector_from_onnx import rebuild

    rng = np.random.default_rng(3)
    paths = []
    for i in range(4):  # busy pictures, so every channel's statistics are measured
        path = tmp_path / f"{i}.jpg"
        cv2.imwrite(str(path), rng.integers(0, 255, (360, 640, 3), dtype=np.uint8))
        paths.append(path)
    _, worst = rebuild(MODELS / "card_detector.onnx", paths, 480)
    assert worst < 0.01


def test_a_blend_weighs_the_two_checkpoints_and_keeps_the_second_ones_counters() -> None:
    torch = pytest.importorskip("torch")
    from training.detector_blend import blended

    a = {"w": torch.tensor([0.0, 10.0]), "n": torch.tensor(5)}
    b = {"w": torch.tensor([1.0, 20.0]), "n": torch.tensor(7)}
    mixed = blended(a, b, 0.3)
    assert mixed["w"].tolist() == pytest.approx([0.3, 13.0])
    assert mixed["n"].item() == 7  # a counter, not a weight
    assert blended(a, b, 0.0)["w"].tolist() == [0.0, 10.0]
    with pytest.raises(ValueError, match="not the same network"):
        blended(a, {"w": b["w"]}, 0.5)
    with pytest.raises(ValueError, match="not the same network"):
        blended(a, {"w": torch.tensor([1.0, 2.0, 3.0]), "n": b["n"]}, 0.5)


@pytest.mark.parametrize("stored", ["float16 behind a Cast", "float32"])
def test_the_detector_opened_to_any_size_computes_what_its_square_export_did(
        stored: str, tmp_path: Path) -> None:
    import onnxruntime
    from onnx import TensorProto, helper, numpy_helper

    from referee.detection.learned import grid
    from training.detector_shapes import (
        ANCHORS,
        COUNTED_SHAPES,
        STRIDES,
        NotAnExportError,
        any_size,
        ship,
    )

    shipped = onnx.load(str(MODELS / "card_detector.onnx"))
    assert not any_size(shipped)  # the shipped file takes any size already
    # The network as ultralytics exported it: 480 x 480, its anchors built in.
    square = onnx.ModelProto()
    square.CopyFrom(shipped)
    graph = square.graph
    del graph.input[1:]
    for dim in graph.input[0].type.tensor_type.shape.dim[2:]:
        dim.Clear()
        dim.dim_value = 480
    for name, values in zip((ANCHORS, STRIDES), grid(480, 480), strict=True):
        if stored == "float32":
            graph.initializer.append(numpy_helper.from_array(values, name))
        else:  # as training.onnx_weights stores them
            graph.initializer.append(numpy_helper.from_array(values.astype(np.float16),
                                                             f"{name}_fp16"))
            graph.node.insert(0, helper.make_node("Cast", [f"{name}_fp16"], [name],
                                                  to=TensorProto.FLOAT))
    for init in graph.initializer:
        if init.name in COUNTED_SHAPES:
            values = numpy_helper.to_array(init).copy()
            values[-1] = 4725
            init.CopyFrom(numpy_helper.from_array(values, init.name))

    def run(model: onnx.ModelProto, picture: np.ndarray) -> np.ndarray:
        session = onnxruntime.InferenceSession(model.SerializeToString(),
                                               providers=["CPUExecutionProvider"])
        names = [port.name for port in session.get_inputs()]
        feeds = dict(zip(names, (picture, *grid(*picture.shape[2:])), strict=False))
        return np.asarray(session.run(None, feeds)[0])

    square = onnx.shape_inference.infer_shapes(square)  # as an export is: shapes for 480
    assert len(square.graph.value_info) > 100
    rng = np.random.default_rng(8)
    picture = rng.uniform(0, 1, (1, 3, 480, 480)).astype(np.float32)
    before = run(square, picture)
    assert before.shape == (1, 6, 4725)
    with pytest.raises(Exception, match=r"480|4725"):  # the square export takes no other size
        run(square, picture[:, :, :288])
    # A network missing a part, whose anchors are not the grid's, or whose head counts other
    # cells, is refused, and left as it was.
    def spoilt(name: str, change: object) -> onnx.ModelProto:
        broken = onnx.ModelProto()
        broken.CopyFrom(square)
        for init in [i for i in broken.graph.initializer if i.name.startswith(name)]:
            if change is None:
                broken.graph.initializer.remove(init)
            else:
                values = numpy_helper.to_array(init)
                init.CopyFrom(numpy_helper.from_array(change(values), init.name))
        return broken

    for broken, error in ((spoilt(STRIDES, None), r"no .*Constant_15"),
                          (spoilt(ANCHORS, lambda a: a + np.asarray(0.25, a.dtype)),
                           "not the grid"),
                          (spoilt(COUNTED_SHAPES[0], lambda a: np.array([*a[:-1], 4724])),
                           r"\[4724, 4725\] cells")):
        kept = broken.SerializeToString()
        with pytest.raises(NotAnExportError, match=error):
            any_size(broken)
        assert broken.SerializeToString() == kept
    # As an export is shipped (training.card_detector, detector_blend): the same numbers.
    onnx.save(square, str(tmp_path / "export.onnx"))
    ship(tmp_path / "export.onnx", tmp_path / "shipped.onnx")
    assert np.array_equal(run(onnx.load(str(tmp_path / "shipped.onnx")), picture[:, :, :288]),
                          run(shipped, picture[:, :, :288]))
    assert any_size(square)
    assert [port.name for port in square.graph.input[1:]] == [ANCHORS, STRIDES]
    assert not square.graph.value_info
    assert np.array_equal(run(square, picture), before)  # the same numbers on its square
    wide = picture[:, :, :288]
    assert np.array_equal(run(square, wide), run(shipped, wide))
    assert run(square, wide).shape == (1, 6, 36 * 60 + 18 * 30 + 9 * 15)
    # A network that is no such export is refused.
    plain = helper.make_model(helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])], "plain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])]))
    with pytest.raises(NotAnExportError):
        any_size(plain)


def test_the_grid_of_cells_is_ultralytics_anchors_stride_by_stride_row_by_row() -> None:
    from referee.detection.learned import grid

    anchors, strides = grid(64, 96)  # 8 x 12 cells of 8, 4 x 6 of 16, 2 x 3 of 32
    assert anchors.shape == (1, 2, 126) and strides.shape == (1, 126)
    assert anchors.dtype == strides.dtype == np.float32
    assert anchors[0, :, 0].tolist() == [0.5, 0.5] and strides[0, 0] == 8
    assert anchors[0, :, 1].tolist() == [1.5, 0.5]  # along the first row
    assert anchors[0, :, 12].tolist() == [0.5, 1.5]  # then the second
    assert anchors[0, :, 95].tolist() == [11.5, 7.5] and strides[0, 95] == 8
    assert anchors[0, :, 96].tolist() == [0.5, 0.5] and strides[0, 96] == 16
    assert anchors[0, :, 125].tolist() == [2.5, 1.5] and strides[0, 125] == 32
    try:
        import torch
        from ultralytics.utils.tal import make_anchors
    except ImportError:  # (the train extra; the values above are theirs)
        return
    features = [torch.zeros(1, 1, 64 // s, 96 // s) for s in (8, 16, 32)]
    theirs, their_strides = make_anchors(features, torch.tensor([8.0, 16.0, 32.0]), 0.5)
    assert np.array_equal(anchors[0], theirs.T.numpy())
    assert np.array_equal(strides[0], their_strides[:, 0].numpy())
