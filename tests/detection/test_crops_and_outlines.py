"""Card warping is independent of corner order; the outline finder finds separate cards."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import replace

import cv2
import numpy as np
import pytest
from shapely.geometry import Polygon

from referee.detection.cards import JOKER_CORNER_SURE, MODELS_DIR, CardIdentifier, CardReading
from referee.detection.crops import (
    FACE_CROP_PX,
    LEGACY_INDEX_MM,
    SUIT_CROP_PX,
    band_crops,
    card_crops,
    face_crop,
    index_crops,
    order_corners,
)
from referee.detection.detect import (
    DetectedCard,
    DetectError,
    Detections,
    _round_two,
    annotate,
    detect,
    read_image,
)
from referee.detection.outlines import (
    Outline,
    alone,
    beyond_edge,
    clear_bands,
    distinct,
    find_cards,
    gradients,
    greedy_distinct,
    hidden_shares,
    overlap,
    polygon_iou,
    quad_iou,
    shared_areas,
    shown_parts,
    stacking,
    under_cards,
)
from synth import effects
from synth.camera import Camera
from synth.scene import Renderer, Scene, card

CLEAN = effects.Photometry.random(np.random.default_rng(0), clean=True)


def _two_cards() -> tuple[np.ndarray, list[np.ndarray]]:
    camera = Camera.looking_at((0.0, 0.0), 450.0, tilt_deg=20.0, image_size=(960, 540))
    scene = Scene((card("a", "QS", "aisleriot:anglo_poker", (-70.0, 0.0), 15.0),
                   card("b", "7H", "aisleriot:anglo_poker", (80.0, 10.0), -30.0)))
    renderer = Renderer(camera, np.random.default_rng(1), CLEAN, surface_colour=(40, 90, 30))
    image, truth = renderer.render(scene)
    return image, [np.array(o.corners_px) for o in truth.objects]


def _cut_by(corners: np.ndarray, image: np.ndarray, outside: float) -> np.ndarray:
    """``corners`` moved right until ``outside`` of the outline lies past the picture's right
    edge (from touching it: 0), to a quarter pixel."""
    from referee.detection.cards import share_in_picture

    moved = corners.copy()
    moved[:, 0] += image.shape[1] - 1 - moved[:, 0].max()  # touching the right edge
    while share_in_picture(moved, image) > 1 - outside:
        moved[:, 0] += 0.25
    return moved


def test_crops_do_not_depend_on_corner_order() -> None:
    image, cards = _two_cards()
    reference = index_crops(image, cards[0])
    for order in itertools.permutations(range(4)):
        crops = index_crops(image, cards[0][list(order)])
        assert {c.tobytes() for c in crops} == {c.tobytes() for c in reference}


def test_the_face_crop_is_the_whole_card_and_the_corners_match_index_crops() -> None:
    image, cards = _two_cards()
    first, second, face = card_crops(image, cards[1])
    same = index_crops(image, cards[1])
    assert [c.tobytes() for c in (first, second)] == [c.tobytes() for c in same]
    assert face.shape == (FACE_CROP_PX, FACE_CROP_PX, 3)
    assert face.tobytes() == face_crop(image, cards[1]).tobytes()
    # The 7H's face: paper along the rim (the rounded corners aside), red pips inside.
    rim = np.concatenate([face[1, 6:-6], face[-2, 6:-6], face[6:-6, 1],
                          face[6:-6, -2]]).astype(int)
    assert (rim[:, 1] - rim[:, 2] < 30).all() and rim.mean() > 150
    red = (face[..., 2].astype(int) - face[..., 1]) > 80
    assert red[8:-8, 8:-8].sum() > 20


def test_the_end_bands_are_the_whole_width_of_each_end_turned_alike() -> None:
    # A card 63 x 88 mm at 3 px/mm, upright, on a dark table: a blue mark at its top-right
    # corner (where aisleriot tango_nuevo prints the suit) and a red one at the bottom left
    # (the same place, the card turned), green at the top-left index, yellow at the other.
    image = np.full((400, 300, 3), 30, np.uint8)
    left, top = 50, 40
    image[top:top + 264, left:left + 189] = 235

    def mark(x_mm: float, y_mm: float, colour: tuple[int, int, int]) -> None:
        x, y = left + round(x_mm * 3), top + round(y_mm * 3)
        image[y:y + 24, x:x + 24] = colour

    mark(50, 4, (255, 0, 0))
    mark(5, 76, (0, 0, 255))
    mark(3, 4, (0, 255, 0))
    mark(52, 76, (0, 255, 255))
    corners = np.array([[left, top], [left + 189, top], [left + 189, top + 264],
                        [left, top + 264]], dtype=np.float64)

    def at(crop: np.ndarray, colour: tuple[int, int, int]) -> tuple[float, float] | None:
        near = (np.abs(crop.astype(int) - colour).sum(axis=2) < 120).nonzero()
        return (near[1].mean() / crop.shape[1], near[0].mean() / crop.shape[0]) \
            if len(near[0]) else None

    for order in itertools.permutations(range(4)):
        bands = band_crops(image, corners[list(order)])
        corner_crops = index_crops(image, corners[list(order)])
        for band, corner_crop in zip(bands, corner_crops, strict=True):
            assert band.shape == (SUIT_CROP_PX, SUIT_CROP_PX, 3)
            # each band holds its end's index corner (the one index_crops cuts in turn)
            index_mark = (0, 255, 0) if at(corner_crop, (0, 255, 0)) else (0, 255, 255)
            x, y = at(band, index_mark) or (1.0, 1.0)
            assert x < 0.2 and y < 0.35
            # and the far corner of the same end, top right once turned upright
            far_mark = (255, 0, 0) if index_mark == (0, 255, 0) else (0, 0, 255)
            x, y = at(band, far_mark) or (0.0, 1.0)
            assert x > 0.75 and y < 0.35
            # the other end's marks are not in it (the band stops 36 mm down a card 88 long)
            assert at(band, (0, 255, 255) if index_mark == (0, 255, 0) else (0, 255, 0)) is None


def test_an_end_band_is_clear_when_no_other_outline_reaches_into_it() -> None:
    # Cards drawn 1 px a mm: b lies over the bottom 18 mm of a, c far away.
    a = np.array([[0, 0], [63, 0], [63, 88], [0, 88]], float)
    b = np.array([[0, 70], [63, 70], [63, 158], [0, 158]], float)
    c = np.array([[300, 0], [363, 0], [363, 88], [300, 88]], float)
    for order in itertools.permutations(range(4)):
        bands = clear_bands([a[list(order)], b, c])
        # in band_crops' order: the band at order_corners' first corner comes first
        top_first = order_corners(a[list(order)])[0][1] == 0
        assert bands[0] == ((True, False) if top_first else (False, True))
        assert sorted(bands[1]) == [False, True] and bands[2] == (True, True)
    # a neighbour 30 mm over a's side reaches into both its bands
    d = np.array([[33, 0], [96, 0], [96, 88], [33, 88]], float)
    assert clear_bands([a, d])[0] == (False, False)


def _pair(first: str, second: str) -> tuple[np.ndarray, list[np.ndarray], list[float]]:
    """Two cards of a packaged design, the second laid over a third of the first."""
    camera = Camera.looking_at((0.0, 0.0), 450.0, tilt_deg=20.0, image_size=(960, 540))
    scene = Scene((card("a", first, "aisleriot:anglo_poker", (-25.0, 0.0), 15.0),
                   card("b", second, "aisleriot:anglo_poker", (20.0, 12.0), -20.0)))
    renderer = Renderer(camera, np.random.default_rng(3), CLEAN, surface_colour=(40, 90, 30))
    image, truth = renderer.render(scene)
    return (image, [np.array(o.corners_px) for o in truth.objects],
            [o.visible_fraction for o in truth.objects])


@pytest.mark.parametrize(("first", "second"), [("QS", "7H"), ("7H", "QS"), ("AD", "2C")])
def test_the_card_on_top_is_told_by_its_edge_crossing_the_one_beneath(first: str,
                                                                       second: str) -> None:
    image, quads, visible = _pair(first, second)
    assert visible[0] < 0.9 and visible[1] > 0.99  # the second lies on the first
    over = stacking(gradients(image), quads)
    assert over[1][0] is True and over[0][1] is False
    assert stacking(gradients(image), quads[::-1])[0][1] is True  # in either order
    # nothing lies on the top card: its face and both its ends are its own
    assert alone(quads) == [False, False]
    assert alone(quads, over) == [False, True]
    assert clear_bands(quads, over)[1] == (True, True)
    assert clear_bands(quads, over)[0] == clear_bands(quads)[0]


def test_what_shows_of_a_card_is_what_the_card_on_it_leaves() -> None:
    image, quads, visible = _pair("QS", "7H")
    over = stacking(gradients(image), quads)
    parts = shown_parts(quads, over, image.shape[1], image.shape[0])
    shares = [sum(Polygon(p).area for p in part) / Polygon(quad).area
              for part, quad in zip(parts, quads, strict=True)]
    assert len(parts[0]) == 1 and shares[0] == pytest.approx(visible[0], abs=0.03)
    assert shares[1] == pytest.approx(1.0)
    # where the edges do not tell which lies on top, neither hides the other
    undecided: list[list[bool | None]] = [[None, None], [None, None]]
    assert [len(p) for p in shown_parts(quads, undecided, 960, 540)] == [1, 1]
    assert Polygon(shown_parts(quads, undecided, 960, 540)[0][0]).area == pytest.approx(
        Polygon(quads[0]).area)


def test_what_shows_leaves_out_the_picture_s_edge_and_slivers_and_may_be_two_parts() -> None:
    card_a, card_b = _rect(-40, 10, 100, 140), _rect(-50, 60, 200, 20)  # b lies across a
    b_over_a: list[list[bool | None]] = [[None, False], [True, None]]
    parts = shown_parts([card_a, card_b], b_over_a, 300, 200)
    # a: its part in the picture (x from 0), less b's band across it: two parts, the larger
    # first; b: its part in the picture
    assert [round(Polygon(p).area) for p in parts[0]] == [60 * 70, 60 * 50]
    assert [round(Polygon(p).area) for p in parts[1]] == [150 * 20]
    lower = shown_parts([card_a, _rect(-50, 100, 200, 20)], b_over_a, 300, 200)
    assert [round(Polygon(p).area) for p in lower[0]] == [60 * 90, 60 * 30]
    assert min(x for part in parts[0] for x, _ in part) == 0.0
    # a band of a pixel left above the card on top (outlined a pixel short) is no part of it
    short = _rect(-50, 11, 200, 49)
    parts = shown_parts([card_a, short], b_over_a, 300, 200)
    assert [round(Polygon(p).area) for p in parts[0]] == [60 * 90]
    # nothing shows of a card wholly under another or out of the picture
    assert shown_parts([_rect(30, 30, 10, 10), card_a], b_over_a, 300, 200)[0] == []
    assert shown_parts([_rect(400, 0, 50, 70)], [[None]], 300, 200) == [[]]


def test_an_outline_reaching_far_out_of_the_picture_is_sampled_only_inside_it() -> None:
    image, quads, _ = _pair("QS", "7H")
    # a card seen at a grazing angle projects far off the picture (a ground-truth outline
    # 10^10 px long once asked for 90 GB of samples); the middle of its sides lies far away,
    # so it tells nothing, and the others are judged as before
    far = np.array([[400.0, 300.0], [5e9, 300.0], [5e9, 5e9], [400.0, 5e9]])
    over = stacking(gradients(image), [*quads, far])
    assert over[1][0] is True and over[0][1] is False
    assert over[2] == [None, None, None] and over[0][2] is None and over[1][2] is None


def test_an_edge_that_cannot_be_measured_does_not_lose_to_noise() -> None:
    # an outline inside a card along no edge at all (the end of a merged box split off):
    # its own sides in the card show only the card's grain, and the card's sides never run
    # inside it, so neither is judged on top
    rng = np.random.default_rng(2)
    image = np.full((300, 400, 3), 40, np.uint8)
    card_a = np.array([[60, 40], [200, 40], [200, 240], [60, 240]], float)
    cv2.fillConvexPoly(image, np.round(card_a).astype(np.int32), (230, 230, 230))
    image = np.clip(image + rng.normal(0, 2, image.shape), 0, 255).astype(np.uint8)
    inner = np.array([[90, 80], [170, 80], [170, 200], [90, 200]], float)
    over = stacking(gradients(image), [card_a, inner])
    assert over[0][1] is None and over[1][0] is None
    assert alone([card_a, inner], over) == [False, False]


def test_edges_that_tell_nothing_leave_both_cards_covered() -> None:
    # two plain white cards on a dark table: where they overlap no edge shows, either way
    image = np.full((300, 400, 3), 40, np.uint8)
    a = np.array([[60, 60], [186, 60], [186, 236], [60, 236]], float)
    b = np.array([[140, 80], [266, 80], [266, 256], [140, 256]], float)
    far = np.array([[300, 20], [363, 20], [363, 108], [300, 108]], float)
    for quad in (a, b, far):
        cv2.fillConvexPoly(image, np.round(quad).astype(np.int32), (235, 235, 235))
    over = stacking(gradients(image), [a, b, far])
    assert all(v is None for row in over for v in row)
    assert alone([a, b, far], over) == [False, False, True]


def test_alone_tells_cards_something_may_cover_from_cards_apart() -> None:
    card_a = [[0, 0], [63, 0], [63, 88], [0, 88]]
    card_b = [[50, 40], [113, 40], [113, 128], [50, 128]]  # overlaps a's corner
    card_c = [[200, 0], [263, 0], [263, 88], [200, 88]]
    touching = [[63, 0], [126, 0], [126, 88], [63, 88]]  # shares an edge with a only
    assert alone([card_a, card_b, card_c]) == [False, False, True]
    assert alone([card_a, touching]) == [True, True]


def test_order_corners_is_clockwise_from_a_short_side() -> None:
    ordered = order_corners([[0, 0], [0, 88], [63, 88], [63, 0]])
    sides = np.linalg.norm(ordered - np.roll(ordered, -1, axis=0), axis=1)
    assert sides[0] == pytest.approx(63) and sides[1] == pytest.approx(88)
    (ax, ay), (bx, by) = ordered[1] - ordered[0], ordered[2] - ordered[1]
    cross = ax * by - ay * bx
    assert cross > 0  # clockwise on screen, where y points down


def test_outline_finder_finds_two_separate_cards() -> None:
    image, cards = _two_cards()
    found = find_cards(image)
    assert len(found) == 2
    for truth in cards:  # rounded card corners make corner points a poor yardstick: IoU
        assert max(_iou(o.corners, truth) for o in found) > 0.95


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    from shapely.geometry import Polygon

    pa, pb = Polygon(order_corners(a)), Polygon(order_corners(b))
    return float(pa.intersection(pb).area / pa.union(pb).area)


def test_detect_reports_cards_in_contract_shape() -> None:
    image, _ = _two_cards()
    result = detect(image, identifier=None)
    data = result.to_json()
    assert set(data) == {"cards", "coins", "tokens"}
    assert len(data["cards"]) == 2 and data["cards"][0]["card"] == "??"
    assert len(data["cards"][0]["corners"]) == 4
    # two cards lying apart: all of each shows
    for entry in data["cards"]:
        assert len(entry["visible"]) == 1
        assert Polygon(entry["visible"][0]).area == pytest.approx(
            Polygon(order_corners(np.array(entry["corners"]))).area, rel=1e-3)
    json.dumps(data)
    assert result.warnings
    assert annotate(image, Detections(result.cards)).shape == image.shape


def test_labels_of_cards_lying_on_each_other_do_not_run_into_each_other() -> None:
    image = np.full((300, 400, 3), 200, np.uint8)
    corners = [[150.0, 100.0], [230.0, 100.0], [230.0, 210.0], [150.0, 210.0]]
    moved = [[x + 6, y + 4] for x, y in corners]
    out = annotate(image, Detections([DetectedCard("JK", corners, 0.96),
                                      DetectedCard("AH", moved, 0.89)]))
    patch = np.all(out == (20, 20, 20), axis=2)
    rows = patch.sum(axis=1) > 10
    starts = np.flatnonzero(rows[1:] & ~rows[:-1])
    assert len(starts) + int(rows[0]) == 2  # two label patches, one above the other
    columns = np.flatnonzero(patch.any(axis=0))
    assert columns.max() - columns.min() <= 80 + 6 + 4  # no wider than the cards


def test_unreadable_image_is_a_clear_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "x.png"
    bad.write_text("not an image")
    with pytest.raises(DetectError, match="not an image"):
        read_image(bad)
    with pytest.raises(DetectError, match="no such file"):
        read_image(tmp_path / "missing.png")


def test_detect_command_prints_contract_json_and_annotates(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json
    import subprocess
    import sys

    import cv2

    image, _ = _two_cards()
    path = tmp_path / "table.png"
    cv2.imwrite(str(path), image)
    out = tmp_path / "annotated.png"
    done = subprocess.run([sys.executable, "-m", "referee", "detect", str(path), "--json",
                           "--annotate", str(out)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert len(data["cards"]) == 2 and {"card", "corners", "confidence"} <= set(data["cards"][0])
    assert cv2.imread(str(out)).shape == image.shape
    missing = subprocess.run([sys.executable, "-m", "referee", "detect", str(tmp_path / "x.png")],
                             capture_output=True, text=True, check=False)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1


def test_the_index_cut_reaches_as_far_down_the_card_as_the_model_was_trained_on(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    # A card seen straight on at 4 px/mm with a suit mark 29 mm down its left edge: inside a
    # 26 x 32 mm cut (aisleriot tango prints its suit that low), outside a 26 mm square.
    image = np.full((400, 300, 3), 255, np.uint8)
    corners = np.array([[10, 10], [262, 10], [262, 362], [10, 362]], float)
    image[10 + 27 * 4:10 + 31 * 4, 10 + 8 * 4:10 + 14 * 4] = 0
    for index_mm, dark in (((26.0, 32.0), True), ((26.0, 26.0), False)):
        first, _ = index_crops(image, corners, index_mm)
        assert bool((first < 100).any()) is dark
    # The reader cuts what its model's metadata says (models from before say nothing).
    model = tmp_path / "index.onnx"
    model.write_bytes(b"")
    meta = json.loads((MODELS_DIR / "card_index.json").read_text())
    meta.pop("members", None)
    for recorded, expected in (([26, 32], (26.0, 32.0)), (None, LEGACY_INDEX_MM)):
        meta.pop("index_mm", None)
        if recorded:
            meta["index_mm"] = recorded
        model.with_suffix(".json").write_text(json.dumps(meta))
        assert CardIdentifier(model).index_mm == expected


@pytest.mark.parametrize(("case", "needle"), [
    ("tiny", "too small to show a card"),
    ("annotate_unknown_type", "name it .png or .jpg"),
    ("calibration_for_other_size", "the calibration is for 960x540 images"),
])
def test_detect_refuses_what_it_cannot_do_in_one_line(tmp_path, case, needle) -> None:  # type: ignore[no-untyped-def]
    import subprocess
    import sys
    from pathlib import Path

    import cv2

    root = Path(__file__).resolve().parents[2]
    image = np.full((8, 8, 3), 90, np.uint8) if case == "tiny" else _two_cards()[0]
    if case == "calibration_for_other_size":
        image = cv2.resize(image, (640, 360))
    path = tmp_path / "table.png"
    cv2.imwrite(str(path), image)
    extra = {"tiny": [],
             "annotate_unknown_type": ["--annotate", str(tmp_path / "annotated")],
             "calibration_for_other_size": [
                 "--calibration", str(root / "sample_footage" / "shove" / "calibration.json")]}
    done = subprocess.run([sys.executable, "-m", "referee", "detect", str(path), "--json",
                           *extra[case]], capture_output=True, text=True, check=False)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and needle in done.stderr, \
        done.stderr
    assert "Traceback" not in done.stderr


class _Reads:
    """A stand-in identifier: reads outlines by where their centre lies (x < 480: 7H)."""

    reads_faces = False  # (no face model: ``detect`` reads no loose box's face as a back)

    def identify_many(self, image, cards, uncovered=None, *, quick=False, clear=None):  # type: ignore[no-untyped-def]
        from referee.detection.cards import CardReading

        out = []
        for corners in cards:
            left = float(np.asarray(corners, float)[:, 0].mean()) < 480
            out.append(CardReading("7H", 0.9, (("7H", 0.9), ("7H", 0.8))) if left else
                       CardReading("??", 0.45, (("QC", 0.45), ("other", 0.9))))
        return out

    def moved(self, reading, corners):  # type: ignore[no-untyped-def]
        # (the outlines readings were moved to, in turn: ``moved_to``)
        self.__dict__.setdefault("moved_to", []).append(corners)
        return reading  # (as the real one: the same reading; no face here to cut anew)

    def confirm(self, readings, uncovered=None, *, ensemble=True, clear=None, check_jokers=True):  # type: ignore[no-untyped-def]
        from referee.detection.cards import joker_checked

        # (as the real one: a joker one corner alone reads unsure is ?? when checked)
        return [joker_checked(r) for r in readings] if check_jokers else list(readings)


class _Finds:
    """A stand-in detector that finds one card where the right-hand card lies (``given``),
    and after it what ``meanwhile`` finds (the shape finder's outlines), as the real one."""

    def __init__(self, corners: np.ndarray) -> None:
        self.corners = corners
        self.score = 0.6

    def find(self, image, min_score=0.25, slopes=None, mirrored=False, split=False,  # type: ignore[no-untyped-def]
             meanwhile=None):
        return [*self.given(image, min_score, slopes, mirrored, split),
                *(meanwhile() if meanwhile is not None else [])]

    def given(self, image, min_score=0.25, slopes=None, mirrored=False, split=False):  # type: ignore[no-untyped-def]
        from referee.detection.outlines import Outline

        return [Outline(self.corners, self.score, learned=True)]


def test_an_unreadable_outline_needs_the_detector_s_word() -> None:
    # Two cards the shape finder outlines; the right-hand one reads ??. Found by shape
    # alone, a ?? is mostly a box or paper on real photos, so it is dropped; the same
    # outline found by the learned detector is a card that could not be read.
    image, cards = _two_cards()
    by_shape = detect(image, _Reads())  # type: ignore[arg-type]
    assert [c.card for c in by_shape.cards] == ["7H"]
    right = max(cards, key=lambda c: float(c[:, 0].mean()))
    both = detect(image, _Reads(), _Finds(right))  # type: ignore[arg-type]
    assert sorted(c.card for c in both.cards) == ["7H", "??"]


class _ReadsTable(_Reads):
    """Reads every outline's corners as table (a design never seen)."""

    def identify_many(self, image, cards, uncovered=None, *, quick=False, clear=None):  # type: ignore[no-untyped-def]
        from referee.detection.cards import CardReading

        return [CardReading("??", 0.2, (("other", 0.9), ("other", 0.8))) for _ in cards]


def test_detect_asks_the_detector_for_faint_and_mirrored_boxes() -> None:
    from referee.detection.learned import FAINT_SCORE

    asked: list[tuple[float, bool, bool]] = []

    class _Records(_Finds):
        def given(self, image, min_score=0.25, slopes=None, mirrored=False, split=False):  # type: ignore[no-untyped-def]
            asked.append((min_score, mirrored, split))
            return super().given(image)

    image, cards = _two_cards()
    detect(image, _Reads(), _Records(cards[0]))  # type: ignore[arg-type]
    assert asked == [(FAINT_SCORE, True, True)]


@pytest.mark.parametrize(("score", "kept"), [(0.9, True), (0.5, False)])
def test_a_box_the_detector_is_sure_of_is_a_card_whatever_its_corners_read(
        score: float, kept: bool) -> None:
    image, cards = _two_cards()
    detector = _Finds(cards[0])
    detector.score = score
    found = detect(image, _ReadsTable(), detector)  # type: ignore[arg-type]
    assert [c.card for c in found.cards] == (["??"] if kept else [])


class _FaceNames(_ReadsTable):
    """Corners read as table (a design never seen); the face, read last, names ``card``."""

    def __init__(self, card: str) -> None:
        self.card = card

    def confirm(self, readings, uncovered=None, *, ensemble=True, clear=None, check_jokers=True):  # type: ignore[no-untyped-def]
        from dataclasses import replace

        return [replace(r, card=self.card, confidence=0.7) for r in readings]


class _Sure:
    """A stand-in verifier this sure that each outline holds no card."""

    def __init__(self, doubt: float) -> None:
        self.doubt = doubt

    def not_card(self, image, outlines):  # type: ignore[no-untyped-def]
        return [self.doubt] * len(outlines)


@pytest.mark.parametrize(("score", "doubt", "named", "kept"), [
    (0.7, 0.05, "4C", True),  # the verifier vouches for it, and it is read at last
    (0.7, 0.05, "??", False),  # vouched for, but never read: clutter on real photos
    # read a joker with no corner reading one: ?? (``cards.joker_checked``), so dropped too
    (0.7, 0.05, "JK", False),
    (0.7, 0.3, "4C", False),  # the verifier not sure enough
    (0.5, 0.05, "4C", False),  # the detector not sure enough
])
def test_a_fairly_sure_box_unread_by_its_corners_is_kept_on_the_verifier_s_word(
        score: float, doubt: float, named: str, kept: bool) -> None:
    from referee.detection.detect import SURE_CARD_SCORE, VOUCHED_DOUBT, VOUCHED_SCORE

    assert VOUCHED_SCORE <= 0.7 < SURE_CARD_SCORE and VOUCHED_SCORE > 0.5
    assert 0.05 <= VOUCHED_DOUBT < 0.3
    image, cards = _two_cards()
    detector = _Finds(cards[0])
    detector.score = score
    found = detect(image, _FaceNames(named), detector)  # type: ignore[arg-type]
    assert found.cards == []  # without a verifier, corners read as table are no card
    found = detect(image, _FaceNames(named), detector,  # type: ignore[arg-type]
                   verifier=_Sure(doubt))  # type: ignore[arg-type]
    assert [c.card for c in found.cards] == ([named] if kept else [])


def test_a_box_the_frame_cuts_is_not_kept_on_the_verifier_s_word() -> None:
    # The verifier sees no whole face of a card the picture's edge cuts by more than a tenth
    # (JUDGED_SHARE), so it vouches for none: read as table, such a box stays dropped below
    # SURE_CARD_SCORE.
    image, cards = _two_cards()
    right = _cut_by(max(cards, key=lambda c: float(c[:, 0].mean())), image, 0.3)
    detector = _Finds(right)
    detector.score = 0.7
    verifier = _Sure(0.0)
    found = detect(image, _FaceNames("4C"), detector, verifier=verifier)  # type: ignore[arg-type]
    assert found.cards == []
    detector = _Finds(max(cards, key=lambda c: float(c[:, 0].mean())))  # the same, in the frame
    detector.score = 0.7
    found = detect(image, _FaceNames("4C"), detector, verifier=verifier)  # type: ignore[arg-type]
    assert [c.card for c in found.cards] == ["4C"]


class _ReadsAs(_Reads):
    """Reads every outline as one card code, this sure."""

    def __init__(self, card: str, confidence: float) -> None:
        self.card, self.confidence = card, confidence

    def identify_many(self, image, cards, uncovered=None, *, quick=False, clear=None):  # type: ignore[no-untyped-def]
        from referee.detection.cards import CardReading

        corner = (self.card, self.confidence)
        return [CardReading(self.card, self.confidence, (corner, corner)) for _ in cards]


class _FindsFaint(_Finds):
    """A detector that finds the card only when asked for boxes as faint as its score."""

    def given(self, image, min_score=0.25, slopes=None, mirrored=False, split=False):  # type: ignore[no-untyped-def]
        return super().given(image) if self.score >= min_score else []


@pytest.mark.parametrize(("card", "confidence", "kept"), [
    ("QC", 0.95, True), ("QC", 0.8, False), ("back", 0.99, False), ("JK", 0.99, False)])
def test_a_faint_box_is_a_card_only_when_read_for_sure_as_a_face_up_card(
        card: str, confidence: float, kept: bool) -> None:
    from referee.detection.learned import FAINT_SCORE, MIN_SCORE

    image, cards = _two_cards()
    detector = _FindsFaint(cards[0])
    detector.score = (FAINT_SCORE + MIN_SCORE) / 2
    found = detect(image, _ReadsAs(card, confidence), detector,  # type: ignore[arg-type]
                   shapes_too=False)
    assert [c.card for c in found.cards] == ([card] if kept else [])
    # The same readings of a box scored MIN_SCORE are all kept
    detector.score = MIN_SCORE
    found = detect(image, _ReadsAs(card, confidence), detector,  # type: ignore[arg-type]
                   shapes_too=False)
    assert [c.card for c in found.cards] == [card]
    # With no card model nothing reads a faint box, so it is not reported
    detector.score = (FAINT_SCORE + MIN_SCORE) / 2
    assert detect(image, None, detector, shapes_too=False).cards == []  # type: ignore[arg-type]


class _FaceSaysBack(_ReadsAs):
    """Corners read as a queen of clubs, sure; the face then says it is a back."""

    def confirm(self, readings, uncovered=None, *, ensemble=True, clear=None, check_jokers=True):  # type: ignore[no-untyped-def]
        from referee.detection.cards import CardReading

        return [CardReading("back", 0.99, r.corners) for r in readings]


def test_a_faint_box_is_judged_by_its_corners_and_then_read_by_its_face() -> None:
    from referee.detection.learned import FAINT_SCORE, MIN_SCORE

    image, cards = _two_cards()
    detector = _FindsFaint(cards[0])
    detector.score = (FAINT_SCORE + MIN_SCORE) / 2
    found = detect(image, _FaceSaysBack("QC", 0.99), detector,  # type: ignore[arg-type]
                   shapes_too=False)
    assert [c.card for c in found.cards] == ["back"]
    found = detect(image, _FaceSaysBack("QC", 0.85), detector,  # type: ignore[arg-type]
                   shapes_too=False)
    assert found.cards == []  # its corners are not sure enough of a face-up card


class _ReadsOnCard(_Reads):
    """Reads an outline lying on ``card`` (IoU at least 0.9) as ``on`` (a king of hearts,
    sure); one off it as ``??`` (``off_confidence`` sure) with corners reading ``off``."""

    def __init__(self, card: np.ndarray, off: tuple[tuple[str, float], ...],
                 on: tuple[str, float] = ("KH", 0.97)) -> None:
        self.card, self.off, self.on = card, off, on
        self.off_confidence = 0.4

    def identify_many(self, image, cards, uncovered=None, *, quick=False, clear=None):  # type: ignore[no-untyped-def]
        from referee.detection.cards import CardReading
        from referee.detection.outlines import quad_iou

        return [CardReading(*self.on, (self.on, self.on))
                if quad_iou(np.asarray(c, float), self.card) >= 0.9
                else CardReading("??", self.off_confidence, self.off)  # type: ignore[arg-type]
                for c in cards]


class _CornersOn:
    """A stand-in corner model that reads ``card``'s corners round every outline, and notes
    the outlines it was given."""

    def __init__(self, card: np.ndarray) -> None:
        self.card = card
        self.given: list[np.ndarray] = []

    def corners(self, image, outlines):  # type: ignore[no-untyped-def]
        self.given.extend(np.asarray(o, float) for o in outlines)
        return [self.card.copy() for _ in outlines]


class _FindsTwo(_Finds):
    """A detector that finds ``corners`` at ``score`` and ``sure`` at 0.9."""

    def __init__(self, corners: np.ndarray, sure: np.ndarray) -> None:
        super().__init__(corners)
        self.sure = sure

    def given(self, image, min_score=0.25, slopes=None, mirrored=False, split=False):  # type: ignore[no-untyped-def]
        from referee.detection.outlines import Outline

        return [*super().given(image), Outline(self.sure, 0.9, learned=True)]


OFF_KING = (("KH", 0.4), ("other", 0.9))


class _SureOn:
    """A stand-in verifier sure an outline on ``card`` (IoU at least 0.9) holds one
    (``doubt``) and that any other holds none."""

    def __init__(self, card: np.ndarray, doubt: float) -> None:
        self.card, self.doubt = card, doubt

    def not_card(self, image, outlines):  # type: ignore[no-untyped-def]
        from referee.detection.outlines import quad_iou

        return [self.doubt if quad_iou(np.asarray(o, float), self.card) >= 0.9 else 0.9
                for o in outlines]


@pytest.mark.parametrize(("off", "on", "cornered", "doubt", "kept"), [
    (OFF_KING, ("KH", 0.97), True, 0.01, True),  # outlined again on the card, read there
    (OFF_KING, ("KH", 0.97), False, 0.01, False),  # no corner model: nothing outlines it again
    (OFF_KING, ("KH", 0.97), True, 0.9, False),  # the verifier sure it holds no card
    (OFF_KING, ("KH", 0.8), True, 0.01, False),  # read there, but not for sure
    (OFF_KING, ("back", 0.99), True, 0.01, False),  # read there as no face-up card
    ((("other", 0.9), ("other", 0.8)), ("KH", 0.97), True, 0.01, False),  # no corner a card
    ((("back", 0.9), ("other", 0.8)), ("KH", 0.97), True, 0.01, False),  # a back's
    ((("JK", 0.9), ("other", 0.8)), ("KH", 0.97), True, 0.01, False),  # a joker's
])
def test_a_faint_box_off_a_card_is_outlined_again_and_read_there(
        off: tuple[tuple[str, float], ...], on: tuple[str, float], cornered: bool, doubt: float,
        kept: bool) -> None:
    # Session 45: a king on a tiled floor, boxed only faintly and a few pixels off, read as
    # no card there (real photos). Outlined again by the corner model, it reads for sure.
    from referee.detection.learned import FAINT_SCORE, MIN_SCORE
    from referee.detection.outlines import quad_iou

    image, cards = _two_cards()
    right = max(cards, key=lambda c: float(c[:, 0].mean()))
    shifted = right + np.array([6.0, 4.0])
    assert 0.7 < quad_iou(shifted, right) < 0.9
    detector = _FindsFaint(shifted)
    detector.score = (FAINT_SCORE + MIN_SCORE) / 2
    model = _CornersOn(right) if cornered else None
    found = detect(image, _ReadsOnCard(right, off, on), detector,  # type: ignore[arg-type]
                   shapes_too=False, verifier=_SureOn(right, doubt),  # type: ignore[arg-type]
                   corner_model=model)  # type: ignore[arg-type]
    assert [c.card for c in found.cards] == (["KH"] if kept else [])
    if kept:  # the verifier judged it there (it is sure the box off the card holds none)
        assert quad_iou(np.array(found.cards[0].corners), right) > 0.99
        # (outlined and read once: the corner model's two passes, not four)
        assert model is not None and len(model.given) == 2
    # Without a verifier to judge it, it is not looked at again
    found = detect(image, _ReadsOnCard(right, off), detector,  # type: ignore[arg-type]
                   shapes_too=False, corner_model=_CornersOn(right))  # type: ignore[arg-type]
    assert found.cards == []


def test_a_faint_box_on_a_card_already_outlined_is_not_looked_at_again() -> None:
    from referee.detection.learned import FAINT_SCORE, MIN_SCORE

    image, cards = _two_cards()
    right = max(cards, key=lambda c: float(c[:, 0].mean()))
    shifted = right + np.array([6.0, 4.0])
    detector = _FindsTwo(shifted, right)
    detector.score = (FAINT_SCORE + MIN_SCORE) / 2
    model = _CornersOn(right)
    found = detect(image, _ReadsOnCard(right, OFF_KING), detector,  # type: ignore[arg-type]
                   shapes_too=False, verifier=_Sure(0.01),  # type: ignore[arg-type]
                   corner_model=model)  # type: ignore[arg-type]
    assert [c.card for c in found.cards] == ["KH"]
    assert model.given and not any(np.allclose(o, shifted) for o in model.given)
    # The same faint box alone is looked at again (what the test above keeps)
    detector = _FindsTwo(shifted, right - np.array([300.0, 0.0]))
    detector.score = (FAINT_SCORE + MIN_SCORE) / 2
    model = _CornersOn(right)
    detect(image, _ReadsOnCard(right, OFF_KING), detector,  # type: ignore[arg-type]
           shapes_too=False, verifier=_Sure(0.01), corner_model=model)  # type: ignore[arg-type]
    assert any(np.allclose(o, shifted) for o in model.given)


@pytest.mark.parametrize(("confidence", "kept"), [(0.95, False), (0.99, True)])
def test_an_end_of_a_merged_box_looked_at_again_needs_a_surer_reading(
        confidence: float, kept: bool) -> None:
    # An end of a box squarer than a card needs SPLIT_SURE (more than FAINT_SURE) to be a
    # card, when first read and when looked at again (till session 59 it was never looked
    # at again).
    from referee.detection.detect import FAINT_SURE, SPLIT_SURE

    assert FAINT_SURE <= 0.95 < SPLIT_SURE <= 0.99
    image, cards = _two_cards()
    right = max(cards, key=lambda c: float(c[:, 0].mean()))
    model = _CornersOn(right)
    found = detect(image, _ReadsOnCard(right, OFF_KING, ("KH", confidence)),  # type: ignore[arg-type]
                   _FindsSplit(right + np.array([6.0, 4.0])), shapes_too=False,  # type: ignore[arg-type]
                   verifier=_SureOn(right, 0.01), corner_model=model)  # type: ignore[arg-type]
    assert model.given  # looked at again
    assert [c.card for c in found.cards] == (["KH"] if kept else [])


def test_a_card_boxed_with_its_neighbour_is_found_by_its_end_of_the_merged_box() -> None:
    # The detector boxes a card and the strip of another beside it as one box squarer than a
    # card (read ??), and splits off the card's end; that end, outlined again on the card,
    # reads as it for sure and is the card (real photos: a nine over an ace, session 59).
    from referee.detection.learned import SPLIT_SCORE
    from referee.detection.outlines import quad_iou

    image, cards = _two_cards()
    right = max(cards, key=lambda c: float(c[:, 0].mean()))
    # (the box reaches 60% of the card's first side beyond it: squarer than a card)
    along = right[1] - right[0]
    merged = right + np.outer([-1.0, 0.0, 0.0, -1.0], 0.6 * along)
    end = right + np.array([6.0, 4.0])
    assert quad_iou(merged, end) >= 0.5 and quad_iou(merged, right) < 0.7

    class _FindsMerged(_Finds):
        def given(self, image, min_score=0.25, slopes=None, mirrored=False, split=False):  # type: ignore[no-untyped-def]
            return [Outline(merged, 0.6, learned=True),
                    Outline(end, SPLIT_SCORE, learned=True, split=True)]

    model = _CornersOn(right)
    found = detect(image, _ReadsOnCard(right, OFF_KING, ("KH", 0.99)),  # type: ignore[arg-type]
                   _FindsMerged(right), shapes_too=False, verifier=_Sure(0.01),  # type: ignore[arg-type]
                   corner_model=model)  # type: ignore[arg-type]
    assert [c.card for c in found.cards] == ["KH"]
    assert quad_iou(np.array(found.cards[0].corners), right) > 0.9


@pytest.mark.parametrize(("outside", "kept"), [(0.05, True), (0.12, False)])
def test_a_faint_box_outlined_again_past_the_picture_s_edge_is_kept_only_if_judged(
        outside: float, kept: bool) -> None:
    # The verifier judges an outline at least JUDGED_SHARE in the picture; a faint box
    # outlined again beyond that is not taken, unjudged.
    from referee.detection.learned import FAINT_SCORE, MIN_SCORE
    from referee.detection.outlines import quad_iou

    image, _ = _two_cards()
    upright = np.array([[0.0, 150.0], [100.0, 150.0], [100.0, 290.0], [0.0, 290.0]])
    card = _cut_by(upright, image, outside)  # (the stand-ins read corners, not the picture)
    box = card - np.array([card[:, 0].max() - (image.shape[1] - 5.0), 0.0])  # in the frame
    assert quad_iou(box, card) > 0.7
    detector = _FindsFaint(box)
    detector.score = (FAINT_SCORE + MIN_SCORE) / 2
    found = detect(image, _ReadsOnCard(card, OFF_KING), detector,  # type: ignore[arg-type]
                   shapes_too=False, verifier=_SureOn(card, 0.01),  # type: ignore[arg-type]
                   corner_model=_CornersOn(card))  # type: ignore[arg-type]
    assert [c.card for c in found.cards] == (["KH"] if kept else [])


def test_only_a_faint_box_is_looked_at_again() -> None:
    # A box scored from MIN_SCORE up is read as it is: what the faint boxes gave on the real
    # photos, the others did not add to (session 45, models/README.md). (Read under
    # MIN_CARDNESS, this one is no card.)
    from referee.detection.detect import MIN_CARDNESS
    from referee.detection.learned import MIN_SCORE

    image, cards = _two_cards()
    right = max(cards, key=lambda c: float(c[:, 0].mean()))
    detector = _FindsFaint(right + np.array([6.0, 4.0]))
    detector.score = MIN_SCORE
    model = _CornersOn(right)
    reader = _ReadsOnCard(right, OFF_KING)
    reader.off_confidence = MIN_CARDNESS - 0.1
    found = detect(image, reader, detector, shapes_too=False,  # type: ignore[arg-type]
                   verifier=_Sure(0.01), corner_model=model)  # type: ignore[arg-type]
    assert found.cards == [] and model.given == []


class _FindsSplit(_Finds):
    """A detector whose one box is an end of a box squarer than a card."""

    def given(self, image, min_score=0.25, slopes=None, mirrored=False, split=False):  # type: ignore[no-untyped-def]
        from referee.detection.learned import SPLIT_SCORE
        from referee.detection.outlines import Outline

        return [Outline(self.corners, SPLIT_SCORE, learned=True, split=True)]


@pytest.mark.parametrize(("confidence", "kept"), [(0.95, False), (0.98, True)])
def test_an_end_of_a_merged_box_needs_a_surer_reading_than_a_faint_box(
        confidence: float, kept: bool) -> None:
    image, cards = _two_cards()
    found = detect(image, _ReadsAs("QC", confidence), _FindsSplit(cards[0]),  # type: ignore[arg-type]
                   shapes_too=False)
    assert [c.card for c in found.cards] == (["QC"] if kept else [])


def test_a_back_the_shape_finder_alone_outlines_needs_a_detector_box_there() -> None:
    # Flyers, books and pages read as backs, and only the shape finder outlines them.
    image, cards = _two_cards()
    assert detect(image, _ReadsAs("back", 0.99)).cards == []  # type: ignore[arg-type]
    right = max(cards, key=lambda c: float(c[:, 0].mean()))
    faint = _FindsFaint(right)  # a box the detector is not sure of is word enough
    from referee.detection.learned import FAINT_SCORE, MIN_SCORE

    faint.score = (FAINT_SCORE + MIN_SCORE) / 2
    found = detect(image, _ReadsAs("back", 0.99), faint)  # type: ignore[arg-type]
    assert len(found.cards) == 1 and found.cards[0].card == "back"
    assert np.mean(np.array(found.cards[0].corners)[:, 0]) == pytest.approx(
        float(right[:, 0].mean()), abs=5)
    # a face-up card the shape finder alone outlines is kept as before
    assert sorted(c.card for c in detect(image, _ReadsAs("QC", 0.99)).cards) == ["QC", "QC"]  # type: ignore[arg-type]


class _ReadsBy(_Reads):
    """Reads each outline by its width (``axis`` 0) or height (1), in pixels: a card code and a
    confidence for each, both corners alike; one of a size not given as ``unlisted`` (None:
    a KeyError), for an outline ``detect`` moved onto the plane the cards seen whole tell
    (``card_plane``)."""

    def __init__(self, by_size: dict[int, tuple[str, float]], axis: int = 0,
                 unlisted: tuple[str, float] | None = None) -> None:
        self.by_size = by_size
        self.axis = axis
        self.unlisted = unlisted

    def identify_many(self, image, cards, uncovered=None, *, quick=False, clear=None):  # type: ignore[no-untyped-def]
        from referee.detection.cards import CardReading

        out = []
        for corners in cards:
            size = round(float(np.ptp(np.asarray(corners, float)[:, self.axis])))
            card, confidence = self.by_size[size] if self.unlisted is None \
                else self.by_size.get(size, self.unlisted)
            out.append(CardReading(card, confidence, ((card, confidence), (card, confidence))))
        return out


class _FindsThese(_Finds):
    def __init__(self, boxes: list[np.ndarray]) -> None:
        self.boxes = boxes

    def given(self, image, min_score=0.25, slopes=None, mirrored=False, split=False):  # type: ignore[no-untyped-def]
        from referee.detection.outlines import Outline

        return [Outline(box, 0.6, learned=True) for box in self.boxes]


class _FindsOutlines(_Finds):
    def __init__(self, outlines: list[Outline]) -> None:
        self.outlines = outlines

    def given(self, image, min_score=0.25, slopes=None, mirrored=False, split=False):  # type: ignore[no-untyped-def]
        return self.outlines


class _ReadsIf(_Reads):
    """Reads an outline for which ``test(corners)`` holds as one card, any other as another."""

    def __init__(self, test: Callable[[np.ndarray], bool], yes: tuple[str, float],
                 no: tuple[str, float]) -> None:
        self.test, self.yes, self.no = test, yes, no

    def identify_many(self, image, cards, uncovered=None, *, quick=False, clear=None):  # type: ignore[no-untyped-def]
        from referee.detection.cards import CardReading

        out = []
        for corners in cards:
            card, confidence = self.yes if self.test(np.asarray(corners, float)) else self.no
            out.append(CardReading(card, confidence, ((card, confidence), (card, confidence))))
        return out


def _near(corners: np.ndarray) -> Callable[[np.ndarray], bool]:
    """Whether an outline lies within 2 px of ``corners`` (in any order)."""
    return lambda other: bool(np.linalg.norm(other[:, None] - corners[None], axis=2)
                              .min(axis=1).max() < 2)


@pytest.mark.parametrize(("near", "far", "read"), [
    (("QS", 0.95), ("QS", 0.7), ("QS", 0.95)),  # the same card, read surer or not: read there
    (("QS", 0.5), ("QS", 0.7), ("QS", 0.5)),
    (("QH", 0.9), ("QS", 0.7), ("QH", 0.9)),    # another card, read surer: read there
    (("QH", 0.65), ("QS", 0.7), ("QS", 0.7)),   # another card, read less surely: as first read
])
def test_a_polished_outline_is_kept_and_read_again_there_unless_it_reads_worse(
        near: tuple[str, float], far: tuple[str, float], read: tuple[str, float]) -> None:
    image = np.full((480, 640, 3), 60, np.uint8)
    card = np.asarray(cv2.boxPoints(((320.0, 240.0), (126.0, 176.0), 20.0)), np.float64)
    cv2.fillPoly(image, [np.round(card).astype(np.int32)], (235, 235, 235), cv2.LINE_AA)
    box = np.asarray(cv2.boxPoints(((320.0, 240.0), (126.0 * 1.035, 176.0 * 1.058), 20.0)),
                     np.float64)
    astray = np.asarray(cv2.boxPoints(((326.0, 236.0), (140.0, 150.0), 24.0)), np.float64)
    # an outline that missed the card's edges, tightened from a box as much larger than the
    # card as the detector's median box
    finder = _FindsOutlines([Outline(astray, 0.6, learned=True, box=box)])
    reader = _ReadsIf(_near(card), near, far)
    found = detect(image, reader, finder, shapes_too=False)  # type: ignore[arg-type]
    (seen,) = found.cards
    # The outline on the card's edges stays, whatever its corners read (a design never seen
    # may read worse there than from a box askew: session 58, models/README.md).
    assert _iou(np.array(seen.corners), card) > 0.98
    assert (seen.card, seen.confidence) == read
    # a first reading kept is moved there (its face and end bands cut there)
    moved_to = reader.__dict__.get("moved_to", [])
    if read == far:
        (to,) = moved_to
        assert _iou(np.asarray(to, float), card) > 0.98
    else:
        assert moved_to == []


def test_an_outline_lies_on_another_s_card_when_they_overlap_as_one_card() -> None:
    from referee.detection.detect import _onto_another

    card = _rect(100, 100, 126, 176)
    beside = _rect(240, 100, 126, 176)  # a card lying apart from it
    on_it = _rect(110, 105, 126, 176)   # the same card outlined a little off
    assert not _onto_another([Outline(card, 0.9), Outline(beside, 0.9)], 0)
    assert _onto_another([Outline(card, 0.9), Outline(beside, 0.9), Outline(on_it, 0.5)], 0)
    assert _onto_another([Outline(card, 0.9), Outline(on_it, 0.5)], 1)
    assert not _onto_another([Outline(card, 0.9)], 0)  # (not with itself)


def _read(card: str, confidence: float, corner: str | None = None) -> CardReading:
    return CardReading(card, confidence, ((corner or card, confidence), ("other", 0.9)))


def test_an_end_of_a_merged_box_is_looked_at_again_though_the_merged_box_reads_unsure() -> None:
    from referee.detection.detect import _unseen_faint
    from referee.detection.learned import MIN_SCORE

    both = _rect(100, 100, 200, 176)  # two cards side by side, one over the other, boxed as one
    end = _rect(174, 100, 126, 176)   # the right-hand card: an end of that box
    faint = MIN_SCORE / 2
    merged = Outline(both, 0.7, learned=True)
    # its corner reads a face-up card (not for sure: else it would be card-like already)
    seen = _read("??", 0.6, corner="9H")
    for split, looked in ((True, [1]), (False, [])):
        outlines = [merged, Outline(end, faint, learned=True, split=split)]
        assert _unseen_faint(outlines, [_read("??", 0.5), seen], [0]) == looked
    # an end is still hidden by a card-like outline read as a card there
    outlines = [Outline(both, 0.7, learned=True), Outline(end, faint, learned=True, split=True)]
    assert _unseen_faint(outlines, [_read("9H", 0.95), seen], [0]) == []
    # and not looked at when no corner reads a face-up card, nor when not faint
    assert _unseen_faint(outlines, [_read("??", 0.5), _read("??", 0.6, corner="other")],
                         [0]) == []
    outlines[1] = Outline(end, MIN_SCORE, learned=True, split=True)
    assert _unseen_faint(outlines, [_read("??", 0.5), seen], [0]) == []


def _squared_pair(turn: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A card (``under``) and one of the same size lying on it, moved 50 px to the right so
    a strip of the first shows beyond its left side (``turn``: degrees between them), and
    the box round both (the detector outlines such a pair as one); on a dark table."""
    image = np.full((480, 640, 3), 60, np.uint8)
    under = np.asarray(cv2.boxPoints(((283.0, 240.0), (126.0, 176.0), turn)), np.float64)
    top = _rect(270, 152, 126, 176)
    cv2.fillPoly(image, [np.round(under).astype(np.int32)], (235, 235, 235), cv2.LINE_AA)
    cv2.fillPoly(image, [np.round(top).astype(np.int32)], (205, 205, 205), cv2.LINE_AA)
    both = cv2.boxPoints(cv2.minAreaRect(np.vstack([under, top]).astype(np.float32)))
    return image, under, top, np.asarray(both, np.float64)


@pytest.mark.parametrize("turn", [0.0, 8.0])
def test_a_card_under_another_is_outlined_from_the_strip_it_shows(turn: float) -> None:
    image, under, top, both = _squared_pair(turn)
    slopes = gradients(image)
    found = under_cards(slopes, top, [both])
    assert found and max(_iou(outline, under) for outline in found) > 0.9
    # it is looked for only beyond a side some outline holding the card reaches past
    assert under_cards(slopes, top, [top]) == []
    assert under_cards(slopes, top, [_rect(600, 400, 30, 30)]) == []


def test_a_card_under_another_is_found_in_a_close_up_of_a_large_photo() -> None:
    # The pair seen 14 times as large (a card 1,760 px wide): the strip beyond the top card's
    # side is searched on 24 lines of over 1,400 points each, more than one of OpenCV's maps
    # may hold in a row.
    image, under, top, both = _squared_pair(0.0)
    scale, corner = 14.0, np.array([180.0, 120.0])
    big = cv2.resize(image[120:360, 180:440], None, fx=scale, fy=scale,
                     interpolation=cv2.INTER_LINEAR)
    found = under_cards(gradients(big), (top - corner) * scale, [(both - corner) * scale])
    assert found and max(_iou(outline, (under - corner) * scale) for outline in found) > 0.9


@pytest.mark.parametrize(("under_read", "kept"), [
    (("AH", 0.99), ["AH", "9S"]),  # another card, read for sure: a card under the first
    (("AH", 0.85), ["9S"]),        # not sure enough
    (("9S", 0.99), ["9S"]),        # the card on it again
])
def test_detect_reports_a_card_under_another_read_for_sure_as_another_card(
        under_read: tuple[str, float], kept: list[str]) -> None:
    image, under, top, both = _squared_pair(0.0)
    finder = _FindsOutlines([Outline(top, 0.9, learned=True),
                             Outline(both, 0.3, learned=True)])
    reader = _ReadsIf(lambda corners: _iou(corners, under) > 0.9, under_read, ("9S", 0.99))
    found = detect(image, reader, finder, shapes_too=False)  # type: ignore[arg-type]
    assert sorted(c.card for c in found.cards) == sorted(kept)
    if "AH" in kept:
        (card,) = [c for c in found.cards if c.card == "AH"]
        assert _iou(np.array(card.corners), under) > 0.9
        # what shows of it is the strip beyond the card on it
        (part,) = card.visible
        assert Polygon(part).area == pytest.approx(Polygon(under).difference(
            Polygon(top)).area, rel=0.1)


def _rect(x: float, y: float, w: float, h: float) -> np.ndarray:
    return np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], float)


@pytest.mark.parametrize(("half", "whole", "kept"), [
    (("QS", 0.9), ("QS", 0.99), ["QS"]),          # half a card read as the card: one card
    (("QS", 0.99), ("QS", 0.9), ["QS"]),          # the better read stays, whichever it is
    (("QS", 0.99), ("QH", 0.9), ["QS", "QH"]),    # two cards read apart: both
    (("back", 0.99), ("back", 0.9), ["back", "back"]),  # a pile of backs is no misread
])
def test_a_card_outlined_twice_one_outline_inside_the_other_is_one_card(
        half: tuple[str, float], whole: tuple[str, float], kept: list[str]) -> None:
    image = np.full((600, 900, 3), 90, np.uint8)
    boxes = [_rect(100, 100, 120, 84), _rect(100, 100, 126, 176)]  # the top half, the card
    reader = _ReadsBy({120: half, 126: whole})
    found = detect(image, reader, _FindsThese(boxes), shapes_too=False)  # type: ignore[arg-type]
    assert sorted(c.card for c in found.cards) == sorted(kept)
    if len(kept) == 1:  # the better-read outline is the one kept
        width = 120 if half[1] > whole[1] else 126
        assert np.ptp(np.array(found.cards[0].corners)[:, 0]) == pytest.approx(width)


@pytest.mark.parametrize(("part", "box", "kept"), [
    (("JK", 0.8), _rect(110, 150, 100, 100), ["QH"]),       # its court picture read as a joker
    (("JK", 0.99), _rect(110, 150, 100, 100), ["JK", "QH"]),  # read surer than the card
    (("??", 0.45), _rect(110, 150, 100, 100), ["??", "QH"]),  # unread: it may be a card under
    (("7S", 0.8), _rect(110, 190, 100, 100), ["7S", "QH"]),  # a fifth of it beyond the card
])
def test_part_of_a_card_outlined_inside_it_is_no_card_of_its_own(
        part: tuple[str, float], box: np.ndarray, kept: list[str]) -> None:
    image = np.full((600, 900, 3), 90, np.uint8)
    whole = _rect(100, 100, 126, 176)
    width = int(np.ptp(box[:, 0]))
    reader = _ReadsBy({126: ("QH", 0.95), width: part})
    found = detect(image, reader, _FindsThese([whole, box]), shapes_too=False)  # type: ignore[arg-type]
    assert sorted(c.card for c in found.cards) == sorted(kept)


@pytest.mark.parametrize(("outer", "cards", "kept"), [
    # an outline holding two cards side by side: neither is a part of it (it goes itself:
    # ``_round_two``)
    (("QH", 0.99), 2, ["7H", "QC"]),
    (("back", 0.99), 2, ["7H", "QC"]),  # (the back the cards cover almost whole goes)
    # one card inside an outline read as a back (a back outlined with the card under it)
    (("back", 0.99), 1, ["QC", "back"]),
    (("QH", 0.99), 1, ["QH"]),  # inside one read as a face-up card, it is a part of it
])
def test_cards_inside_an_outline_holding_two_or_read_as_a_back_stay(
        outer: tuple[str, float], cards: int, kept: list[str]) -> None:
    image = np.full((300, 400, 3), (40, 90, 40), np.uint8)
    inner = [_rect(60, 40, 126, 176), _rect(196, 40, 120, 176)][:cards]
    both = _rect(60, 40, 256, 176)
    reader = _ReadsBy({126: ("QC", 0.95), 120: ("7H", 0.95), 256: outer})
    found = detect(image, reader, _FindsThese([*inner, both]),  # type: ignore[arg-type]
                   shapes_too=False)
    assert sorted(c.card for c in found.cards) == kept


class _FaceReads(_ReadsBy):
    """``_ReadsBy`` by height, but an outline whose top lies at a ``by_place`` key is read
    as that card (as sure); what its corners leave ``??`` its face, read last, names
    ``face`` (0.75 sure)."""

    def __init__(self, by_size: dict[int, tuple[str, float]], face: str) -> None:
        super().__init__(by_size, axis=1)
        self.face = face
        self.by_place: dict[int, str] = {}

    def identify_many(self, image, cards, uncovered=None, *, quick=False, clear=None):  # type: ignore[no-untyped-def]
        from dataclasses import replace

        out = super().identify_many(image, cards, uncovered, quick=quick, clear=clear)
        tops = [round(float(np.asarray(c, float)[:, 1].min())) for c in cards]
        return [replace(r, card=self.by_place[top], corners=((self.by_place[top], r.confidence),)
                        * 2) if r.card != "??" and top in self.by_place else r
                for r, top in zip(out, tops, strict=True)]

    def confirm(self, readings, uncovered=None, *, ensemble=True, clear=None, check_jokers=True):  # type: ignore[no-untyped-def]
        from dataclasses import replace

        return [replace(r, card=self.face, confidence=0.75, face=(self.face, 0.75))
                if r.card == "??" else r for r in readings]


@pytest.mark.parametrize(("parts", "face", "kept"), [
    # its corners unread, the whole card's face says QS: the halves are parts of it, though
    # each was read surer
    (["QS", "QS"], "QS", [("QS", 176)]),
    # the face says another card: two cards outlined as one (``_round_two``)
    (["QS", "QS"], "QH", [("QS", 86), ("QS", 86)]),
    # the halves read as two cards, one of them the whole's: two cards, the whole goes
    (["QS", "QH"], "QS", [("QH", 86), ("QS", 86)]),
    # one part alone, read surer than the whole: which is the card is not told
    (["QS"], "QS", [("QS", 86), ("QS", 176)]),
    # jokers: a deck has two, so two side by side may be outlined as one
    (["JK", "JK"], "JK", [("JK", 86), ("JK", 86), ("JK", 176)]),
])
def test_halves_of_a_card_read_as_the_card_they_lie_in_are_no_cards_of_their_own(
        parts: list[str], face: str, kept: list[tuple[str, int]]) -> None:
    whole = _rect(100, 100, 126, 176)
    halves = [_rect(100, 100, 126, 86), _rect(100, 190, 126, 86)][:len(parts)]
    image = np.full((500, 600, 3), (40, 90, 40), np.uint8)
    reader = _FaceReads({176: ("??", 0.5), 86: ("QS", 0.99)}, face)
    reader.by_place = dict(zip((100, 190), parts, strict=False))  # the halves' readings
    found = detect(image, reader, _FindsThese([whole, *halves]),  # type: ignore[arg-type]
                   shapes_too=False)
    assert sorted((c.card, round(float(np.ptp(np.array(c.corners)[:, 1]))))
                  for c in found.cards) == kept


def _kept(boxes: list[np.ndarray], reads: dict[int, tuple[str, float]],
          size: tuple[int, int] = (500, 900),
          unlisted: tuple[str, float] | None = None) -> list[str]:
    """The cards ``detect`` keeps of the learned ``boxes`` on a plain table ``size`` (height,
    width) pixels, each box read by its width (``_ReadsBy``; ``unlisted``: how it reads a
    size not in ``reads``), in sorted order."""
    image = np.full((*size, 3), (40, 90, 40), np.uint8)
    found = detect(image, _ReadsBy(reads, unlisted=unlisted), _FindsThese(boxes),  # type: ignore[arg-type]
                   shapes_too=False)
    return sorted(c.card for c in found.cards)


@pytest.mark.parametrize(("other", "width", "kept"), [
    (("back", 0.99), 240, ["7H", "QC"]),           # a book 1.9 times a card's size: no card
    (("JK", 0.99), 240, ["7H", "QC"]),             # nor read as a joker
    (("back", 0.99), 180, ["7H", "QC", "back"]),   # 1.44 times as large: an angled view
    (("9S", 0.99), 240, ["7H", "9S", "QC"]),       # a face-up card is not judged so
    (("9S", 0.99), 56, ["7H", "QC"]),              # under half a card's size: no card
    (("??", 0.5), 56, ["7H", "QC"]),
    (("back", 0.99), 70, ["7H", "QC", "back"]),    # 0.56 times as large: far off
])
def test_an_outline_much_larger_or_smaller_than_the_cards_near_it_is_no_card(
        other: tuple[str, float], width: int, kept: list[str]) -> None:
    cards = [_rect(60, 40, 126, 176), _rect(60, 260, 124, 174)]
    third = _rect(400, 60, width, round(width * 88 / 63))  # a card's shape, any size
    assert _kept([*cards, third], {126: ("QC", 0.95), 124: ("7H", 0.95), width: other}) == kept


class _OneCorner:
    """Mixed in before a stand-in reader: the second corner of each outline it reads reads
    as no card."""

    def identify_many(self, image, cards, uncovered=None, *, quick=False, clear=None):  # type: ignore[no-untyped-def]
        return [replace(r, corners=(r.corners[0], ("other", 0.99)))
                for r in super().identify_many(image, cards, uncovered, quick=quick)]


class _ReadsByOneCorner(_OneCorner, _ReadsBy):
    """As ``_ReadsBy``, but the second corner of each outline reads as no card."""


@pytest.mark.parametrize(("joker", "width", "top", "kept"), [
    (JOKER_CORNER_SURE - 0.05, 125, 60, ["7H", "??", "QC"]),  # one corner: not sure enough
    (JOKER_CORNER_SURE, 125, 60, ["7H", "JK", "QC"]),
    # much larger than the cards near it: as a joker, no card
    (JOKER_CORNER_SURE - 0.05, 240, 60, ["7H", "QC"]),
    # cut by the picture, overlapping nothing: as a ??, no card
    (JOKER_CORNER_SURE - 0.05, 125, 420, ["7H", "QC"]),
    (JOKER_CORNER_SURE, 125, 420, ["7H", "JK", "QC"]),
])
def test_a_joker_one_corner_reads_unsure_is_judged_as_both_and_reported_unsure(
        joker: float, width: int, top: int, kept: list[str]) -> None:
    boxes = [_rect(60, 40, 126, 176), _rect(60, 260, 124, 174),
             _rect(400, top, width, round(width * 88 / 63))]
    reads = {126: ("QC", 0.95), 124: ("7H", 0.95), width: ("JK", joker)}
    image = np.full((500, 900, 3), (40, 90, 40), np.uint8)
    # (the third cut by the picture shows one end: on the plane that end and the two cards
    # tell, ``ends_plane``, it is moved as a card's shape and read again, as it was)
    found = detect(image, _ReadsByOneCorner(reads, unlisted=reads[width]),  # type: ignore[arg-type]
                   _FindsThese(boxes), shapes_too=False)
    assert sorted(c.card for c in found.cards) == sorted(kept)


def test_only_cards_read_for_sure_measure_the_others() -> None:
    boxes = [_rect(60, 40, 126, 176), _rect(60, 260, 124, 174), _rect(400, 60, 56, 78)]
    for sure, kept in ((0.95, ["7H", "QC"]), (0.85, ["7H", "QC", "back"])):
        assert _kept(boxes, {126: ("QC", sure), 124: ("7H", sure), 56: ("back", 0.99)}) == kept


def test_a_large_back_is_compared_with_the_cards_nearest_it() -> None:
    # An angled view: cards near the camera (below) look twice as large as far ones.
    far = [_rect(40 + 70 * k, 20, 60, 84) for k in range(5)]
    near = [_rect(300 + 130 * k, 450, 122, 171) for k in range(2)]
    back = _rect(40, 400, 130, 182)  # a near card's size, twice most cards' (the far ones)
    reads = {60: ("2C", 0.95), 122: ("3C", 0.95), 130: ("back", 0.99)}
    # (the five far cards tell a plane the near ones and the back are no card's shape on:
    # they are moved, and read again there as nothing)
    unread = ("??", 0.0)
    assert _kept([*far, *near, back], reads, (700, 1000), unread).count("back") == 1
    # with the near cards gone, only the far ones to compare with: no card
    assert "back" not in _kept([*far, back], reads, (700, 1000), unread)


@pytest.mark.parametrize(("read", "width", "kept"), [
    (("JD", 0.7), 256, ["7H", "QC"]),  # (real photos: a jack beside a nine of diamonds)
    (("JK", 0.9), 256, ["7H", "QC"]),
    (("??", 0.5), 256, ["7H", "QC"]),
    (("JD", 0.7), 320, ["7H", "JD", "QC"]),  # the two cover 77% of it: something else too
])
def test_two_cards_side_by_side_outlined_as_one_are_no_third_card(
        read: tuple[str, float], width: int, kept: list[str]) -> None:
    cards = [_rect(60, 40, 126, 176), _rect(196, 40, 120, 176)]
    both = _rect(60, 40, width, 176)
    assert _kept([*cards, both], {126: ("QC", 0.95), 120: ("7H", 0.95), width: read},
                 (300, 440)) == kept


def test_a_card_under_two_others_is_not_taken_for_them_outlined_as_one() -> None:
    # Two cards lie over most of a third, each more than half on it: a card's size, it is a
    # card of its own.
    under, left, right = _rect(100, 100, 126, 176), _rect(39, 100, 124, 174), \
        _rect(162, 100, 122, 172)
    assert _kept([under, left, right], {126: ("5S", 0.9), 124: ("QC", 0.95),
                                        122: ("7H", 0.95)}, (400, 500)) == ["5S", "7H", "QC"]


@pytest.mark.parametrize(("read", "box", "kept"), [
    (("??", 0.5), _rect(400, 420, 120, 168), ["QC"]),        # cut by the picture, alone
    # overlapping only what is no card (under half a card's size: ``_sized``)
    (("??", 0.5), [_rect(400, 420, 120, 168), _rect(380, 400, 40, 56)], ["QC"]),
    (("??", 0.5), _rect(400, 300, 120, 168), ["??", "QC"]),  # in the picture: a card unread
    (("??", 0.5), _rect(150, 420, 120, 168), ["??", "QC"]),  # on or under a card
    (("9S", 0.95), _rect(400, 420, 120, 168), ["9S", "QC"]),  # read: a card the picture cuts
])
def test_an_unread_outline_the_picture_cuts_is_no_card_unless_it_overlaps_one(
        read: tuple[str, float], box: np.ndarray | list[np.ndarray], kept: list[str]) -> None:
    card = _rect(60, 300, 126, 176)  # in the picture, 500 px high
    boxes = box if isinstance(box, list) else [box]
    assert _kept([card, *boxes], {126: ("QC", 0.95), 120: read, 40: ("9S", 0.95)}) == kept


def test_detect_reports_what_shows_of_a_card_another_lies_on() -> None:
    image, quads, visible = _pair("QS", "7H")
    found = detect(image, _ReadsAs("QS", 0.99), _FindsThese(quads),  # type: ignore[arg-type]
                   shapes_too=False)
    assert len(found.cards) == 2
    for quad, share in zip(quads, visible, strict=True):
        (card,) = [c for c in found.cards if _iou(np.array(c.corners), quad) > 0.95]
        shows = sum(Polygon(part).area for part in card.visible)
        assert shows / Polygon(quad).area == pytest.approx(share, abs=0.03)


def test_two_cards_read_alike_lying_apart_are_two_cards() -> None:
    image = np.full((600, 900, 3), 90, np.uint8)
    boxes = [_rect(100, 100, 120, 176), _rect(400, 100, 126, 176)]
    reader = _ReadsBy({120: ("QS", 0.9), 126: ("QS", 0.99)})
    found = detect(image, reader, _FindsThese(boxes), shapes_too=False)  # type: ignore[arg-type]
    assert [c.card for c in found.cards] == ["QS", "QS"]


def _reference_distinct(boxes: list[np.ndarray], limit: float, at_limit: bool) -> list[int]:
    from shapely.geometry import MultiPoint

    hulls = [MultiPoint(box).convex_hull for box in boxes]
    kept: list[int] = []
    for i, hull in enumerate(hulls):
        ious = [polygon_iou(hull, hulls[j]) for j in kept]
        if not any((iou >= limit) if at_limit else (iou > limit) for iou in ious):
            kept.append(i)
    return kept


@pytest.mark.parametrize("at_limit", [False, True])
def test_greedy_distinct_keeps_what_comparing_every_pair_keeps(at_limit: bool) -> None:
    rng = np.random.default_rng(5)
    for _ in range(30):
        boxes = []
        for _ in range(int(rng.integers(1, 25))):
            cx, cy = rng.uniform(0, 300, 2)
            w, h, angle = rng.uniform(20, 90), rng.uniform(20, 120), rng.uniform(0, np.pi)
            rot = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
            half = np.array([[-w, -h], [w, -h], [w, h], [-w, h]]) / 2
            boxes.append(half @ rot.T + (cx, cy))
        boxes.append(boxes[0].copy())  # the same box twice: IoU exactly 1
        boxes.append(boxes[-1][::-1].copy())  # corners the other way round
        boxes.append(boxes[0][[0, 2, 1, 3]])  # no convex quad: crossed sides
        for box in boxes[:-1]:  # the convex ones
            assert quad_iou(boxes[0], box) == pytest.approx(overlap(boxes[0], box), abs=1e-5)
        kept = greedy_distinct(boxes, 0.3, at_limit=at_limit)
        assert kept == _reference_distinct(boxes, 0.3, at_limit)
        assert not {len(boxes) - 3, len(boxes) - 2, len(boxes) - 1} & set(kept)


def _box(centre: tuple[float, float], size: tuple[float, float], angle: float) -> np.ndarray:
    import cv2

    return np.asarray(cv2.boxPoints((centre, size, angle)), dtype=np.float64)


def test_shared_areas_are_the_convex_hulls_areas_and_overlaps() -> None:
    from shapely.geometry import MultiPoint

    from referee.detection.outlines import shared_areas

    rng = np.random.default_rng(8)
    boxes = [_box(tuple(rng.uniform(0, 200, 2)), tuple(rng.uniform(20, 120, 2)),
                  rng.uniform(0, 180)) for _ in range(12)]
    boxes.append(boxes[0][[0, 2, 1, 3]])  # crossed sides: its convex hull
    areas, shared = shared_areas(boxes)
    hulls = [MultiPoint(box).convex_hull for box in boxes]
    assert areas == pytest.approx([h.area for h in hulls], rel=1e-6)
    for i, a in enumerate(hulls):
        for j, b in enumerate(hulls):
            assert shared[i][j] == pytest.approx(0.0 if i == j else a.intersection(b).area,
                                                 abs=1e-6 * a.area)
    assert sum(v > 0 for row in shared for v in row) > 20  # (many overlap)


def test_the_overlap_bound_suppression_skips_by_is_never_below_the_overlap() -> None:
    from referee.detection.outlines import _Hull

    rng = np.random.default_rng(7)
    boxes = [_box(tuple(rng.uniform(0, 300, 2)), tuple(rng.uniform(20, 120, 2)),
                  rng.uniform(0, 180)) for _ in range(60)]
    hulls = [_Hull.of(box) for box in boxes]
    pairs = [(a, b) for a in hulls for b in hulls]
    assert all(a.most_iou(b) >= a.iou(b) - 1e-12 for a, b in pairs)
    assert sum(a.iou(b) > 0 for a, b in pairs) > 200  # (many overlap)
    # (that suppression keeps what comparing every pair keeps:
    # test_greedy_distinct_keeps_what_comparing_every_pair_keeps)


def test_quad_iou_is_exact_for_nearly_equal_boxes() -> None:
    # OpenCV's float32 intersectConvexConvex gave 0.320 for this pair (opencv#22812), so
    # a second outline of one card would have been kept as another card.
    centre, size = (1085.6974639295254, 1369.7582225163237), (110.29607530826125,
                                                             154.8845576788363)
    a = _box(centre, size, 167.21866588155495)
    b = _box(centre, (size[0] * 1.061773473793148, size[1]), 167.21866588155495)
    assert quad_iou(a, b) == pytest.approx(overlap(a, b), abs=1e-9)
    assert quad_iou(a, b) > 0.9
    assert greedy_distinct([a, b], 0.5) == [0]
    rng = np.random.default_rng(22812)
    for _ in range(300):  # the same box, a little scaled, turned or shifted
        centre = tuple(rng.uniform(0, 2000, 2))
        size = tuple(rng.uniform(40, 200, 2))
        angle = rng.uniform(0, 180)
        a = _box(centre, size, angle)
        b = _box((centre[0] + rng.normal(0, 0.5), centre[1]),
                 (size[0] * rng.uniform(1, 1.1), size[1]), angle + rng.choice([0, 1e-4]))
        assert quad_iou(a, b) == pytest.approx(overlap(a, b), abs=1e-6)


def test_quad_iou_of_boxes_sharing_sides_or_nested() -> None:
    whole = np.array([[0, 0], [4, 0], [4, 1], [0, 1]], float)
    left, right = whole * [0.5, 1], whole * [0.5, 1] + [2, 0]
    inner = np.array([[1, 0.25], [3, 0.25], [3, 0.75], [1, 0.75]])
    assert quad_iou(whole, left) == 0.5
    assert quad_iou(left, whole[::-1]) == 0.5  # either winding
    assert quad_iou(left, right) == 0.0  # touching along a side only
    assert quad_iou(whole, inner) == pytest.approx(0.25)
    assert quad_iou(inner, whole) == pytest.approx(0.25)
    assert quad_iou(whole, whole + np.array([4.0, 1.0])) == 0.0  # touching at a corner only
    assert greedy_distinct([whole, inner, left], 0.3) == [0, 1]


def test_an_overlap_of_exactly_the_limit_counts_only_at_limit() -> None:
    from referee.detection.outlines import SAME_CARD_IOU, Outline

    whole = np.array([[0, 0], [4, 0], [4, 1], [0, 1]], float)
    half = np.array([[0, 0], [2, 0], [2, 1], [0, 1]], float)
    assert SAME_CARD_IOU == 0.5 and quad_iou(whole, half) == 0.5
    assert distinct([Outline(whole, 0.9), Outline(half, 0.8)], [0.9, 0.8]) == [0]
    assert greedy_distinct([whole, half], 0.5) == [0, 1]
    assert greedy_distinct([whole, half], 0.5, at_limit=True) == [0]


def test_distinct_keeps_the_better_of_two_outlines_of_one_card_only() -> None:
    from referee.detection.outlines import SAME_CARD_IOU, Outline

    square = np.array([[0, 0], [10, 0], [10, 10], [0, 10]], float)
    # Shifted by d, two squares overlap by IoU (10 - d) / (10 + d): SAME_CARD_IOU at d0.
    d0 = 10 * (1 - SAME_CARD_IOU) / (1 + SAME_CARD_IOU)
    same, other = square + np.array([0.98 * d0, 0]), square + np.array([1.02 * d0, 0])
    assert overlap(square, same) > SAME_CARD_IOU > overlap(square, other)
    apart = square + np.array([40.0, 0.0])
    outlines = [Outline(square, 0.9), Outline(same, 0.8), Outline(apart, 0.7)]
    assert distinct(outlines, [0.2, 0.9, 0.5]) == [1, 2]
    outlines = [Outline(square, 0.9), Outline(other, 0.8), Outline(apart, 0.7)]
    assert distinct(outlines, [0.2, 0.9, 0.5]) == [1, 2, 0]


class _Verifies:
    """A stand-in verifier: sure that outlines right of x = 480 hold no card."""

    def __init__(self) -> None:
        self.asked = 0

    def not_card(self, image, outlines):  # type: ignore[no-untyped-def]
        self.asked += len(outlines)
        return [0.9 if float(np.asarray(o, float)[:, 0].mean()) >= 480 else 0.1
                for o in outlines]


def test_an_outline_the_verifier_is_sure_holds_no_card_is_dropped() -> None:
    image, cards = _two_cards()
    right = max(cards, key=lambda c: float(c[:, 0].mean()))
    assert sorted(c.card for c in detect(image, _Reads(), _Finds(right)).cards) == ["7H", "??"]
    verifier = _Verifies()
    kept = detect(image, _Reads(), _Finds(right), verifier=verifier)  # type: ignore[arg-type]
    assert [c.card for c in kept.cards] == ["7H"]
    assert verifier.asked >= 2


def test_the_shipped_verifier_tells_a_card_from_a_sheet_of_paper() -> None:
    from referee.detection.cards import DEFAULT_VERIFIER, CardVerifier

    if not DEFAULT_VERIFIER.exists():
        pytest.fail(f"{DEFAULT_VERIFIER} is missing")
    image, cards = _two_cards()
    paper = np.full_like(image, 200)
    cv2.putText(paper, "Dear reader, thank you for your letter", (20, 200),
                cv2.FONT_HERSHEY_SIMPLEX, 0.6, (40, 40, 40), 1)
    sure = CardVerifier().not_card(image, cards)
    assert max(sure) < 0.5, sure
    sheet = np.array([[10, 150], [470, 150], [470, 470], [10, 470]], float)
    assert CardVerifier().not_card(paper, [sheet])[0] >= 0.5


class _DoubtsAll:
    def not_card(self, image, outlines):  # type: ignore[no-untyped-def]
        return [1.0] * len(outlines)


def test_an_outline_the_frame_cuts_is_not_judged_by_the_verifier() -> None:
    # A card a third of which lies past the picture's edge shows no whole face to judge: it
    # is kept, while the card in the picture (the shape finder's) is judged and dropped.
    # (Read ?? and overlapping nothing, it would go all the same: ``_cut_unread``.)
    image, cards = _two_cards()
    right = _cut_by(max(cards, key=lambda c: float(c[:, 0].mean())), image, 0.3)
    found = detect(image, _ReadsAs("QC", 0.9), _Finds(right),  # type: ignore[arg-type]
                   verifier=_DoubtsAll())  # type: ignore[arg-type]
    (card,) = found.cards
    assert card.card == "QC" and np.array(card.corners)[:, 0].max() > image.shape[1]


@pytest.mark.parametrize(("outside", "judged"), [(0.0, True), (0.05, True), (0.12, False),
                                                  (0.2, False)])
def test_an_outline_the_frame_cuts_by_under_a_tenth_is_judged_by_the_verifier(
        outside: float, judged: bool) -> None:
    # Printed matter outlined along the picture's edge was kept unjudged up to session 44
    # (real photos: a cookery book's page, a sheet of paper, a floor tile).
    from referee.detection.cards import share_in_picture
    from referee.detection.detect import JUDGED_SHARE

    image, cards = _two_cards()
    right = _cut_by(max(cards, key=lambda c: float(c[:, 0].mean())), image, outside)
    assert share_in_picture(right, image) == pytest.approx(1 - outside, abs=0.01)
    assert JUDGED_SHARE == 0.9
    # (the shape finder's two cards, in the picture, are judged and dropped either way)
    found = detect(image, _ReadsAs("QC", 0.9), _Finds(right),  # type: ignore[arg-type]
                   verifier=_DoubtsAll())  # type: ignore[arg-type]
    assert [c.card for c in found.cards] == ([] if judged else ["QC"])


def test_an_outline_nine_tenths_in_the_picture_is_judged_by_the_verifier() -> None:
    image, _ = _two_cards()  # 960 x 540
    box = _rect(870, 200, 100, 140)  # 90 of its 100 px wide in the picture
    found = detect(image, _ReadsAs("QC", 0.9), _Finds(box),  # type: ignore[arg-type]
                   verifier=_DoubtsAll())  # type: ignore[arg-type]
    assert found.cards == []
    found = detect(image, _ReadsAs("QC", 0.9), _Finds(box + np.array([0.5, 0.0])),  # type: ignore[arg-type]
                   verifier=_DoubtsAll())  # type: ignore[arg-type]
    assert [c.card for c in found.cards] == ["QC"]


def test_the_share_of_an_outline_in_the_picture() -> None:
    from referee.detection.cards import share_in_picture

    image = np.zeros((100, 200, 3), np.uint8)
    assert share_in_picture(_rect(10, 10, 50, 50), image) == 1.0
    assert share_in_picture(_rect(150, 10, 100, 50), image) == pytest.approx(0.5)
    assert share_in_picture(_rect(-40, -40, 80, 80), image) == pytest.approx(0.25)
    assert share_in_picture(_rect(300, 10, 50, 50), image) == 0.0
    flat = np.array([[150, 10], [260, 10], [260, 10], [150, 10]], float)
    assert share_in_picture(flat, image) == 0.0
    assert share_in_picture(_rect(10, 10, 50, np.nan), image) == 0.0
    assert share_in_picture(_rect(10, 10, 50, np.inf), image) == 0.0  # (shapely raises)


@pytest.mark.parametrize(("dx", "dy", "in_frame"), [
    (0, 0, True), (-7, 0, True), (-8, 0, False), (0, -7, True), (0, -8, False),
    (0, 5, True), (0, 6, False), (7, 0, True), (8, 0, False)])
def test_only_an_outline_clear_of_the_picture_s_edges_lies_in_the_frame(
        dx: int, dy: int, in_frame: bool) -> None:
    from referee.detection.detect import FRAME_MARGIN_PX, _in_frame

    image = np.zeros((100, 200, 3), np.uint8)  # edges at x 0 and 199, y 0 and 99
    # 10 px from the sides and top, 8 from the bottom, moved by dx, dy: up to 3 px from an
    # edge it lies in the frame, a pixel nearer (or past it) not.
    corners = np.array([[10 + dx, 10 + dy], [189 + dx, 10 + dy], [189 + dx, 91 + dy],
                        [10 + dx, 91 + dy]], float)
    assert FRAME_MARGIN_PX == 3.0
    assert _in_frame(corners, image) is in_frame


def test_an_outline_the_verifier_is_exactly_half_sure_of_is_dropped() -> None:
    class _Half:
        def not_card(self, image, outlines):  # type: ignore[no-untyped-def]
            return [0.5] * len(outlines)

    image, _ = _two_cards()
    assert detect(image, _Reads(), verifier=_Half()).cards == []  # type: ignore[arg-type]


@pytest.mark.parametrize("broken", ["no_json", "bad_json", "no_class", "truncated"])
def test_a_broken_verifier_model_is_a_missing_model_with_a_reason(
        tmp_path, broken: str) -> None:  # type: ignore[no-untyped-def]
    from referee.detection.cards import DEFAULT_VERIFIER, CardVerifier, ModelMissingError

    model = tmp_path / "card_verifier.onnx"
    data = DEFAULT_VERIFIER.read_bytes()
    model.write_bytes(data[:1000] if broken == "truncated" else data)
    meta = json.loads(DEFAULT_VERIFIER.with_suffix(".json").read_text())
    if broken == "no_class":
        meta["classes"] = ["card", "other"]
    if broken != "no_json":
        model.with_suffix(".json").write_text("{not json" if broken == "bad_json"
                                              else json.dumps(meta))
    with pytest.raises(ModelMissingError, match="card_verifier"):
        CardVerifier(model)


def test_a_verifier_that_cannot_be_loaded_is_none_with_the_reason(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import referee.detection.detect as detect_module
    from referee.detection.cards import ModelMissingError

    def broken() -> None:
        raise ModelMissingError("card verifier x.onnx cannot be loaded by onnxruntime")

    monkeypatch.setattr(detect_module, "CardVerifier", broken)
    assert detect_module.load_verifier() == (
        None, "card verifier x.onnx cannot be loaded by onnxruntime")


@pytest.mark.parametrize(("right", "kept"), [
    (("7H", 0.95), ["7H", "QC"]),                # the "back" shows nothing of itself
    (("back", 0.95), ["QC", "back", "back"]),    # half of it shows: a back under a card
])
def test_a_back_that_cards_read_face_up_cover_almost_whole_is_no_card(
        right: tuple[str, float], kept: list[str]) -> None:
    # Two cards side by side, and a box round both read as a back (real photos: a merged
    # box's corners fall on the cards' faces).
    image = np.full((260, 380, 3), (40, 90, 40), np.uint8)
    first, second = _rect(60, 40, 126, 176), _rect(196, 40, 120, 176)
    for outline in (first, second):
        cv2.fillConvexPoly(image, outline.astype(np.int32), (235, 235, 235))
    both = _rect(60, 40, 256, 176)  # less than half of it either card (one of each)
    reader = _ReadsBy({126: ("QC", 0.95), 120: right, 256: ("back", 0.99)})
    found = detect(image, reader, _FindsThese([first, second, both]),  # type: ignore[arg-type]
                   shapes_too=False)
    assert sorted(c.card for c in found.cards) == kept


def test_hidden_shares_count_the_outlines_named_and_not_those_lying_under() -> None:
    back, left, right = _rect(0, 0, 100, 50), _rect(0, 0, 50, 50), _rect(50, 0, 50, 50)
    far = _rect(300, 0, 60, 88)
    undecided: list[list[bool | None]] = [[None] * 4 for _ in range(4)]
    shares = hidden_shares([back, left, right, far], [False, True, True, True], undecided)
    assert shares == [pytest.approx(1.0), 0.0, 0.0, 0.0]  # the back does not count itself
    assert hidden_shares([back, left, right, far], [False, True, False, True],
                         undecided)[0] == pytest.approx(0.5)
    back_over_left = [row[:] for row in undecided]
    back_over_left[0][1], back_over_left[1][0] = True, False
    assert hidden_shares([back, left, right, far], [False, True, True, True],
                         back_over_left)[0] == pytest.approx(0.5)
    # only the outlines asked for (the left half lies wholly inside the back)
    assert hidden_shares([back, left, right, far], [True] * 4, undecided, only=[1]) \
        == [0.0, pytest.approx(1.0), 0.0, 0.0]


def _as_set(corners: np.ndarray) -> list[tuple[float, float]]:
    return sorted((round(float(x), 1), round(float(y), 1)) for x, y in corners)


def test_a_card_the_picture_s_edge_cuts_is_completed_beyond_it() -> None:
    long = 100 * 88 / 63  # a card 100 px wide
    # Less than a short side's worth shows: which side faces the edge needs the cards' size.
    shown = _rect(50, 0, 100, 60)
    assert beyond_edge(shown, 400, 300) is None
    assert _as_set(beyond_edge(shown, 400, 300, card_px=100.0)) == _as_set(
        _rect(50, 60 - long, 100, long))
    # the side facing the edge is the card's long side when the cards are smaller
    side_on = _rect(0, 50, 60, 100)
    assert _as_set(beyond_edge(side_on, 400, 300, card_px=72.0)) == _as_set(
        _rect(60 - 100 * 63 / 88, 50, 100 * 63 / 88, 100))
    # more than a short side shows: it faces the edge with its short side, whatever the size
    assert _as_set(beyond_edge(_rect(50, 0, 100, 90), 400, 300)) == _as_set(
        _rect(50, 90 - long, 100, long))
    # the bottom and right edges too, a few pixels off them, the corners in any order
    bottom = _rect(50, 300 - 1 - 90 + 3, 100, 90)[::-1]
    assert _as_set(beyond_edge(bottom, 400, 300)) == _as_set(
        _rect(50, bottom[:, 1].min(), 100, long))
    # a whole card lying along the edge, one away from it, and one cut at a corner too
    assert beyond_edge(_rect(0, 10, 100, long), 400, 300, card_px=100.0) is None
    assert beyond_edge(_rect(50, 20, 100, 60), 400, 300, card_px=100.0) is None
    assert beyond_edge(_rect(0, 0, 100, 60), 400, 300, card_px=100.0) is None


def test_an_index_corner_mostly_beyond_the_picture_is_not_read() -> None:
    from referee.detection.cards import _index_seen

    image = np.zeros((300, 400, 3), np.uint8)
    index_mm = (26.0, 32.0)
    assert _index_seen(_rect(50, 50, 100, 140), image, index_mm) == (True, True)
    # reaching 100 px above the picture: the top index (32 / 88 of 140 px) lies beyond it
    top = order_corners(_rect(50, -100, 100, 140))[0]
    seen = _index_seen(_rect(50, -100, 100, 140), image, index_mm)
    assert seen == ((False, True) if top[1] < 0 else (True, False))
    # its corner 20 px beyond the edge, most of the index still shows: it is read
    assert _index_seen(_rect(50, -20, 100, 140), image, index_mm) == (True, True)
    # cut by the left edge: the index beside it is 41 px wide, 1 px of it in the picture
    left_cut = order_corners(_rect(-40, 50, 100, 140))
    assert _index_seen(_rect(-40, 50, 100, 140), image, index_mm) == (
        bool(left_cut[0][0] >= 0), bool(left_cut[2][0] >= 0))


@pytest.mark.parametrize(("completed", "kept"), [
    (("QH", 0.95), ("QH", True)),    # read for sure as a face-up card: the whole card
    (("QH", 0.7), ("back", False)),  # else the part that shows, as it was read
])
def test_a_card_the_edge_cuts_is_outlined_whole_when_read_for_sure(
        completed: tuple[str, float], kept: tuple[str, bool]) -> None:
    image = np.full((300, 400, 3), (40, 90, 40), np.uint8)
    shown = _rect(150, 0, 100, 90)
    cv2.fillConvexPoly(image, shown.astype(np.int32), (235, 235, 235))
    whole_h = round(100 * 88 / 63)
    reader = _ReadsBy({90: ("back", 0.99), whole_h: completed}, axis=1)
    found = detect(image, reader, _FindsThese([shown]), shapes_too=False)  # type: ignore[arg-type]
    assert len(found.cards) == 1
    card = found.cards[0]
    assert card.card == kept[0]
    assert (min(y for _, y in card.corners) < -40) == kept[1]


def test_a_card_the_edge_cuts_stays_whole_when_the_detector_boxed_the_part_shown() -> None:
    # A third of a card shows at the top (its size known from a card lying whole below), and
    # the detector's box is of that third: the card completed beyond the edge is not polished
    # back onto the part shown (its sides beyond the picture lie on no edge there).
    image = np.full((400, 400, 3), (40, 90, 40), np.uint8)
    shown, lying = _rect(150, 0, 100, 45), _rect(150, 200, 100, 140)
    for quad in (shown, lying):
        cv2.fillConvexPoly(image, quad.astype(np.int32), (235, 235, 235))
    finder = _FindsOutlines([Outline(lying, 0.9, learned=True),
                             Outline(shown, 0.6, learned=True, box=_rect(147, 0, 106, 48))])
    found = detect(image, _ReadsIf(lambda c: np.ptp(c[:, 1]) > 60, ("QH", 0.95), ("back", 0.99)),  # type: ignore[arg-type]
                   finder, shapes_too=False)
    (card,) = [c for c in found.cards if min(y for _, y in c.corners) < 100]
    assert card.card == "QH" and min(y for _, y in card.corners) < -80
    assert min(y for part in card.visible for _, y in part) == pytest.approx(0.0)


@pytest.mark.parametrize(("down", "kept"), [(0, ["QH"]), (30, ["??", "QH"])])
def test_an_unread_part_of_a_card_at_the_picture_s_edge_goes_with_the_card(
        down: int, kept: list[str]) -> None:
    # The part of a card the picture's edge cuts, read ??, inside the card outlined whole
    # (beyond the edge) and read: one card. Lying inside the picture, it may be a card.
    image = np.full((300, 400, 3), (40, 90, 40), np.uint8)
    part = np.array([[150, down], [250, down + 8], [250, down + 60], [150, down + 60]], float)
    whole = _rect(150, down - 80, 100, 140)
    reader = _ReadsBy({60: ("??", 0.45), 140: ("QH", 0.95)}, axis=1)
    found = detect(image, reader, _FindsThese([whole, part]), shapes_too=False)  # type: ignore[arg-type]
    assert sorted(c.card for c in found.cards) == kept
    # So is a part one corner reads as a joker, unsure, though read surer than the card.
    joker = _ReadsByOneCorner({60: ("JK", JOKER_CORNER_SURE - 0.01), 140: ("QH", 0.85)},
                              axis=1)
    found = detect(image, joker, _FindsThese([whole, part]), shapes_too=False)  # type: ignore[arg-type]
    assert sorted(c.card for c in found.cards) == kept


def test_a_split_end_the_edge_cuts_keeps_the_bar_of_split_ends_when_completed() -> None:
    # One end of a merged box (faint, ``split``), cut by the picture's edge and read for
    # sure: completed, it must be as sure as a split end needs to be to replace it.
    from referee.detection.detect import SPLIT_SURE
    from referee.detection.learned import SPLIT_SCORE
    from referee.detection.outlines import Outline

    class _FindsSplitEnd(_Finds):
        def given(self, image, min_score=0.25, slopes=None, mirrored=False, split=False):  # type: ignore[no-untyped-def]
            return [Outline(self.corners, SPLIT_SCORE, learned=True, split=True)]

    image = np.full((300, 400, 3), (40, 90, 40), np.uint8)
    shown = _rect(150, 0, 100, 90)
    whole_h = round(100 * 88 / 63)
    below = (SPLIT_SURE + 0.9) / 2  # sure enough for a faint box, not for a split end
    reader = _ReadsBy({90: ("QH", 0.99), whole_h: ("QH", below)}, axis=1)
    found = detect(image, reader, _FindsSplitEnd(shown), shapes_too=False)  # type: ignore[arg-type]
    assert [c.card for c in found.cards] == ["QH"]
    assert min(y for _, y in found.cards[0].corners) >= 0  # the part that shows


def _back_on_table(turn: float) -> tuple[np.ndarray, np.ndarray]:
    """A back printed to its edge in a bold two-colour repeat (navy and gold, as aisleriot
    rheinland's), 126 x 176 px turned ``turn`` degrees, on a noisy wooden brown."""
    rng = np.random.default_rng(4)
    image = np.clip(rng.normal((40, 90, 150), 12, (480, 640, 3)), 0, 255).astype(np.uint8)
    back = np.zeros((176, 126, 3), np.uint8)
    back[:] = (90, 30, 40)
    for y in range(0, 176, 22):
        for x in range(0, 126, 21):
            if (x // 21 + y // 22) % 2 == 0:
                cv2.circle(back, (x + 10, y + 11), 8, (70, 170, 220), -1)
    turned = cv2.getRotationMatrix2D((63.0, 88.0), turn, 1.0)
    turned[:, 2] += (320 - 63, 240 - 88)
    card_mask = cv2.warpAffine(np.full((176, 126), 255, np.uint8), turned, (640, 480))
    drawn = cv2.warpAffine(back, turned, (640, 480))
    image[card_mask > 127] = drawn[card_mask > 127]
    corners = np.array([[0, 0], [126, 0], [126, 176], [0, 176]], np.float64)
    return image, corners @ turned[:, :2].T + turned[:, 2]


def test_what_the_picture_s_edge_cuts_is_not_outlined_by_its_colours() -> None:
    # The frame cuts a floor tile or a calendar into a card's shape (real photos): a region
    # running into the picture's edge is not taken for a card, the same card inside it is.
    from referee.detection.outlines import segmented_card

    image, truth = _back_on_table(0.0)
    left = int(np.floor(truth[:, 0].min())) + 1  # the picture cut a pixel into the card
    cut, moved = image[:, left:].copy(), truth - [left, 0]
    loose = moved + np.array([[4.0, -12.0], [4.0, -12.0], [4.0, 12.0], [4.0, 12.0]])
    assert segmented_card(cut, loose) is None
    inside = truth + np.array([[4.0, -12.0], [4.0, -12.0], [4.0, 12.0], [4.0, 12.0]])
    found = segmented_card(image, inside)
    assert found is not None and quad_iou(found, truth) > 0.85


@pytest.mark.parametrize("turn", [0.0, 17.0, 60.0])
def test_a_back_boxed_loosely_is_outlined_by_its_colours(turn: float) -> None:
    from referee.detection.outlines import segmented_card

    image, truth = _back_on_table(turn)
    # a detector's box round a design it never saw: a third too long, off to one side
    along = (truth[2] - truth[1]) / np.linalg.norm(truth[2] - truth[1])
    loose = truth + np.outer([-1, -1, 1, 1], along) * 30.0 + along * 12.0
    assert quad_iou(loose, truth) < 0.8
    found = segmented_card(image, loose)
    assert found is not None and quad_iou(found, truth) > 0.9


def test_a_box_is_outlined_by_its_colours_the_same_whatever_ran_before_and_wherever() -> None:
    # GrabCut's k-means draws from the calling thread's random state: unseeded, this box
    # was outlined three ways as that state moved on (other boxes outlined before it, the
    # same frame read again), on this thread or on another.
    import threading

    from referee.detection.outlines import segmented_card

    image, truth = _back_on_table(17.0)
    along = (truth[2] - truth[1]) / np.linalg.norm(truth[2] - truth[1])
    loose = truth + np.outer([-1, -1, 1, 1], along) * 30.0 + along * 12.0
    first = segmented_card(image, loose)
    assert first is not None
    outlined = []
    for seed in range(1, 9):
        cv2.setRNGSeed(seed)  # as though other boxes had been outlined before
        outlined.append(segmented_card(image, loose))
    elsewhere: list[np.ndarray | None] = []

    def there() -> None:
        cv2.setRNGSeed(2)  # another thread, its random state moved on too (unseeded, this
        # outlines the box otherwise than a fresh state does)
        elsewhere.append(segmented_card(image, loose))

    worker = threading.Thread(target=there)
    worker.start()
    worker.join()
    for found in [*outlined, *elsewhere]:
        assert found is not None and np.array_equal(found, first)


def test_what_colours_set_apart_is_no_card_unless_card_shaped() -> None:
    from referee.detection.outlines import segmented_card

    image, _ = _back_on_table(0.0)
    square = image.copy()
    square[152:328, 232:408] = square[160, 300]  # a square mat, as wide as it is long
    box = np.array([[226.0, 146.0], [414.0, 146.0], [414.0, 334.0], [226.0, 334.0]])
    assert segmented_card(square, box) is None
    # an L, a card's size across: the card with a third of its width and half its length
    # cut away (the table shows there), so it fills under SEGMENT_FILL of its rectangle
    notched = image.copy()
    notched[152:240, 341:383] = image[10:98, 10:52]
    card_box = np.array([[249.0, 144.0], [391.0, 144.0], [391.0, 336.0], [249.0, 336.0]])
    assert segmented_card(notched, card_box) is None
    assert segmented_card(image, card_box) is not None  # the same box on the whole card
    assert segmented_card(image, np.array([[0.0, 0.0], [4.0, 0.0], [4.0, 4.0], [0.0, 4.0]])) \
        is None  # too small to cut


class _BackFaces(_ReadsTable):
    """Corners read as table (a back of a design never seen); the face read as a back
    (``backs``) on the box if ``hint``, on the outline made there if ``there``; at the end
    (``confirm``) still a back if ``stays``, else ``??`` (something lay on it)."""

    reads_faces = True

    def __init__(self, hint: bool = True, there: bool = True, stays: bool = True) -> None:
        self.hint, self.there, self.stays = hint, there, stays
        self.asked: list[np.ndarray] = []
        self.bars: list[float] = []

    def backs(self, image, cards, *, at_least=0.9, quick=None):  # type: ignore[no-untyped-def]
        from referee.detection.cards import CardReading

        said = self.hint if quick is not None else self.there  # (the box's reading is given)
        self.asked += [np.asarray(c, float) for c in cards]
        self.bars.append(at_least)
        return [CardReading("back", 0.97, (("other", 0.9), ("other", 0.8)), ("back", 0.97))
                if said else None for _ in cards]

    def confirm(self, readings, uncovered=None, *, ensemble=True, clear=None, check_jokers=True):  # type: ignore[no-untyped-def]
        from dataclasses import replace

        return [r if self.stays else replace(r, card="??", confidence=0.3) for r in readings]


@pytest.mark.parametrize(("reader", "doubt", "kept"), [
    (_BackFaces(), 0.1, True),  # read as a back, and the verifier sees a card there
    (_BackFaces(), 0.6, False),  # the verifier sure enough it is no card (paper, a book's page)
    (_BackFaces(hint=False), 0.1, False),  # the box's face reads no back: not looked at
    (_BackFaces(there=False), 0.1, False),  # nor a back where its colours outline it
    (_BackFaces(stays=False), 0.1, False),  # read otherwise at the end
])
def test_a_loose_box_whose_face_reads_as_a_back_is_outlined_by_its_colours(
        reader: _BackFaces, doubt: float, kept: bool) -> None:
    from referee.detection.cards import FACE_SURE
    from referee.detection.detect import BACK_FACE_HINT, NOT_CARD_SURE

    assert NOT_CARD_SURE <= 0.6 and BACK_FACE_HINT < FACE_SURE
    image, truth = _back_on_table(17.0)
    along = (truth[2] - truth[1]) / np.linalg.norm(truth[2] - truth[1])
    loose = truth + np.outer([-1, -1, 1, 1], along) * 30.0 + along * 12.0
    detector = _Finds(loose)
    detector.score = 0.3  # under VOUCHED_SCORE: not kept on the verifier's word
    reader.asked, reader.bars = [], []
    found = detect(image, reader, detector, shapes_too=False,  # type: ignore[arg-type]
                   verifier=_Sure(doubt))  # type: ignore[arg-type]
    assert [c.card for c in found.cards] == (["back"] if kept else [])
    assert any(np.allclose(a, loose) for a in reader.asked)  # the box's face was read
    # the outline made by colours is read too, once the box's face said back, and surer
    assert reader.bars == ([BACK_FACE_HINT, FACE_SURE] if reader.hint else [BACK_FACE_HINT])
    assert len(reader.asked) == len(reader.bars)
    if kept:
        assert quad_iou(np.array(found.cards[0].corners), truth) > 0.9
    # Without a verifier to judge it, no loose box is looked at
    reader.asked = []
    found = detect(image, reader, detector, shapes_too=False)  # type: ignore[arg-type]
    assert found.cards == [] and reader.asked == []


def test_loose_boxes_read_as_backs_are_outlined_by_their_colours_on_both_cores(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Two backs, each boxed loosely: the second box is outlined on the helper thread while
    # this one outlines the first, and both are outlined as they are one after the other.
    import threading
    from concurrent.futures import ThreadPoolExecutor

    import referee.detection.detect as detect_module
    import referee.detection.learned as learned

    half, truth = _back_on_table(17.0)
    image = np.hstack([half, half[:, ::-1]])  # the second back turned the other way
    along = (truth[2] - truth[1]) / np.linalg.norm(truth[2] - truth[1])
    box = truth + np.outer([-1, -1, 1, 1], along) * 30.0 + along * 12.0
    mirrored = np.column_stack([1279.0 - box[:, 0], box[:, 1]])[::-1]
    detector = _FindsThese([box, mirrored])
    threads: list[str] = []
    real = learned.halved

    def noted(work, items, least=2):  # type: ignore[no-untyped-def]
        def noting(part):  # type: ignore[no-untyped-def]
            threads.append(threading.current_thread().name)
            return work(part)
        return real(noting, items, least)

    def found(helper: ThreadPoolExecutor | None) -> list[tuple[str, list[list[float]]]]:
        monkeypatch.setattr(learned, "_helper", lambda: helper)
        # (the verifier sees a card, not sure enough to vouch for a box read as no card)
        cards = detect(image, _BackFaces(), detector, shapes_too=False,  # type: ignore[arg-type]
                       verifier=_Sure(0.2)).cards  # type: ignore[arg-type]
        return [(c.card, c.corners) for c in cards]

    assert detect_module.VOUCHED_DOUBT < 0.2 < detect_module.NOT_CARD_SURE
    monkeypatch.setattr(detect_module, "halved", noted)
    helper = ThreadPoolExecutor(1, thread_name_prefix=learned.HELPER_NAME)
    both = found(helper)
    helper.shutdown()
    assert len(threads) == 2 and threads[0] != threads[1]
    assert any(name.startswith(learned.HELPER_NAME) for name in threads)
    threads.clear()
    alone = found(None)
    assert threads == [threading.current_thread().name]
    assert [card for card, _ in both] == ["back", "back"] and both == alone


@pytest.mark.parametrize("turn", [0.0, 17.0, 60.0])
def test_a_card_lying_apart_stands_out_as_an_edge_on_all_four_sides(turn: float) -> None:
    from referee.detection.detect import CLEAR_SIDES
    from referee.detection.outlines import side_contrast

    image, truth = _back_on_table(turn)
    slopes = gradients(image)
    assert side_contrast(slopes, truth).min() >= CLEAR_SIDES
    middle = truth.mean(axis=0)
    # the same outline a fifth larger lies on the table, a fifth smaller on the card's print
    assert side_contrast(slopes, middle + 1.2 * (truth - middle)).max() < CLEAR_SIDES
    assert side_contrast(slopes, middle + 0.8 * (truth - middle)).max() < CLEAR_SIDES
    # and a card-shaped patch of carpet has sides no stronger than what lies round them
    rng = np.random.default_rng(5)
    carpet = cv2.GaussianBlur(np.clip(rng.normal(120, 40, image.shape), 0, 255)
                              .astype(np.uint8), (3, 3), 0)
    assert side_contrast(gradients(carpet), truth).max() < CLEAR_SIDES


def test_only_what_lies_in_the_picture_makes_a_side_stand_out() -> None:
    # The picture's edge is no card's: beyond it the gradients read 0, and a side lying a
    # pixel or two in from it is compared with what lies in the picture alone.
    from referee.detection.detect import CLEAR_SIDES
    from referee.detection.outlines import side_contrast

    rng = np.random.default_rng(5)
    carpet = cv2.GaussianBlur(np.clip(rng.normal(120, 40, (480, 640, 3)), 0, 255)
                              .astype(np.uint8), (3, 3), 0)
    slopes = gradients(carpet)
    for left in (0.0, 2.0, 5.0):
        patch = np.array([[left, 100.0], [left + 126, 100.0], [left + 126, 276.0],
                          [left, 276.0]])
        assert side_contrast(slopes, patch).max() < CLEAR_SIDES
    beyond = np.array([[-200.0, 100.0], [-74.0, 100.0], [-74.0, 276.0], [-200.0, 276.0]])
    assert side_contrast(slopes, beyond).tolist() == [0.0] * 4
    assert side_contrast(slopes, np.full((4, 2), np.nan)).tolist() == [0.0] * 4


@pytest.mark.parametrize(("grown", "doubt", "there", "kept"), [
    (1.0, 0.1, True, True),  # the corner model reads the card's own corners: four clear sides
    (1.2, 0.1, True, False),  # corners a fifth out, on the table: sides on no edge
    (1.0, 0.6, True, False),  # the verifier sure enough it is no card
    (1.0, 0.1, False, False),  # no back read there
])
def test_a_back_its_colours_do_not_outline_is_outlined_by_the_corner_model(
        monkeypatch: pytest.MonkeyPatch, grown: float, doubt: float, there: bool,
        kept: bool) -> None:
    # A back whose colours the table shares (aisleriot rheinland's gold lattice on a wooden
    # table): GrabCut finds no card's shape there, and the corner model's outline is taken
    # when each of its sides stands out as an edge (``CLEAR_SIDES``).
    import referee.detection.detect as detect_module

    image, truth = _back_on_table(17.0)
    along = (truth[2] - truth[1]) / np.linalg.norm(truth[2] - truth[1])
    loose = truth + np.outer([-1, -1, 1, 1], along) * 30.0 + along * 12.0
    detector = _Finds(loose)
    detector.score = 0.3
    middle = truth.mean(axis=0)
    said = middle + grown * (truth - middle)
    # (the corners read lie near enough the box to be taken for its card's, CORNER_SAME_IOU)
    assert quad_iou(said, loose) >= 0.7
    model = _CornersOn(said)
    # GrabCut outlines this card: the corner model is asked nothing
    found = detect(image, _BackFaces(), detector, shapes_too=False,  # type: ignore[arg-type]
                   verifier=_Sure(0.1), corner_model=model)  # type: ignore[arg-type]
    assert [c.card for c in found.cards] == ["back"] and model.given == []
    monkeypatch.setattr(detect_module, "segmented_card", lambda image, corners: None)
    found = detect(image, _BackFaces(there=there), detector,  # type: ignore[arg-type]
                   shapes_too=False, verifier=_Sure(doubt), corner_model=model)  # type: ignore[arg-type]
    assert [c.card for c in found.cards] == (["back"] if kept else [])
    if kept:
        assert quad_iou(np.array(found.cards[0].corners), truth) > 0.9
    assert len(model.given) >= 1 and quad_iou(model.given[0], loose) > 0.7  # round the box
    # without a corner model, as before: no outline, no card
    found = detect(image, _BackFaces(), detector, shapes_too=False,  # type: ignore[arg-type]
                   verifier=_Sure(0.1))  # type: ignore[arg-type]
    assert found.cards == []


@pytest.mark.parametrize(("card", "height", "over_one", "kept"), [
    # two cards side by side outlined as one, read ??: gone, though the edges take it to lie
    # over one of them (the other alone covers half of it)
    ("??", 100, True, False),
    ("??", 100, None, False),
    # the cards cover too little of it (0.68): it stays
    ("??", 130, True, True),
    # read as a card, it lies over one of them as the edges tell: it stays
    ("JK", 100, True, True),
])
def test_an_unread_outline_round_two_cards_goes_whichever_lies_on_which(
        card: str, height: float, over_one: bool | None, kept: bool) -> None:
    corners = [_rect(0, 0, 63, 88), _rect(50, 0, 63, 88), _rect(0, 0, 113, height)]
    areas, shared = shared_areas(corners)
    readings = [("7H", 0.99), ("QC", 0.99), (card, 0.3)]
    over: list[list[bool | None]] = [[None] * 3 for _ in range(3)]
    over[2][0], over[0][2] = over_one, None if over_one is None else not over_one
    out = _round_two(corners, np.sqrt(areas), shared, readings, [True] * 3, over)
    assert out == [True, True, kept]
