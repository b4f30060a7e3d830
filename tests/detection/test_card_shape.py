"""Outlines made a card's shape on a calibrated table (``detection.card_shape``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from shapely.geometry import Polygon

from referee.calibration.rectify import PlaneMap
from referee.calibration.solve import Lens
from referee.detection import detect as detect_module
from referee.detection.card_shape import card_shaped
from referee.detection.cards import JOKER_CORNER_SURE
from referee.detection.detect import detect
from referee.detection.outlines import gradients
from synth.camera import Camera
from synth.scene import Renderer, Scene, card
from tests.detection.test_crops_and_outlines import (
    CLEAN,
    _FindsThese,
    _iou,
    _OneCorner,
    _ReadsAs,
    _ReadsIf,
)

#: An angled webcam with a barrel lens: lengths on the table shrink with distance.
CAMERA = Camera.looking_at((0.0, 0.0), 420.0, tilt_deg=35.0, yaw_deg=10.0,
                           image_size=(960, 540), dist_coeffs=(-0.2, 0.05, 0.0, 0.0, 0.0))
PLANE = PlaneMap(Lens(CAMERA.camera_matrix, CAMERA.dist_coeffs), CAMERA.image_to_table,
                 (960, 540))


def _card_mm(centre: tuple[float, float], angle: float, length: float = 88.0,
             from_end: int = 0) -> np.ndarray:
    """A card's corners on the table (corner 0 -> 1 its first end), or the ``length`` of it
    that reaches from end ``from_end``."""
    a = np.radians(angle)
    along, across = np.array([np.sin(a), np.cos(a)]), np.array([np.cos(a), -np.sin(a)])
    first = np.array(centre) - along * 44.0
    if from_end == 1:
        first = first + along * (88.0 - length)
    near = [first + across * 31.5, first - across * 31.5]
    return np.array([near[0], near[1], near[1] + along * length, near[0] + along * length])


def _shows(corners_px: np.ndarray, until: float, from_end: int = 0) -> list[np.ndarray]:
    """What shows of an outline: the share ``until`` of its length from end ``from_end``."""
    c = corners_px
    if from_end == 1:
        c = c[[3, 2, 1, 0]]
    far = [c[0] + (c[3] - c[0]) * until, c[1] + (c[2] - c[1]) * until]
    return [np.array([c[0], c[1], far[1], far[0]])]


def _rendered(*cards: tuple[str, tuple[float, float], float],
              size_mm: tuple[float, float] = (63.0, 88.0)) -> tuple[np.ndarray, list]:  # type: ignore[type-arg]
    scene = Scene(tuple(replace(card(f"c{k}", code, "aisleriot:anglo_poker", centre, angle),
                                size_mm=size_mm)
                        for k, (code, centre, angle) in enumerate(cards)))
    image, truth = Renderer(CAMERA, np.random.default_rng(5), CLEAN,
                            surface_colour=(40, 90, 30)).render(scene)
    return image, truth.objects


@pytest.mark.parametrize("from_end", [0, 1])
@pytest.mark.parametrize("angle", [0.0, 35.0, 100.0])
def test_a_card_showing_one_end_is_a_card_s_size_from_that_end(from_end: int,
                                                               angle: float) -> None:
    whole = PLANE.to_pixels(_card_mm((10.0, -20.0), angle))
    # outlined 70% of its length from its shown end, which shows for half its length
    short = PLANE.to_pixels(_card_mm((10.0, -20.0), angle, 0.7 * 88, from_end))
    assert _iou(short, whole) < 0.75
    (done,) = card_shaped([short], [_shows(short, 0.5 / 0.7, from_end)], PLANE)
    assert np.abs(done - whole).max() < 0.5  # the same corners, in the same order


def test_a_card_shorter_than_wide_is_still_told_its_ends_by_their_width() -> None:
    whole = PLANE.to_pixels(_card_mm((-30.0, 10.0), 60.0))
    short = PLANE.to_pixels(_card_mm((-30.0, 10.0), 60.0, 45.0))  # 45 x 63 mm
    (done,) = card_shaped([np.roll(short, 1, axis=0)], [_shows(short, 0.6)], PLANE)
    assert np.abs(np.roll(done, -1, axis=0) - whole).max() < 0.5


def test_an_outline_showing_both_ends_or_neither_or_no_card_s_end_stays() -> None:
    whole = PLANE.to_pixels(_card_mm((0.0, 0.0), 20.0))
    short = PLANE.to_pixels(_card_mm((0.0, 0.0), 20.0, 70.0))
    middle = [np.array([*_shows(short, 0.7)[0][2:], *_shows(short, 0.3)[0][2:][::-1]])]
    # a strip 40 mm wide (a long side that shows, say) is no card's end
    narrow = short.copy()
    narrow[1] = short[0] + (short[1] - short[0]) * 40 / 63
    narrow[2] = short[3] + (short[2] - short[3]) * 40 / 63
    # two cards side by side outlined as one (82 mm across) show one end: no card's
    wide = PLANE.to_pixels(_card_mm((0.0, 0.0), 0.0, 120.0) @ np.diag([82 / 63, 1.0]))
    outlines = [whole, short, short, narrow, wide]
    shown = [[whole], [short], middle, _shows(narrow, 0.5), _shows(wide, 0.5)]
    done = card_shaped(outlines, shown, PLANE)
    assert all(d is o for d, o in zip(done, outlines, strict=True))
    assert card_shaped([short], [[]], PLANE)[0] is short  # nothing shows


def test_detect_outlines_a_covered_card_whole_on_a_calibrated_table(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The seven lies across the four's lower end; the four is outlined a little beyond
    # the seven's near edge, short of its own end, as the detector often outlines it.
    image, objects = _rendered(("4S", (0.0, 0.0), 0.0), ("7H", (0.0, 50.0), 90.0))
    under, top = (np.array(o.corners_px) for o in objects)
    short = PLANE.to_pixels(_card_mm((0.0, 0.0), 0.0, 70.0))  # 18 mm short, 7.5 under the 7
    assert _iou(short, under) < 0.85
    boxes = [short, top]

    def outlined(plane: PlaneMap | None) -> list[np.ndarray]:
        found = detect(image, _ReadsAs("4S", 0.99), _FindsThese(boxes),  # type: ignore[arg-type]
                       shapes_too=False, plane=plane)
        return [np.array(c.corners) for c in found.cards]

    # (without the calibration the seven would tell the plane near itself: told to tell it
    # nowhere, test_card_plane)
    monkeypatch.setattr(detect_module, "NEAR_MM", 0.0)
    plain = outlined(None)
    assert max(_iou(c, under) for c in plain) < 0.85
    calibrated = outlined(PLANE)
    assert max(_iou(c, under) for c in calibrated) > 0.97
    assert max(_iou(c, top) for c in calibrated) > 0.95  # the card on top as it was
    found = detect(image, _ReadsAs("4S", 0.99), _FindsThese(boxes),  # type: ignore[arg-type]
                   shapes_too=False, plane=PLANE)
    (covered,) = [c for c in found.cards if _iou(np.array(c.corners), under) > 0.97]
    shows = sum(Polygon(p).area for p in covered.visible) / Polygon(under).area
    assert shows == pytest.approx(objects[0].visible_fraction, abs=0.04)


def _skewed(corners_mm: np.ndarray, end: int, longer: float, sideways: float) -> np.ndarray:
    """A card's outline on the table whose end ``end`` is moved ``longer`` mm outwards and
    ``sideways`` mm across (one corner only: the end askew)."""
    q = corners_mm.copy()
    near, far = ((1, 2), (0, 3)) if end == 0 else ((2, 1), (3, 0))
    along = (q[near[0]] - q[near[1]]) / np.linalg.norm(q[near[0]] - q[near[1]])
    q[near[0]] += along * longer
    q[far[0]] += along * (longer + sideways)
    return q


@pytest.mark.parametrize("end", [0, 1])
def test_an_outline_with_one_end_a_card_s_and_one_off_is_a_card_from_the_first(
        end: int) -> None:
    card_mm = _card_mm((20.0, 10.0), 70.0)
    whole = PLANE.to_pixels(card_mm)
    off = PLANE.to_pixels(_skewed(card_mm, end, 12.0, 6.0))  # that end 12-18 mm out
    assert _iou(off, whole) < 0.9
    (done,) = card_shaped([off], [[off]], PLANE)  # all of it shows
    assert np.abs(done - whole).max() < 0.5


def test_under_only_an_outline_showing_one_end_is_made_a_card() -> None:
    # the outline of test_an_outline_with_one_end_a_card_s_and_one_off_is_a_card_from_the_first
    # all of which shows stays (a card a box lies on, on a real photo, need be none); the
    # same outline with its far end hidden is still made a card from its near end
    card_mm = _card_mm((20.0, 10.0), 70.0)
    whole = PLANE.to_pixels(card_mm)
    off = PLANE.to_pixels(_skewed(card_mm, 1, 12.0, 6.0))  # end 1 (corners 2, 3) off
    (kept,) = card_shaped([off], [[off]], PLANE, under_only=True)
    assert kept is off
    near_half = np.array([off[0], off[1], (off[1] + off[2]) / 2, (off[0] + off[3]) / 2])
    (done,) = card_shaped([off], [[near_half]], PLANE, under_only=True)
    assert np.abs(done - whole).max() < 0.5


def test_a_card_s_shape_or_one_no_end_of_which_is_a_card_s_or_both_stays() -> None:
    card_mm = _card_mm((-10.0, 0.0), 15.0)
    whole = PLANE.to_pixels(card_mm)
    both_off = PLANE.to_pixels(_skewed(_skewed(card_mm, 0, 10.0, 6.0), 1, 10.0, 6.0))
    too_long = PLANE.to_pixels(_card_mm((-10.0, 0.0), 15.0, 100.0))  # which end is right?
    # its first end as wide as no card, though its corners are right angles
    wide_end = PLANE.to_pixels(_skewed(_card_mm((-10.0, 0.0), 0.0) @ np.diag([70 / 63, 1.0]),
                                       1, 10.0, 6.0))
    outlines = [whole, both_off, too_long, wide_end]
    done = card_shaped(outlines, [[o] for o in outlines], PLANE)
    assert all(d is o for d, o in zip(done, outlines, strict=True))


def test_detect_reports_a_card_outlined_too_long_as_a_card_and_what_shows_of_that() -> None:
    image, (seen,) = _rendered(("4S", (0.0, 0.0), 30.0))
    true = np.array(seen.corners_px)
    long = PLANE.to_pixels(_skewed(np.array(seen.corners_mm), 1, 12.0, 6.0))
    assert _iou(long, true) < 0.9
    found = detect(image, _ReadsAs("4S", 0.99), _FindsThese([long]),  # type: ignore[arg-type]
                   shapes_too=False, plane=PLANE)
    (seen,) = found.cards
    assert _iou(np.array(seen.corners), true) > 0.97
    (shows,) = seen.visible
    assert Polygon(shows).area == pytest.approx(Polygon(true).area, rel=0.01)


def _off_mm(outline: np.ndarray, card_mm: np.ndarray) -> float:
    """How far (mm on the table) the farthest of a card's corners is from the outline's
    nearest corner."""
    table = PLANE.to_table(outline)
    return float(np.linalg.norm(card_mm[:, None] - table[None], axis=2).min(axis=1).max())


def test_an_outline_no_end_of_which_is_a_card_s_is_moved_onto_the_card_s_edges() -> None:
    image, (seen,) = _rendered(("9D", (-20.0, 15.0), 25.0))
    true_mm = np.array(seen.corners_mm)
    # both ends askew, the outline turned and a few mm off: no end is a card's
    off = _skewed(_skewed(true_mm, 0, 6.0, -6.0), 1, -4.0, 7.0) + np.array([4.0, -3.0])
    turn = np.radians(3.0)  # and turned 3 degrees
    centre = off.mean(axis=0)
    off = centre + (off - centre) @ np.array([[np.cos(turn), np.sin(turn)],
                                              [-np.sin(turn), np.cos(turn)]])
    outline = PLANE.to_pixels(off)
    truth = np.array(seen.corners_px)
    assert _iou(outline, truth) < 0.9 and _off_mm(outline, true_mm) > 5
    assert card_shaped([outline], [[outline]], PLANE)[0] is outline  # no picture: as it was
    (done,) = card_shaped([outline], [[outline]], PLANE, gradients(image))
    assert _iou(done, truth) > 0.95
    assert _off_mm(done, true_mm) < 1.5


def test_a_bridge_deck_s_card_is_held_to_the_size_the_calibration_names() -> None:
    bridge = (57.0, 89.0)
    image, (seen,) = _rendered(("9D", (-20.0, 15.0), 25.0), size_mm=bridge)
    true_mm = np.array(seen.corners_mm)
    # both ends askew and a few mm off: no end is a card's
    outline = PLANE.to_pixels(_skewed(_skewed(true_mm, 0, 6.0, -6.0), 1, -4.0, 7.0)
                              + np.array([4.0, -3.0]))
    assert _off_mm(outline, true_mm) > 5
    slopes = gradients(image)
    (told,) = card_shaped([outline], [[outline]], PLANE, slopes, bridge)
    assert _off_mm(told, true_mm) < 1.5
    assert _iou(told, np.array(seen.corners_px)) > 0.95
    # held to a standard card's size instead, it is 3 mm too wide on each side
    (standard,) = card_shaped([outline], [[outline]], PLANE, slopes)
    assert _off_mm(standard, true_mm) > 2.5
    # and a bridge card under another is made its own length from the end it shows
    short = PLANE.to_pixels(np.array([
        true_mm[0], true_mm[1], true_mm[1] + 0.6 * (true_mm[2] - true_mm[1]),
        true_mm[0] + 0.6 * (true_mm[3] - true_mm[0])]))
    (whole,) = card_shaped([short], [_shows(short, 0.8)], PLANE, card_mm=bridge)
    assert _off_mm(whole, true_mm) < 0.5


def test_detect_holds_a_bridge_deck_s_card_to_the_size_it_is_told() -> None:
    bridge = (57.0, 89.0)
    image, objects = _rendered(("4S", (0.0, 0.0), 0.0), ("7H", (0.0, 50.0), 90.0),
                               size_mm=bridge)
    under, top = (np.array(o.corners_px) for o in objects)
    true_mm = np.array(objects[0].corners_mm)
    # the four outlined 18 mm short of its end under the seven (its corners 0 and 1)
    short = PLANE.to_pixels(np.array([
        true_mm[3] + 0.8 * (true_mm[0] - true_mm[3]),
        true_mm[2] + 0.8 * (true_mm[1] - true_mm[2]), true_mm[2], true_mm[3]]))
    assert _iou(short, under) < 0.85

    def four(card_mm: tuple[float, float]) -> np.ndarray:
        found = detect(image, _ReadsAs("4S", 0.99), _FindsThese([short, top]),  # type: ignore[arg-type]
                       shapes_too=False, plane=PLANE, card_mm=card_mm)
        return max((np.array(c.corners) for c in found.cards), key=lambda c: _iou(c, under))

    assert _off_mm(four(bridge), true_mm) < 1.5
    assert _off_mm(four((63.0, 88.0)), true_mm) > 2.5


def test_a_bridge_deck_s_card_outlined_right_is_left_as_it_is_when_told_its_size() -> None:
    bridge = (57.0, 89.0)
    image, (seen,) = _rendered(("9D", (-20.0, 15.0), 25.0), size_mm=bridge)
    outline = np.array(seen.corners_px)
    slopes = gradients(image)
    assert card_shaped([outline], [[outline]], PLANE, slopes, bridge)[0] is outline
    (moved,) = card_shaped([outline], [[outline]], PLANE, slopes)  # no 63 x 88 card's shape
    assert moved is not outline


def test_a_card_under_another_is_moved_by_the_end_it_shows_and_its_long_sides() -> None:
    image, (under, _top) = _rendered(("4S", (0.0, 0.0), 0.0), ("7H", (0.0, 50.0), 90.0))
    true_mm = np.array(under.corners_mm)
    # outlined whole but 3 mm too far along and 2 mm sideways: the hidden end tells nothing,
    # the seven's edge across the four must not be taken for it
    off = _card_mm((2.0, 3.0), 0.0)
    outline = PLANE.to_pixels(off)
    shows = _shows(outline, 0.6)
    (done,) = card_shaped([outline], [shows], PLANE, gradients(image))
    assert _off_mm(done, true_mm) < 1.5
    assert _iou(done, np.array(under.corners_px)) > 0.95


def test_a_card_s_shape_showing_whole_is_not_moved_and_a_rectangle_too_long_is() -> None:
    image, (seen,) = _rendered(("9D", (-20.0, 15.0), 25.0))
    true_mm = np.array(seen.corners_mm)
    near = PLANE.to_pixels(true_mm + np.array([2.0, 1.0]))
    assert card_shaped([near], [[near]], PLANE, gradients(image))[0] is near
    # both ends a card's, 10 mm too long: which end is right, the picture's edges tell
    long = PLANE.to_pixels(_skewed(true_mm, 1, 10.0, 0.0))
    (done,) = card_shaped([long], [[long]], PLANE, gradients(image))
    assert _off_mm(done, true_mm) < 1.5



@pytest.mark.parametrize(("whole", "short", "read"), [
    (("4S", 0.99), ("AS", 0.7), "4S"),   # read surer as another card where moved: that card
    (("AS", 0.6), ("4S", 0.7), "4S"),    # read less surely as another: as it was
    (("??", 0.95), ("4S", 0.5), "4S"),   # a moved outline read ?? keeps its card
])
def test_a_card_moved_on_the_table_is_read_again_there(whole: tuple[str, float],
                                                       short: tuple[str, float],
                                                       read: str) -> None:
    image, objects = _rendered(("4S", (0.0, 0.0), 0.0), ("7H", (0.0, 50.0), 90.0))
    under, top = (np.array(o.corners_px) for o in objects)
    short_px = PLANE.to_pixels(_card_mm((0.0, 0.0), 0.0, 70.0))
    reader = _ReadsIf(lambda c: _iou(c, under) > 0.95, whole, short)
    found = detect(image, reader, _FindsThese([short_px, top]),  # type: ignore[arg-type]
                   shapes_too=False, plane=PLANE)
    (covered,) = [c for c in found.cards if _iou(np.array(c.corners), under) > 0.95]
    assert covered.card == read


class _ReadsIfOneCorner(_OneCorner, _ReadsIf):
    """As ``_ReadsIf``, but the second corner of each outline reads as no card."""


def test_a_card_moved_on_the_table_is_not_taken_for_a_joker_one_corner_reads_unsure() -> None:
    image, objects = _rendered(("4S", (0.0, 0.0), 0.0), ("7H", (0.0, 50.0), 90.0))
    under, top = (np.array(o.corners_px) for o in objects)
    short_px = PLANE.to_pixels(_card_mm((0.0, 0.0), 0.0, 70.0))
    for joker, read in ((JOKER_CORNER_SURE - 0.05, "4S"), (JOKER_CORNER_SURE, "JK")):
        reader = _ReadsIfOneCorner(lambda c: _iou(c, under) > 0.95, ("JK", joker), ("4S", 0.7))
        found = detect(image, reader, _FindsThese([short_px, top]),  # type: ignore[arg-type]
                       shapes_too=False, plane=PLANE)
        (covered,) = [c for c in found.cards if _iou(np.array(c.corners), under) > 0.95]
        assert covered.card == read
    # Where it was outlined short, a joker one corner read unsure is ??: read as a card where
    # moved, however less surely, it is that card.
    reader = _ReadsIfOneCorner(lambda c: _iou(c, under) > 0.95, ("4S", 0.7),
                       ("JK", JOKER_CORNER_SURE - 0.05))
    found = detect(image, reader, _FindsThese([short_px, top]),  # type: ignore[arg-type]
                   shapes_too=False, plane=PLANE)
    (covered,) = [c for c in found.cards if _iou(np.array(c.corners), under) > 0.95]
    assert covered.card == "4S"


def test_a_card_is_not_made_from_a_shown_end_of_no_card_s_width() -> None:
    # an outline whose shown end (1) is 82 mm wide though its hidden end is a card's width
    wedge_mm = _card_mm((0.0, 0.0), 0.0, 80.0)
    wedge_mm[2] += np.array([-9.5, 0.0])
    wedge_mm[3] += np.array([9.5, 0.0])
    wedge = PLANE.to_pixels(wedge_mm)
    (done,) = card_shaped([wedge], [_shows(wedge, 0.5, from_end=1)], PLANE)
    assert done is wedge


def test_detect_moves_an_outline_askew_onto_the_card_and_keeps_one_of_two() -> None:
    image, (seen,) = _rendered(("4S", (-20.0, 15.0), 25.0))
    true_mm, truth = np.array(seen.corners_mm), np.array(seen.corners_px)
    askew = _skewed(_skewed(true_mm, 0, 6.0, -6.0), 1, -4.0, 7.0) + np.array([4.0, -3.0])
    outline = PLANE.to_pixels(askew)
    assert _iou(outline, truth) < 0.9
    (alone,) = detect(image, _ReadsAs("4S", 0.99), _FindsThese([outline]),  # type: ignore[arg-type]
                      shapes_too=False, plane=PLANE).cards
    assert _iou(np.array(alone.corners), truth) > 0.95
    # the card's own outline, and one of its first 40 mm (its far end askew) made the card
    # from its first end: the same card twice, of which the surer read stays
    right, part = _outlined_twice(true_mm, truth)
    assert _iou(part, truth) < 0.5
    for sure, read in ((0.99, "4S"), (0.5, "4C")):
        reader = _ReadsIf(lambda c: _iou(c, right) > 0.999, ("4S", sure), ("4C", 0.6))
        found = detect(image, reader, _FindsThese([part, right]),  # type: ignore[arg-type]
                       shapes_too=False, plane=PLANE).cards
        assert [c.card for c in found] == [read]
        assert _iou(np.array(found[0].corners), truth) > 0.95


def _outlined_twice(true_mm: np.ndarray, truth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A card outlined right (``truth``, image pixels, give or take a third of a pixel) and
    by its first 40 mm, its far end askew (``true_mm``: its corners on the table)."""
    part_mm = true_mm.copy()
    part_mm[[3, 2]] = part_mm[[0, 1]] + (part_mm[[3, 2]] - part_mm[[0, 1]]) * 40 / 88
    return truth + 0.3, PLANE.to_pixels(_skewed(part_mm, 1, 0.0, 6.0))


