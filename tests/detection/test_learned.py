"""Decoding the learned card detector's raw output (no model file needed)."""

import math
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import cv2
import numpy as np
import pytest
from shapely.geometry import Polygon

from referee.detection.cards import ModelMissingError
from referee.detection.learned import (
    CARD_ASPECT,
    MIN_SCORE,
    MIRROR_SCORE,
    SPLIT_SCORE,
    CardDetector,
    decode,
    mirror,
    polish,
    polish_many,
    shrunk,
    split_merged,
    tighten,
)
from referee.detection.outlines import Outline, distinct, edge_support, gradients, overlap


def _raw(*boxes: tuple[float, float, float, float, float, float]) -> np.ndarray:
    return np.array(boxes, np.float64).T  # rows cx, cy, w, h, score, angle


def test_decode_undoes_the_letterbox_and_keeps_the_best_of_overlapping_boxes() -> None:
    raw = _raw((110, 120, 50, 70, 0.6, 0.0),        # a card
               (112, 121, 50, 70, 0.9, 0.0),        # the same card, scored higher
               (300, 200, 50, 70, 0.5, math.pi / 6),  # another card, turned 30 degrees
               (400, 400, 50, 70, 0.1, 0.0))        # too weak
    outlines = decode(raw, scale=0.5, left=10.0, top=20.0)
    assert [round(o.score, 2) for o in outlines] == [0.9, 0.5]
    first = outlines[0].corners
    # letterboxed (112, 121) -> image ((112 - 10) / 0.5, (121 - 20) / 0.5) = (204, 202)
    assert np.allclose(first.mean(axis=0), (204, 202))
    sides = sorted(np.linalg.norm(first - np.roll(first, 1, axis=0), axis=1))
    assert np.allclose(sides, [100, 100, 140, 140])
    turned = outlines[1].corners
    edge = turned[1] - turned[0]
    assert math.degrees(math.atan2(edge[1], edge[0])) % 90 == pytest.approx(30, abs=0.01)


def test_cards_in_a_fan_overlap_but_are_kept_apart() -> None:
    raw = _raw((100, 100, 60, 84, 0.8, 0.0), (125, 100, 60, 84, 0.7, 0.2))
    assert len(decode(raw, 1.0, 0.0, 0.0)) == 2


def test_distinct_keeps_the_higher_priority_of_the_same_card() -> None:
    square = np.array([[0, 0], [63, 0], [63, 88], [0, 88]], np.float64)
    outlines = [Outline(square, 0.5), Outline(square + 1, 0.9), Outline(square + 200, 0.1)]
    assert overlap(outlines[0].corners, outlines[1].corners) > 0.9
    assert distinct(outlines, [0.9, 0.4, 0.2]) == [0, 2]
    assert distinct(outlines, [0.1, 0.4, 0.2]) == [1, 2]


def test_a_missing_detector_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ModelMissingError, match="not found"):
        CardDetector(tmp_path / "card_detector.onnx")


def test_a_box_a_few_mm_off_is_moved_onto_the_cards_edges() -> None:
    image = np.full((480, 640, 3), 60, np.uint8)
    card = np.array([[200.0, 120.0], [330.0, 150.0], [290.0, 330.0], [160.0, 300.0]])
    cv2.fillPoly(image, [card.astype(np.int32)], (235, 235, 235), cv2.LINE_AA)
    # The detector's box: the card turned a little, shifted and 6% too large.
    centre = card.mean(axis=0)
    turn = np.radians(2.0)
    rotation = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
    box = (card - centre) @ rotation.T * 1.06 + centre + (5.0, -4.0)
    assert np.abs(box - card).max() > 8
    (tight,) = tighten(image, [Outline(box, 0.8)])
    assert tight.score == 0.8 and tight.box is box  # the box it came from, for ``polish``
    assert np.abs(tight.corners - card).max() < 1.5
    assert overlap(tight.corners, card) > 0.98


