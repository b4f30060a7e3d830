"""The corner model: a card's corners read from a patch cut round an outline a few mm off."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.detection.corners import CornerModel
from referee.detection.crops import CORNER_PATCH_PX, corner_patch, order_corners, patch_corners
from referee.detection.detect import CORNER_PASSES, detect, load_corner_model
from referee.detection.outlines import Outline, quad_iou
from synth import effects
from synth.camera import Camera
from synth.scene import Renderer, Scene, card
from training.card_corners import astray, boxed, flipped, target_in_patch


def _card_seen_at_an_angle() -> tuple[np.ndarray, np.ndarray]:
    camera = Camera.looking_at((0.0, 0.0), 420.0, tilt_deg=25.0, image_size=(1280, 720))
    scene = Scene((card("a", "9H", "aisleriot:anglo_poker", (0.0, 0.0), 20.0),))
    clean = effects.Photometry.random(np.random.default_rng(0), clean=True)
    image, truth = Renderer(camera, np.random.default_rng(1), clean,
                            surface_colour=(40, 90, 30)).render(scene)
    return image, np.asarray(truth.objects[0].corners_px, np.float64)


def _one_side_off(corners: np.ndarray, mm: float) -> np.ndarray:
    """``corners`` with the side from corner 0 to corner 1 moved ``mm`` outwards."""
    out = order_corners(corners)
    px_per_mm = float(np.linalg.norm(out[1] - out[0])) / 63.0
    direction = (out[1] - out[0]) / np.linalg.norm(out[1] - out[0])
    normal = np.array([direction[1], -direction[0]])
    if normal @ (out[0] - out.mean(axis=0)) < 0:
        normal = -normal
    out[0] += mm * px_per_mm * normal
    out[1] += mm * px_per_mm * normal
    return out


@pytest.mark.parametrize("px_per_mm", [1.0, 0.5])
def test_the_patch_puts_the_outline_s_corners_where_the_model_expects_the_card(
        px_per_mm: float) -> None:
    image, truth = _card_seen_at_an_angle()
    for order in ([0, 1, 2, 3], [2, 3, 0, 1], [3, 0, 1, 2]):
        patch, warp = corner_patch(image, truth[order], px_per_mm)
        assert patch.shape == (CORNER_PATCH_PX[1], CORNER_PATCH_PX[0], 3)
        placed = cv2.perspectiveTransform(order_corners(truth).reshape(1, 4, 2), warp)[0]
        np.testing.assert_allclose(placed, patch_corners(px_per_mm), atol=1e-3)
        # the training target is the true corners in the patch's own order, whatever the
        # order they come in
        np.testing.assert_allclose(target_in_patch(truth[order], warp, px_per_mm),
                                   patch_corners(px_per_mm), atol=1e-3)
    # the card in the middle, as wide as it is at that many pixels a mm, with more table
    # round it the fewer there are
    card = patch_corners(px_per_mm)
    np.testing.assert_allclose(card[1, 0] - card[0, 0], 63.0 * px_per_mm)
    np.testing.assert_allclose(card[3, 1] - card[0, 1], 88.0 * px_per_mm)
    np.testing.assert_allclose(card.mean(axis=0), np.array(CORNER_PATCH_PX) / 2)


def test_training_outlines_stray_from_the_card_as_tightened_boxes_do() -> None:
    _, truth = _card_seen_at_an_angle()
    rng = np.random.default_rng(3)
    outlines = [astray(truth, rng) for _ in range(200)]
    overlaps = np.array([quad_iou(outline, truth) for outline in outlines])
    assert np.median(overlaps) > 0.85 and overlaps.min() > 0.5
    assert (overlaps < 0.97).mean() > 0.3  # most are off by enough to learn from


def test_training_outlines_for_a_coarse_model_have_a_side_farther_off() -> None:
    _, truth = _card_seen_at_an_angle()
    px_per_mm = float(np.linalg.norm(truth[1] - truth[0])) / 63.0

    def worst_mm(side_mm: float) -> np.ndarray:
        rng = np.random.default_rng(3)
        return np.array([np.linalg.norm(astray(truth, rng, side_mm=side_mm)
                                        - order_corners(truth), axis=1).max() / px_per_mm
                         for _ in range(300)])

    near, far = worst_mm(10.0), worst_mm(40.0)
    assert near.max() < 20.0 < far.max()
    assert (far > 20.0).mean() > 0.1  # a side 20-40 mm off, often enough to learn from


def test_the_box_round_a_card_in_perspective_is_the_smallest_rectangle_holding_it() -> None:
    _, truth = _card_seen_at_an_angle()
    rect = boxed(truth)
    sides = np.roll(rect, -1, axis=0) - rect
    for k in range(4):  # right angles
        assert abs(sides[k] @ sides[(k + 1) % 4]) < 1e-3 * np.linalg.norm(sides[k]) ** 2
    for point in truth:  # the card inside it (to a rounding)
        assert cv2.pointPolygonTest(rect.astype(np.float32), tuple(map(float, point)), True) > -0.5
    assert 0.85 < quad_iou(rect, truth) < 0.97  # a card in perspective is no rectangle
    np.testing.assert_allclose(order_corners(rect), rect)


@pytest.mark.parametrize(("share", "nearer_the_box"), [(0.0, False), (1.0, True)])
def test_training_outlines_start_from_the_card_or_from_its_box(
        share: float, nearer_the_box: bool) -> None:
    _, truth = _card_seen_at_an_angle()
    rect = boxed(truth)
    rng = np.random.default_rng(3)
    outlines = [astray(truth, rng, share) for _ in range(200)]
    to_box = np.median([quad_iou(outline, rect) for outline in outlines])
    to_card = np.median([quad_iou(outline, truth) for outline in outlines])
    assert (to_box > to_card + 0.01) == nearer_the_box
    assert (to_card > to_box + 0.01) != nearer_the_box


def test_that_share_of_training_outlines_start_from_the_box(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from training import card_corners

    _, truth = _card_seen_at_an_angle()
    started = []
    monkeypatch.setattr(card_corners, "boxed", lambda corners: started.append(1) or boxed(corners))
    rng = np.random.default_rng(4)
    for _ in range(1000):
        astray(truth, rng, 0.4)
    assert 340 <= len(started) <= 460


def test_the_first_corner_model_s_training_outlines_are_made_as_they_were() -> None:
    _, truth = _card_seen_at_an_angle()
    rng = np.random.default_rng(5)
    # as astray drew them before it could start from the box (session 50): with no share
    # for the box it draws no number for it, so the first model's data can be made again
    np.testing.assert_allclose(astray(truth, rng, 0.0), [[539.185, 301.68], [668.132, 256.061],
                                                         [748.02, 427.677], [606.38, 475.91]],
                               atol=1e-3)
    assert rng.random() == pytest.approx(0.9741861932592554)
    # and one side moved (seed 7 draws that), up to 10 mm as before ``side_mm`` was told
    rng = np.random.default_rng(7)
    np.testing.assert_allclose(astray(truth, rng, 0.0), [[534.252, 290.725], [672.463, 250.604],
                                                         [749.394, 424.978], [602.912, 477.476]],
                               atol=1e-3)
    assert rng.random() == pytest.approx(0.5534973520744925)


def test_turned_training_patches_keep_their_corners_on_the_card_in_order() -> None:
    width, height = CORNER_PATCH_PX
    target = patch_corners() + np.array([[-3.0, 2.0], [4.0, -1.0], [2.0, 5.0], [-2.0, 1.0]])
    patch = np.zeros((height, width, 3), np.uint8)
    cv2.fillConvexPoly(patch, np.round(target * 16).astype(np.int32), (255, 255, 255), shift=4)
    cv2.circle(patch, np.round(target[0] + (6.0, 6.0)).astype(np.int32), 3, (0, 0, 255), -1)
    patches, targets = np.repeat(patch[None], 32, axis=0), np.repeat(target[None], 32, axis=0)
    turned, corners = flipped(patches, targets, np.random.default_rng(0))
    ways = set()
    for one, where in zip(turned, corners, strict=True):
        drawn = np.zeros((height, width), np.uint8)
        cv2.fillConvexPoly(drawn, np.round(where * 16).astype(np.int32), 1, shift=4)
        card = one.max(axis=2) > 128
        # the corners still outline the card (a pixel's centre turns to width - 1 - x: with
        # width - x over 1% of the patch would differ)
        assert (card != (drawn > 0)).mean() < 0.002
        # clockwise from the top-left, as ``target_in_patch`` orders them
        assert np.argmin(where.sum(axis=1)) == 0 and np.argmax(where.sum(axis=1)) == 2
        assert cv2.contourArea(where.astype(np.float32), oriented=True) > 0
        red = np.argwhere((one[:, :, 2] > 200) & (one[:, :, 0] < 50)).mean(axis=0)[::-1]
        ways.add(int(np.argmin(np.linalg.norm(where - red, axis=1))))  # the marked corner
    assert ways == {0, 1, 2, 3}  # each way of turning drawn, its marked corner followed


def test_the_shipped_model_finds_a_card_s_corners_from_an_outline_a_side_off() -> None:
    model, missing = load_corner_model()
    assert model is not None, missing
    image, truth = _card_seen_at_an_angle()
    start = _one_side_off(truth, 8.0)
    (read,) = model.corners(image, [start])
    assert quad_iou(start, truth) < 0.92
    assert quad_iou(read, truth) > 0.96
    assert model.corners(image, []) == []


class _Finds:
    def __init__(self, corners: np.ndarray) -> None:
        self.corners = corners

    def find(self, image, min_score=0.25, slopes=None, mirrored=False, split=False,  # type: ignore[no-untyped-def]
             meanwhile=None):
        return [Outline(self.corners, 0.9, learned=True),
                *(meanwhile() if meanwhile is not None else [])]


class _Reads:
    def identify_many(self, image, cards, uncovered=None, *, quick=False, clear=None):  # type: ignore[no-untyped-def]
        from referee.detection.cards import CardReading

        return [CardReading("9H", 0.99, (("9H", 0.99), ("9H", 0.99)), cut=None) for _ in cards]

    def confirm(self, readings, uncovered=None, *, ensemble=True, clear=None, check_jokers=True):  # type: ignore[no-untyped-def]
        return list(readings)


class _Says(CornerModel):
    """A stand-in corner model that reads the given corners round any outline."""

    def __init__(self, corners: np.ndarray) -> None:
        self.said = corners

    def corners(self, image, outlines):  # type: ignore[no-untyped-def]
        return [self.said for _ in outlines]


@pytest.mark.parametrize("with_model", [True, False])
def test_detect_reports_the_corners_the_corner_model_reads(with_model: bool) -> None:
    image, truth = _card_seen_at_an_angle()
    start = _one_side_off(truth, 8.0)
    found = detect(image, _Reads(), _Finds(start), shapes_too=False,  # type: ignore[arg-type]
                   corner_model=_Says(truth) if with_model else None)
    (seen,) = found.cards
    assert seen.card == "9H"
    # without the model the outline is the one found (no box to polish it from)
    expected = truth if with_model else start
    assert quad_iou(np.array(seen.corners), expected) > 0.999


class _Halfway(CornerModel):
    """A stand-in corner model that reads corners halfway from an outline to the given
    ones, and keeps what it was asked to read round."""

    def __init__(self, corners: np.ndarray) -> None:
        self.truth = corners
        self.asked: list[int] = []

    def corners(self, image, outlines):  # type: ignore[no-untyped-def]
        self.asked.append(len(outlines))
        return [(np.asarray(o, np.float64) + self.truth) / 2 for o in outlines]


def test_the_corner_model_reads_again_round_the_corners_it_read() -> None:
    image, truth = _card_seen_at_an_angle()
    start = _one_side_off(truth, 8.0)
    model = _Halfway(truth)
    found = detect(image, _Reads(), _Finds(start), shapes_too=False,  # type: ignore[arg-type]
                   corner_model=model)
    (seen,) = found.cards
    # read CORNER_PASSES times, each time halfway from where it was
    expected = truth + (start - truth) / 2 ** CORNER_PASSES
    assert np.abs(np.array(seen.corners) - expected).max() < 0.1
    assert model.asked == [1] * CORNER_PASSES


def test_an_outline_whose_read_corners_were_not_taken_is_not_read_again() -> None:
    image, truth = _card_seen_at_an_angle()
    model = _Halfway(truth + 600.0)  # halfway there is far off: not taken
    found = detect(image, _Reads(), _Finds(truth), shapes_too=False,  # type: ignore[arg-type]
                   corner_model=model)
    (seen,) = found.cards
    assert quad_iou(np.array(seen.corners), truth) > 0.999
    assert model.asked == [1]


def test_corners_far_from_the_outline_they_were_read_round_are_not_taken() -> None:
    image, truth = _card_seen_at_an_angle()
    elsewhere = truth + 300.0  # a patch that shows no card may give corners anywhere
    found = detect(image, _Reads(), _Finds(truth), shapes_too=False,  # type: ignore[arg-type]
                   corner_model=_Says(elsewhere))
    (seen,) = found.cards
    assert quad_iou(np.array(seen.corners), truth) > 0.999


def test_an_outline_the_picture_cuts_is_not_read_by_the_corner_model() -> None:
    image, truth = _card_seen_at_an_angle()
    beyond = truth - truth.min(axis=0) - 30.0  # the card reaching out past the top-left
    found = detect(image, _Reads(), _Finds(beyond), shapes_too=False,  # type: ignore[arg-type]
                   corner_model=_Says(truth))
    (seen,) = found.cards
    assert quad_iou(np.array(seen.corners), beyond) > 0.99


def test_a_corner_model_that_cannot_be_used_is_refused_when_loaded(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from referee.detection.onnx_model import MODELS_DIR, ModelMissingError

    shipped = MODELS_DIR / "card_corners.json"
    broken = tmp_path / "card_corners.onnx"
    broken.write_bytes(b"not a model")
    (tmp_path / "card_corners.json").write_text(shipped.read_text(encoding="utf-8"))
    with pytest.raises(ModelMissingError, match="cannot be loaded"):
        CornerModel(broken)
    # another model's file, or one reading patches of another size
    wrong = tmp_path / "wrong.onnx"
    wrong.write_bytes((MODELS_DIR / "card_verifier.onnx").read_bytes())
    (tmp_path / "wrong.json").write_text(shipped.read_text(encoding="utf-8"))
    with pytest.raises(ModelMissingError, match="not patches"):
        CornerModel(wrong)
    (tmp_path / "wrong.json").write_text('{"classes": [], "patch_px": [64, 64]}')
    with pytest.raises(ModelMissingError, match="reads patches of"):
        CornerModel(wrong)
    # one trained on patches cut at another scale (``data --px-per-mm``)
    right = tmp_path / "coarse.onnx"
    right.write_bytes((MODELS_DIR / "card_corners.onnx").read_bytes())
    (tmp_path / "coarse.json").write_text('{"classes": [], "patch_px": [96, 128], '
                                          '"px_per_mm": 0.5}')
    with pytest.raises(ModelMissingError, match=r"cut at 0\.5 px a mm of the card, not 1"):
        CornerModel(right)
    (tmp_path / "coarse.json").write_text('{"classes": [], "patch_px": [96, 128], '
                                          '"px_per_mm": 1.0}')
    CornerModel(right)  # (the scale every model so far was trained at)


def test_a_corner_model_s_members_each_read_the_corners_and_a_corner_is_their_mean(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from referee.detection.onnx_model import MODELS_DIR, ModelMissingError

    meta = json.loads((MODELS_DIR / "card_corners.json").read_text(encoding="utf-8"))
    assert meta["members"] == ["card_corners_2.onnx"]  # the shipped model has one
    for name, source, members in (("first", "card_corners", []),
                                  ("second", "card_corners_2", []),
                                  ("both", "card_corners", ["second.onnx"]),
                                  ("lacking", "card_corners", ["nosuch.onnx"])):
        (tmp_path / f"{name}.onnx").write_bytes((MODELS_DIR / f"{source}.onnx").read_bytes())
        (tmp_path / f"{name}.json").write_text(json.dumps({**meta, "members": members}))
    image, truth = _card_seen_at_an_angle()
    start = _one_side_off(truth, 8.0)
    first, second, both = (CornerModel(tmp_path / f"{name}.onnx").corners(image, [start])[0]
                           for name in ("first", "second", "both"))
    assert np.abs(first - second).max() > 0.05  # two runs that read apart
    np.testing.assert_allclose(both, (first + second) / 2, atol=1e-6)
    with pytest.raises(ModelMissingError, match=r"nosuch\.onnx not found"):
        CornerModel(tmp_path / "lacking.onnx")
    (tmp_path / "lacking.json").write_text(json.dumps({**meta, "members": "second.onnx"}))
    with pytest.raises(ModelMissingError, match="members are not file names beside it"):
        CornerModel(tmp_path / "lacking.onnx")


def test_the_corner_models_threads_sleep_between_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    import onnxruntime

    from referee.detection.onnx_model import MODELS_DIR, cpu_session

    made = []
    real = onnxruntime.InferenceSession

    def recorded(path, options, **kwargs):  # type: ignore[no-untyped-def]
        try:
            made.append(options.get_session_config_entry("session.intra_op.allow_spinning"))
        except RuntimeError:  # (not set: onnxruntime's default, threads waiting busy)
            made.append(None)
        return real(path, options, **kwargs)

    monkeypatch.setattr(onnxruntime, "InferenceSession", recorded)
    CornerModel()
    # both runs' sessions: busy waiting, one took the cores from the next one's
    assert made == ["0", "0"]
    cpu_session(MODELS_DIR / "card_corners.onnx", 1)
    assert made[-1] is None  # other models' threads wait busy as before


def test_detect_without_a_usable_corner_model_warns_in_one_line_and_goes_on(
        tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    import json

    import referee.detection.detect as detect_module
    from referee.cli import main
    from referee.detection.onnx_model import ModelMissingError

    def unusable(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise ModelMissingError("card corner model x.onnx cannot be loaded by onnxruntime")

    monkeypatch.setattr(detect_module, "CornerModel", unusable)
    image, _ = _card_seen_at_an_angle()
    path = tmp_path / "table.png"
    cv2.imwrite(str(path), image)
    try:
        main(["detect", str(path), "--json"])
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    assert code == 0
    assert [line for line in err.splitlines() if "corner model" in line] == [
        "referee: warning: card corner model x.onnx cannot be loaded by onnxruntime; outlines "
        "are as tightened on the picture's edges"]
    assert [c["card"] for c in json.loads(out)["cards"]] == ["9H"]


def test_a_corner_run_trains_on_patches_of_one_scale(tmp_path: Path) -> None:
    import json

    from training.card_corners import patch_scale

    for name, render in (("old", None), ("one", {"px_per_mm": 1.0}),
                         ("coarse", {"px_per_mm": 0.5}), ("coarse2", {"px_per_mm": 0.5}),
                         ("listed", [1, 2]), ("none", {"px_per_mm": None}),
                         ("big", {"px_per_mm": 2.0})):
        (tmp_path / name).mkdir()
        if render is not None:
            text = json.dumps({"seed": 1, **render} if isinstance(render, dict) else render)
            (tmp_path / name / "render.json").write_text(text)
    # (rendered before the scale was told, or not told in an object: 1)
    assert patch_scale([tmp_path / "old", tmp_path / "one", tmp_path / "listed"]) == 1.0
    assert patch_scale([tmp_path / "coarse", tmp_path / "coarse2"]) == 0.5
    with pytest.raises(SystemExit,
                       match=r"one: 1\.0 px a mm, .*coarse: 0\.5 px a mm\): train on one"):
        patch_scale([tmp_path / "one", tmp_path / "coarse"])
    for name in ("none", "big"):
        with pytest.raises(SystemExit, match=f"{name}/render.json: px_per_mm .* is no scale"):
            patch_scale([tmp_path / name])


def test_corner_data_cuts_patches_at_the_scale_and_side_it_is_told(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json
    import sys

    from training import card_corners

    jobs: list[tuple[object, ...]] = []

    class Pool:
        """Records the shards' jobs instead of rendering them."""

        def __init__(self, workers: int) -> None:
            pass

        def __enter__(self) -> Pool:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def map(self, render, shards):  # type: ignore[no-untyped-def]
            jobs.extend(shards)
            return [0 for _ in jobs]

    monkeypatch.setattr(card_corners, "ProcessPoolExecutor", Pool)
    out = tmp_path / "wide"
    monkeypatch.setattr(sys, "argv", ["card_corners", "data", "--out", str(out), "--scenes",
                                      "150", "--px-per-mm", "0.5", "--side-mm", "40"])
    card_corners.main()
    assert [job[-2:] for job in jobs] == [(0.5, 40.0), (0.5, 40.0)]  # two shards
    render = json.loads((out / "render.json").read_text())
    assert (render["px_per_mm"], render["side_mm"], render["scenes"]) == (0.5, 40.0, 150)
    # no scale the patch can show a card's edges at, and no side beyond a card's width
    for option, value, message in (("--px-per-mm", "2", "--px-per-mm is 0.1 to 1.0"),
                                   ("--px-per-mm", "nan", "--px-per-mm is 0.1 to 1.0"),
                                   ("--side-mm", "nan", "--side-mm is 0 to 60"),
                                   ("--side-mm", "-1", "--side-mm is 0 to 60")):
        monkeypatch.setattr(sys, "argv", ["card_corners", "data", "--out", str(out),
                                          option, value])
        with pytest.raises(SystemExit) as exit_:
            card_corners.main()
        assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_a_corner_run_s_seed_sets_its_first_weights_and_is_recorded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    from training import card_corners

    rng = np.random.default_rng(0)
    width, height = CORNER_PATCH_PX
    for split, count in (("train", 8), ("val", 4)):
        (tmp_path / split).mkdir()
        np.savez_compressed(tmp_path / split / "shard0000.npz",
                            patches=rng.integers(0, 256, (count, height, width, 3), np.uint8),
                            targets=(patch_corners() + rng.normal(0, 2, (count, 4, 2)))
                            .astype(np.float32))
    runs: list[tuple[dict[str, object], dict[str, object]]] = []
    monkeypatch.setattr(card_corners, "export",
                        lambda model, name, meta: runs.append((model.state_dict(), meta)))
    for seed in (0, 0, 1):
        card_corners.train([tmp_path], epochs=1, batch=4, out_name="x", seed=seed)
    (first, meta), (again, _), (other, other_meta) = runs
    assert meta["seed"] == 0 and other_meta["seed"] == 1
    assert meta["px_per_mm"] == 1.0  # (the scale its patches were cut at)
    assert all(torch.equal(first[k], again[k]) for k in first)  # a seed trains the same
    assert not all(torch.equal(first[k], other[k]) for k in first)  # another seed does not