def test_of_one_card_outlined_twice_on_a_calibrated_table_one_read_unsure_goes() -> None:
    # The part is read a joker by one corner, unsure: ?? (``cards.joker_checked``), surer
    # than the whole card's reading (4C, 0.6). Made the card from its first end, it repeats
    # the whole outline: the one read as a card stays, however less surely it was read.
    image, (seen,) = _rendered(("4S", (-20.0, 15.0), 25.0))
    true_mm, truth = np.array(seen.corners_mm), np.array(seen.corners_px)
    right, part = _outlined_twice(true_mm, truth)
    unsure = JOKER_CORNER_SURE - 0.05
    assert unsure > 0.6
    reader = _ReadsIfOneCorner(lambda c: _iou(c, right) > 0.999, ("4C", 0.6), ("JK", unsure))
    found = detect(image, reader, _FindsThese([part, right]),  # type: ignore[arg-type]
                   shapes_too=False, plane=PLANE).cards
    assert [c.card for c in found] == ["4C"]
    assert _iou(np.array(found[0].corners), truth) > 0.95


def test_a_degenerate_outline_is_left_as_it_is_without_warnings() -> None:
    import warnings

    image, _ = _rendered(("9D", (0.0, 0.0), 0.0))
    point = np.full((4, 2), 300.0)
    sliver = np.array([[300.0, 300.0], [301.0, 300.0], [301.0, 400.0], [300.0, 400.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        done = card_shaped([point, sliver], [[point], [sliver]], PLANE, gradients(image))
    assert done[0] is point and done[1] is sliver


@pytest.mark.parametrize("from_end", [0, 1])
@pytest.mark.parametrize("angle", [0.0, 35.0, 100.0])
def test_the_end_that_shows_is_the_one_whose_other_does_not(from_end: int, angle: float) -> None:
    from referee.detection.card_shape import shown_end

    outline = PLANE.to_pixels(_card_mm((10.0, -20.0), angle))
    end = outline[[0, 1]] if from_end == 0 else outline[[3, 2]]
    other = outline[[3, 2]] if from_end == 0 else outline[[0, 1]]
    for turned in range(4):  # whichever corner the outline starts from
        found = shown_end(np.roll(outline, turned, axis=0), _shows(outline, 0.6, from_end))
        assert found is not None
        # its two corners (either way round), then the corner each leads to along its side
        first = int(np.argmin(np.linalg.norm(end - found[0], axis=1)))
        assert np.allclose(found[:2], end[[first, 1 - first]])
        assert np.allclose(found[2:], other[[first, 1 - first]])
    assert shown_end(outline, [outline]) is None  # both ends show
    # neither: its middle shows, under a card on each end
    along = outline[[3, 2]] - outline[[0, 1]]
    middle = np.array([*(outline[[0, 1]] + 0.2 * along), *(outline[[0, 1]] + 0.8 * along)[::-1]])
    assert shown_end(outline, [middle]) is None
    assert shown_end(outline, []) is None


def test_an_outline_s_ends_are_its_opposite_sides_shorter_together() -> None:
    from referee.detection.card_shape import shown_end

    # sides 0-1 and 2-3 are 50 and 100 px long, 1-2 and 3-0 61 and 72: the ends are the
    # second pair, though 0-1 is the shortest side
    quad = np.array([[0.0, 0.0], [50.0, 0.0], [60.0, 60.0], [-40.0, 60.0]]) + 200.0
    found = shown_end(quad, _shows(np.roll(quad, -1, axis=0), 0.6))
    assert found is not None
    assert {tuple(p) for p in found[:2]} == {tuple(quad[1]), tuple(quad[2])}