@pytest.mark.parametrize("start", [0, 1])
def test_a_box_is_shrunk_about_its_centre_more_along_than_across(start: int) -> None:
    box = np.roll(_corners(300.0, 200.0, 100.0, 140.0, 30.0), start, axis=0)
    small = shrunk(box)
    assert small.mean(axis=0) == pytest.approx(box.mean(axis=0))
    sides = sorted(np.linalg.norm(small - np.roll(small, -1, axis=0), axis=1))
    assert sides == pytest.approx([100 / 1.035] * 2 + [140 / 1.058] * 2)
    # its sides run as the box's do: it lies inside the box, not turned
    assert overlap(small, box) == pytest.approx(Polygon(small).area / Polygon(box).area)
    turned = [(a[0] * b[1] - a[1] * b[0]) / np.linalg.norm(a) / np.linalg.norm(b)  # sines
              for a, b in zip(np.diff(small, axis=0), np.diff(box, axis=0), strict=True)]
    assert np.allclose(turned, 0.0, atol=1e-6)


def _white_card() -> tuple[np.ndarray, np.ndarray]:
    image = np.full((480, 640, 3), 60, np.uint8)
    card = _corners(320.0, 240.0, 126.0, 176.0, 20.0)
    cv2.fillPoly(image, [np.round(card).astype(np.int32)], (235, 235, 235), cv2.LINE_AA)
    return image, card


def test_an_outline_on_the_card_s_edges_has_more_edge_support_than_one_off_them() -> None:
    image, card = _white_card()
    slopes = gradients(image)
    assert edge_support(slopes, card) > 5 * edge_support(slopes, _corners(
        320.0, 240.0, 110.0, 160.0, 20.0))
    # whichever way round its corners run, and for a dark card on a pale table too
    assert edge_support(slopes, card[::-1]) == pytest.approx(edge_support(slopes, card))
    assert edge_support(gradients(255 - image), card) == pytest.approx(
        edge_support(slopes, card))


def test_polish_takes_the_outline_of_the_shrunk_box_when_it_lies_on_the_edges() -> None:
    image, card = _white_card()
    slopes = gradients(image)
    # the detector's box as large as the median box, and an outline that missed the edges
    box = _corners(320.0, 240.0, 126.0 * 1.035, 176.0 * 1.058, 20.0)
    astray = _corners(326.0, 236.0, 140.0, 150.0, 24.0)
    polished = polish(slopes, Outline(astray, 0.7, learned=True, box=box))
    assert np.abs(polished.corners - astray).max() > 8
    assert overlap(polished.corners, card) > 0.98
    assert (polished.score, polished.learned, polished.box is box) == (0.7, True, True)
    # an outline on the edges already stays, as does one with no box to shrink
    kept = Outline(card, 0.7, learned=True, box=_corners(320.0, 240.0, 90.0, 130.0, 20.0))
    assert polish(slopes, kept) is kept
    boxless = Outline(astray, 0.7)
    assert polish(slopes, boxless) is boxless


def test_outlines_polished_together_are_those_polished_one_by_one() -> None:
    image, card = _white_card()
    slopes = gradients(image)
    box = _corners(320.0, 240.0, 126.0 * 1.035, 176.0 * 1.058, 20.0)
    outlines = [Outline(_corners(326.0, 236.0, 140.0, 150.0, 24.0), 0.7, learned=True, box=box),
                Outline(card, 0.7, learned=True, box=_corners(320.0, 240.0, 90.0, 130.0, 20.0)),
                Outline(card, 0.4),  # no box
                Outline(_corners(300.0, 250.0, 120.0, 170.0, 10.0), 0.6, learned=True, box=box)]
    together = polish_many(slopes, outlines)
    alone = [polish(slopes, outline) for outline in outlines]
    assert [o is p for o, p in zip(together, outlines, strict=True)] == [
        o is p for o, p in zip(alone, outlines, strict=True)] == [False, True, True, False]
    for a, b in zip(together, alone, strict=True):
        np.testing.assert_array_equal(a.corners, b.corners)
    assert polish_many(slopes, []) == []


def test_with_a_spread_a_side_takes_a_near_edge_over_a_stronger_far_one() -> None:
    from referee.detection.outlines import gradients, refine_edges

    # A grey card (x from 100) with a white band from x 112: the card's edge is 3 px from
    # the box's left side at x 103, the band's stronger edge 9 px beyond it.
    image = np.full((300, 300, 3), 40, np.uint8)
    image[50:250, 100:250] = 110
    image[50:250, 112:250] = 250
    box = np.array([[103.0, 50.0], [250.0, 50.0], [250.0, 250.0], [103.0, 250.0]])
    slopes = gradients(image)
    strongest = refine_edges(slopes, box, reach=20.0)
    assert abs(strongest[:, 0].min() - 112) < 1.5
    nearest = refine_edges(slopes, box, reach=20.0, spread=4.0)
    assert abs(nearest[:, 0].min() - 100) < 1.5


