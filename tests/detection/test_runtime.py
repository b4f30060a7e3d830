"""What runs the card detector: onnxruntime, or OpenVINO (bfloat16 where the CPU computes it)."""

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.cli import main
from referee.detection import onnx_model
from referee.detection.learned import CardDetector
from referee.detection.onnx_model import (
    RUNTIME_ENV,
    OpenVinoSession,
    RuntimeUnavailableError,
    detector_runtime,
)
from referee.detection.outlines import overlap

SAMPLES = Path(__file__).resolve().parents[2] / "sample_footage"


def _has(monkeypatch: pytest.MonkeyPatch, installed: bool, bf16: bool) -> None:
    monkeypatch.setattr(onnx_model, "openvino_bf16", lambda: (installed, bf16))


def test_auto_runs_openvino_only_where_it_is_installed_and_the_cpu_computes_bfloat16(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(RUNTIME_ENV, raising=False)
    _has(monkeypatch, True, True)
    assert detector_runtime() == "openvino"
    assert detector_runtime("auto") == "openvino"
    _has(monkeypatch, True, False)  # float32 only: onnxruntime is as fast or faster there
    assert detector_runtime() == "onnxruntime"
    _has(monkeypatch, False, False)
    assert detector_runtime() == "onnxruntime"


def test_the_runtime_asked_for_is_the_one_used(monkeypatch: pytest.MonkeyPatch) -> None:
    _has(monkeypatch, True, True)
    monkeypatch.setenv(RUNTIME_ENV, "onnxruntime")
    assert detector_runtime() == "onnxruntime"
    assert detector_runtime("openvino") == "openvino"  # an argument over the environment
    _has(monkeypatch, True, False)
    monkeypatch.setenv(RUNTIME_ENV, " OpenVINO ")
    assert detector_runtime() == "openvino"  # asked for, it runs float32 there


def test_a_runtime_that_cannot_run_here_is_a_clear_error(monkeypatch: pytest.MonkeyPatch,
                                                         ) -> None:
    _has(monkeypatch, False, False)
    with pytest.raises(RuntimeUnavailableError, match="pip install openvino"):
        detector_runtime("openvino")
    monkeypatch.setenv(RUNTIME_ENV, "tensorrt")
    with pytest.raises(RuntimeUnavailableError, match="tensorrt"):
        CardDetector()


def _frame() -> np.ndarray:
    video = cv2.VideoCapture(str(SAMPLES / "slapstick" / "video.mp4"))
    video.set(cv2.CAP_PROP_POS_FRAMES, 472)  # the last: eleven cards boxed
    ok, frame = video.read()
    video.release()
    assert ok
    return np.asarray(frame)


def test_openvino_finds_the_boxes_onnxruntime_finds() -> None:
    pytest.importorskip("openvino")
    frame = _frame()
    ours = CardDetector(refine=False, runtime="onnxruntime").find(frame)
    theirs = CardDetector(refine=False, runtime="openvino").find(frame)
    assert len(ours) >= 8  # cards on the table
    # Boxes clear of the bar (bfloat16 moves a score by about 0.01) match one to one.
    for these, those in ((ours, theirs), (theirs, ours)):
        for box in these:
            if box.score < 0.3:
                continue
            best = max(those, key=lambda other: overlap(box.corners, other.corners))
            assert overlap(box.corners, best.corners) > 0.95
            assert abs(best.score - box.score) < 0.05


@pytest.mark.parametrize(("rows", "cols", "placed"), [
    # 960 x 540: on 480 x 288, 9 rows of grey above it (105 on the square)
    ((0, 540), (0, 960), ((1, 3, 288, 480), (0, 9))),
    # 960 x 450: on 480 x 256, 31 rows above it (127 on the square: 3 cells of 32 more)
    ((45, 495), (0, 960), ((1, 3, 256, 480), (0, 31))),
    # 405 x 540, upright as a phone photo: on the square, 60 columns to its left
    ((0, 540), (100, 505), ((1, 3, 480, 480), (60, 0))),
])
def test_the_detector_boxes_a_frame_on_its_own_shape_as_on_the_square_it_was_trained_on(
        monkeypatch: pytest.MonkeyPatch, rows: tuple[int, int], cols: tuple[int, int],
        placed: tuple[tuple[int, ...], tuple[int, int]]) -> None:
    frame = np.ascontiguousarray(_frame()[rows[0]:rows[1], cols[0]:cols[1]])
    detector = CardDetector(refine=False, runtime="onnxruntime")
    resized, _, left, top = detector._scaled(frame)
    assert (detector._letterbox(resized, left, top).shape, (left, top)) == placed
    square = CardDetector(refine=False, runtime="onnxruntime")
    monkeypatch.setattr(square, "_placement", lambda w, h: (480, 480, round((480 - w) / 2 - 0.1),
                                                           round((480 - h) / 2 - 0.1)))
    resized, _, left, top = square._scaled(frame)
    assert square._letterbox(resized, left, top).shape == (1, 3, 480, 480)
    if placed[0][2:] == (480, 480):
        return  # (an upright picture lies on the square: nothing else to compare)
    # Boxes scored 0.3 or more match boxes of the other (down to 0.1), in place: anchors in
    # another order, or the picture placed elsewhere on the input, would move them all; the
    # 960 x 450 picture centred on 480 x 256 (15 rows above it, not 31) moves some to 0.67
    # overlap and scores them up to 0.5 apart. On the whole frame the grey bands' width
    # alone moves a box of two cards lying over each other (0.71 overlap, 0.12 apart).
    ours, theirs = detector.find(frame, min_score=0.1), square.find(frame, min_score=0.1)
    assert len([b for b in ours if b.score >= 0.4]) >= 6
    whole = rows == (0, 540)
    for these, those in ((ours, theirs), (theirs, ours)):
        overlaps = []
        for box in these:
            if box.score < 0.3:
                continue
            best = max(those, key=lambda other: overlap(box.corners, other.corners))
            overlaps.append(overlap(box.corners, best.corners))
            assert abs(best.score - box.score) < (0.2 if whole else 0.05)
        if whole:
            assert min(overlaps) > 0.6 and sorted(overlaps)[1] > 0.9
        else:
            assert min(overlaps) > 0.95


def test_an_openvino_session_runs_as_an_onnxruntime_one_does() -> None:
    pytest.importorskip("openvino")
    session = OpenVinoSession(onnx_model.MODELS_DIR / "card_corners.onnx", 1)
    reference = onnx_model.cpu_session(onnx_model.MODELS_DIR / "card_corners.onnx", 1)
    name = session.get_inputs()[0].name
    assert name == reference.get_inputs()[0].name
    # the same dimensions, one left open (onnxruntime names it, OpenVINO leaves it None)
    assert session.get_inputs()[0].shape[1:] == reference.get_inputs()[0].shape[1:]
    assert session.get_inputs()[0].shape[0] is None
    batch = np.random.default_rng(3).uniform(0, 255, (2, 3, 128, 96)).astype(np.float32)
    first = session.run(None, {name: batch})[0]
    again = session.run(None, {name: batch * 0})[0]  # its own copy, not the request's memory
    assert not np.array_equal(first, again)
    assert np.allclose(first, reference.run(None, {name: batch})[0], atol=0.5)


def test_openvino_runs_started_before_any_is_waited_for_give_each_its_own_outputs() -> None:
    pytest.importorskip("openvino")
    model = onnx_model.MODELS_DIR / "card_corners.onnx"
    rng = np.random.default_rng(5)
    batches = [rng.uniform(0, 255, (2, 3, 128, 96)).astype(np.float32) for _ in range(3)]
    # One thread and more runs started than it runs at once: none waits on another.
    for threads, at_once in ((1, 2), (2, 2)):
        session = OpenVinoSession(model, threads, at_once=at_once)
        name = session.get_inputs()[0].name
        alone = [session.run(None, {name: batch})[0] for batch in batches]
        waits = [onnx_model.start(session, {name: batch}) for batch in batches]
        together = [wait()[0] for wait in reversed(waits)][::-1]
        for one, other in zip(alone, together, strict=True):
            assert np.array_equal(one, other)
        assert not np.array_equal(together[0], together[1])
        # Waited for again, a run gives its outputs again and frees its request once only.
        assert np.array_equal(waits[0]()[0], together[0])
        assert session._idle.qsize() == len(batches)


def test_the_detector_gives_the_outlines_found_meanwhile_last_and_recovers_when_that_fails(
        ) -> None:
    from referee.detection.outlines import Outline

    frame = _frame()
    extra = Outline(np.array([[0.0, 0.0], [63.0, 0.0], [63.0, 88.0], [0.0, 88.0]]), 0.5)
    for runtime in ("onnxruntime", "openvino"):
        if runtime == "openvino" and not onnx_model.openvino_bf16()[0]:
            continue
        detector = CardDetector(refine=False, runtime=runtime)
        plain = detector.find(frame, mirrored=True)
        found = detector.find(frame, mirrored=True, meanwhile=lambda: [extra])
        assert found[-1] is extra and len(found) == len(plain) + 1

        def fails() -> list[Outline]:
            raise ValueError("the shape finder failed")

        with pytest.raises(ValueError, match="shape finder"):
            detector.find(frame, mirrored=True, meanwhile=fails)
        if runtime == "openvino":  # both its runs were waited for, and so freed
            assert detector._session._idle.qsize() == onnx_model.DETECTOR_PASSES
        again = detector.find(frame, mirrored=True)  # and it finds as before
        assert [o.score for o in again] == [o.score for o in plain]


def test_an_unreadable_model_is_a_clear_error_in_openvino(tmp_path: Path) -> None:
    pytest.importorskip("openvino")
    broken = tmp_path / "card_detector.onnx"
    broken.write_bytes(b"not a model")
    with pytest.raises(RuntimeUnavailableError, match="cannot be run by OpenVINO"):
        OpenVinoSession(broken, 1)


def test_referee_detect_says_in_one_line_which_runtime_it_cannot_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        ) -> None:
    image = str(tmp_path / "table.png")
    cv2.imwrite(image, np.full((120, 160, 3), 90, np.uint8))
    _has(monkeypatch, False, False)
    with pytest.raises(SystemExit) as exit_:
        main(["detect", image, "--runtime", "openvino"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install openvino" in err
    assert "restore" not in err  # nothing is wrong with the models
    # Installed, but unable to run the detector here, when asked for by name.
    _has(monkeypatch, True, True)

    def cannot(model: Path, threads: int, **_: object) -> None:
        raise RuntimeUnavailableError(f"{model.name} cannot be run by OpenVINO (no CPU)",
                                      "--runtime onnxruntime runs it without")

    monkeypatch.setattr(onnx_model, "OpenVinoSession", cannot)
    with pytest.raises(SystemExit) as exit_:
        main(["detect", image, "--runtime", "OpenVINO"])  # any case
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--runtime onnxruntime" in err and "restore" not in err
    monkeypatch.setenv(RUNTIME_ENV, "fastest")
    with pytest.raises(SystemExit) as exit_:
        main(["detect", image])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "fastest" in err


def test_openvino_chosen_but_unable_to_compile_leaves_the_detector_to_onnxruntime(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import referee.detection.learned as learned

    def cannot(model: Path, threads: int, **_: object) -> None:
        raise RuntimeUnavailableError(f"{model.name} cannot be run by OpenVINO (no)")

    monkeypatch.setattr(onnx_model, "OpenVinoSession", cannot)
    _has(monkeypatch, True, True)
    monkeypatch.delenv(RUNTIME_ENV, raising=False)
    detector = learned.CardDetector(refine=False)
    assert detector.runtime == "openvino" and detector.fallback_reason is None
    assert detector.find(_frame())  # it still finds the cards
    assert detector.runtime == "onnxruntime"
    assert detector.fallback_reason is not None and "OpenVINO" in detector.fallback_reason
    # Asked for by name, OpenVINO failing is an error, not a quiet change.
    with pytest.raises(RuntimeUnavailableError, match="OpenVINO"):
        learned.CardDetector(refine=False, runtime="openvino").find(_frame())


def test_a_broken_openvino_leaves_the_detector_to_onnxruntime(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    broken = types.ModuleType("openvino")

    def no_core() -> None:
        raise OSError("libopenvino.so: cannot open shared object file")

    broken.Core = no_core  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "openvino", broken)
    monkeypatch.delenv(RUNTIME_ENV, raising=False)
    onnx_model._openvino.cache_clear()
    onnx_model.openvino_bf16.cache_clear()
    try:
        assert detector_runtime() == "onnxruntime"
        with pytest.raises(RuntimeUnavailableError, match="not installed"):
            detector_runtime("openvino")
    finally:  # the real OpenVINO for the tests after this one
        onnx_model._openvino.cache_clear()
        onnx_model.openvino_bf16.cache_clear()


def test_referee_detect_says_in_one_line_when_onnxruntime_stood_in(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    image = str(tmp_path / "table.png")
    cv2.imwrite(image, np.full((120, 160, 3), 90, np.uint8))
    _has(monkeypatch, True, True)
    monkeypatch.delenv(RUNTIME_ENV, raising=False)

    def cannot(model: Path, threads: int, **_: object) -> None:
        raise RuntimeUnavailableError(f"{model.name} cannot be run by OpenVINO (no CPU)",
                                      "--runtime onnxruntime runs it without")

    monkeypatch.setattr(onnx_model, "OpenVinoSession", cannot)
    with pytest.raises(SystemExit) as exit_:
        main(["detect", image, "--json"])
    assert exit_.value.code == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["cards"] == []  # a bare table
    warnings = [line for line in err.splitlines() if "onnxruntime ran" in line]
    assert len(warnings) == 1 and "cannot be run by OpenVINO (no CPU)" in warnings[0]