def test_outlines_refined_together_are_those_refined_one_by_one() -> None:
    from referee.detection.outlines import gradients, refine_many

    # Cards of three sizes on a busy table, each box a few pixels off and refined with its
    # own reach and spread: a batch pads the shorter reaches, which must change nothing.
    rng = np.random.default_rng(4)
    image = rng.integers(30, 90, (480, 640, 3)).astype(np.uint8)
    boxes, reaches, spreads = [], [], []
    for k, (w, h, degrees) in enumerate([(63, 88, 10.0), (95, 132, -35.0), (40, 56, 80.0),
                                         (70, 98, 0.0)]):
        cx, cy = 110 + 140 * k, 120 + 80 * (k % 3)
        cv2.fillConvexPoly(image, np.round(_corners(cx, cy, w, h, degrees)).astype(np.int32),
                           (200, 190 - 20 * k, 180))
        boxes.append(_corners(cx + rng.uniform(-4, 4), cy + rng.uniform(-4, 4), w * 1.05,
                              h * 1.05, degrees + rng.uniform(-3, 3)))
        reaches.append(0.2 * w)
        spreads.append(None if k == 3 else 0.1 * w)
    slopes = gradients(image)
    together = refine_many(slopes, boxes, reaches, spreads)
    for box, reach, spread, refined in zip(boxes, reaches, spreads, together, strict=True):
        assert np.array_equal(refine_many(slopes, [box], [reach], [spread])[0], refined)
        assert not np.array_equal(refined, box)  # each moved onto its card's edges
    assert refine_many(slopes, [], [], []) == []
    # A frame's hundreds of boxes (more sides' samples than OpenCV maps at once) too.
    many = [box + rng.uniform(-3, 3, (1, 2)) for box in boxes for _ in range(100)]
    refined = refine_many(slopes, many, [reaches[k // 100] for k in range(400)],
                          [spreads[k // 100] for k in range(400)])
    for k in [341, *rng.choice(400, 12, replace=False)]:  # (341: its sides' samples
        # straddle the first map's end)
        assert np.array_equal(refine_many(slopes, [many[k]], [reaches[k // 100]],
                                          [spreads[k // 100]])[0], refined[k])


class _Counting(ThreadPoolExecutor):
    """A one-thread pool in place of ``learned._helper`` that notes how many quads each
    piece of work handed to it holds."""

    def __init__(self, submitted: list[int]) -> None:
        super().__init__(1)
        self.submitted = submitted

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.submitted.append(len(args[-1]))
        return super().submit(fn, *args, **kwargs)


def test_a_frame_s_boxes_tightened_half_on_another_thread_are_those_tightened_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import referee.detection.learned as learned

    rng = np.random.default_rng(9)
    image = rng.integers(30, 90, (400, 700, 3)).astype(np.uint8)
    boxes = []
    for k in range(learned.SPLIT_TIGHTEN + 3):
        cx, cy, w = 60 + 55 * k, 200 + 60 * (k % 3 - 1), 40 + 5 * k
        cv2.fillConvexPoly(image, np.round(_corners(cx, cy, w, w * 1.4, 7.0 * k)
                                           ).astype(np.int32), (210, 200, 190))
        boxes.append(Outline(_corners(cx + 2, cy - 2, w * 1.05, w * 1.45, 7.0 * k + 2), 0.5,
                             learned=True))
    slopes = gradients(image)
    submitted: list[int] = []
    monkeypatch.setattr(learned, "_helper", lambda: _Counting(submitted))
    together = learned.tighten(image, boxes, slopes)
    assert submitted == [len(boxes) - len(boxes) // 2]  # half on the other thread
    assert all(o.box is b.corners for o, b in zip(together, boxes, strict=True))
    for box, outline in zip(boxes, together, strict=True):
        assert np.array_equal(learned.tighten(image, [box], slopes)[0].corners, outline.corners)


def test_kept_outlines_polished_half_on_another_thread_are_those_polished_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from referee.detection import learned

    image = np.full((480, 1280, 3), (40, 90, 40), np.uint8)
    outlines = []
    for k in range(learned.SPLIT_TIGHTEN + 2):
        cx, cy, w = 70.0 + 115 * k, 240.0, 80.0
        cv2.fillConvexPoly(image, np.round(_corners(cx, cy, w, w * 1.4, 5.0 * k)
                                           ).astype(np.int32), (225, 225, 225))
        box = _corners(cx + 1, cy, w * 1.035 * 1.02, w * 1.4 * 1.058, 5.0 * k + 1)
        outlines.append(Outline(_corners(cx + 6, cy - 5, w * 1.1, w * 1.2, 5.0 * k + 6), 0.6,
                                learned=True, box=box))
    slopes = gradients(image)
    submitted: list[int] = []
    monkeypatch.setattr(learned, "_helper", lambda: _Counting(submitted))
    together = learned.polish_many(slopes, outlines)
    assert submitted == [len(outlines) - len(outlines) // 2]  # half on the other thread
    moved = [o is not p for o, p in zip(together, outlines, strict=True)]
    assert sum(moved) >= len(outlines) // 2  # (most lay off their card's edges)
    for outline, polished in zip(outlines, together, strict=True):
        alone = learned.polish(slopes, outline)
        assert (alone is outline) == (polished is outline)
        assert np.array_equal(alone.corners, polished.corners)
    # On the helper's own thread the work is not handed to it again (it would wait for itself).
    submitted.clear()
    helper = ThreadPoolExecutor(1, thread_name_prefix=learned.HELPER_NAME)
    monkeypatch.setattr(learned, "_helper", lambda: _Counting(submitted))
    on_helper = helper.submit(learned.polish_many, slopes, outlines).result(timeout=60)
    helper.shutdown()
    assert submitted == []
    assert all(np.array_equal(a.corners, b.corners)
               for a, b in zip(on_helper, together, strict=True))


def _corners(cx: float, cy: float, w: float, h: float, degrees: float) -> np.ndarray:
    return np.asarray(cv2.boxPoints(((cx, cy), (w, h), degrees)), np.float64)


@pytest.mark.parametrize("degrees", [0.0, 25.0, -60.0])
def test_a_box_squarer_than_a_card_gives_the_card_shaped_boxes_at_either_end(
        degrees: float) -> None:
    # Two 63 x 88 cards side by side, overlapping by a third, outlined as one 105 x 88 box.
    merged = Outline(_corners(300, 300, 105, 88, degrees), 0.7, learned=True)
    parts = split_merged([merged])
    assert parts and all(p.learned and p.split and p.score == SPLIT_SCORE for p in parts)
    whole = Polygon(merged.corners).buffer(0.5)
    for part in parts:
        sides = np.linalg.norm(part.corners - np.roll(part.corners, 1, axis=0), axis=1)
        assert min(sides) / max(sides) == pytest.approx(CARD_ASPECT, abs=1e-6)
        assert whole.contains(Polygon(part.corners))
    # the two cards' own outlines are among them (the 88 mm side runs along the box's)
    for dx in (-21.0, 21.0):
        card = _corners(300 + dx * math.cos(math.radians(degrees)),
                        300 + dx * math.sin(math.radians(degrees)), 63, 88, degrees)
        assert max(overlap(card, p.corners) for p in parts) > 0.98


def test_a_card_shaped_box_or_a_weak_one_is_not_split() -> None:
    card = Outline(_corners(200, 200, 63, 88, 10.0), 0.9, learned=True)
    weak = Outline(_corners(400, 200, 100, 90, 0.0), MIN_SCORE / 2, learned=True)
    assert split_merged([card, weak]) == []


def test_boxes_found_in_the_mirrored_picture_are_turned_back_as_faint_boxes() -> None:
    width = 640
    box = Outline(_corners(100, 200, 63, 88, 20.0), 0.9, learned=True)
    (back,) = mirror([box], width)
    assert back.learned and back.score == MIRROR_SCORE
    # the same box, turned left to right about the picture's middle column
    expected = box.corners.copy()
    expected[:, 0] = width - expected[:, 0]
    assert overlap(back.corners, expected) == pytest.approx(1.0)
    assert np.allclose(back.corners.mean(axis=0), (width - 100, 200))
    # box corners, not pixel centres: a box from the left edge ends at the right edge
    edge = Outline(np.array([[0, 10], [30, 10], [30, 50], [0, 50]], float), 0.5, learned=True)
    assert mirror([edge], width)[0].corners[:, 0].max() == pytest.approx(width)

    def turning(c: np.ndarray) -> float:  # signed area: the corners' turning order
        return float(np.sum(c[:, 0] * np.roll(c[:, 1], -1) - np.roll(c[:, 0], -1) * c[:, 1]))

    assert np.sign(turning(back.corners)) == np.sign(turning(box.corners))
    weak = Outline(box.corners, 0.1, learned=True)
    assert mirror([weak], width)[0].score == pytest.approx(0.1)


def test_the_detector_adds_the_mirrored_pictures_boxes_after_its_own() -> None:
    image = np.full((480, 640, 3), 60, np.uint8)
    for corners in (_corners(200, 240, 126, 176, 15.0), _corners(450, 220, 126, 176, -30.0)):
        cv2.fillConvexPoly(image, np.round(corners).astype(np.int32), (235, 235, 235))
    detector = CardDetector()
    plain = detector.find(image)
    assert plain and all(o.score >= MIN_SCORE and not o.split for o in plain)
    both = detector.find(image, mirrored=True)
    assert len(both) > len(plain)
    assert all(np.allclose(a.corners, b.corners) for a, b in zip(plain, both, strict=False))
    for found in both[len(plain):]:  # the same cards, found again in the mirrored picture
        assert found.learned and found.score <= MIRROR_SCORE and not found.split
        assert max(overlap(found.corners, o.corners) for o in plain) > 0.8


def test_the_mirrored_boxes_are_those_of_the_picture_turned_left_to_right() -> None:
    # The mirrored pass turns the picture as scaled for the network, not the whole picture:
    # for a 1280 x 720 frame it must see what the turned frame would show it.
    image = np.full((720, 1280, 3), 60, np.uint8)
    rng = np.random.default_rng(5)
    image += rng.integers(0, 20, image.shape, dtype=np.uint8)  # no picture is its own mirror
    for corners in (_corners(400, 360, 190, 264, 15.0), _corners(900, 300, 190, 264, -40.0)):
        cv2.fillConvexPoly(image, np.round(corners).astype(np.int32), (235, 235, 235))
    detector = CardDetector(refine=False)
    plain = detector.find(image, min_score=0.1)
    turned = detector.find(np.ascontiguousarray(image[:, ::-1]), min_score=0.1)
    both = detector.find(image, min_score=0.1, mirrored=True)
    expected = mirror(turned, image.shape[1])
    assert len(turned) >= 2 and len(both) == len(plain) + len(expected)
    for found, want in zip(both[len(plain):], expected, strict=True):
        assert np.allclose(found.corners, want.corners) and found.score == want.score


def test_faint_boxes_score_under_the_bar_a_box_is_kept_at() -> None:
    # referee detect reads a box scored under MIN_SCORE before it keeps it: ends of merged
    # boxes and the mirrored picture's boxes must score under it
    assert SPLIT_SCORE < MIN_SCORE and MIRROR_SCORE < MIN_SCORE


def test_the_network_sees_the_picture_in_rgb_planes_from_0_to_1_on_grey() -> None:
    detector = CardDetector()
    image = np.zeros((90, 160, 3), np.uint8)
    image[:, :, 0], image[:, :, 1], image[:, :, 2] = 10, 20, 255  # blue, green, red
    resized, _, left, top = detector._scaled(image)
    tensor = detector._letterbox(resized, left, top)
    size = detector.size
    # the shipped network takes the picture's own shape: 480 x 270 on 480 x 288, 9 rows of
    # grey above and below
    assert resized.shape[:2] == (270, size) and (left, top) == (0, 9)
    assert tensor.shape == (1, 3, 288, size) and tensor.dtype == np.float32
    assert tensor.flags.c_contiguous
    assert tensor[0, :, 144, size // 2].tolist() == pytest.approx([1.0, 20 / 255, 10 / 255])
    assert tensor[0, :, 0, 0].tolist() == pytest.approx([114 / 255] * 3)  # above the picture
    canvas = np.full((288, size, 3), 114, np.uint8)
    canvas[int(top):int(top) + resized.shape[0], int(left):int(left) + resized.shape[1]] = resized
    expected = canvas[:, :, ::-1].transpose(2, 0, 1)[None].astype(np.float32) / 255.0
    assert np.array_equal(tensor, expected)  # the same values, bit for bit
