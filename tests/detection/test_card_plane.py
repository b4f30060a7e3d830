"""The table's plane from the cards on it (``detection.card_plane``), and ``detect`` using it
where nobody calibrated the table."""

from __future__ import annotations

import numpy as np
import pytest

from referee.calibration.rectify import PlaneMap
from referee.detection import detect as detect_module
from referee.detection.card_plane import FIT_MM, card_plane, one_card_plane
from referee.detection.detect import detect
from synth.camera import Camera
from tests.detection.test_card_shape import CAMERA, PLANE, _card_mm, _rendered, _shows
from tests.detection.test_crops_and_outlines import _FindsThese, _iou, _ReadsAs

SIZE = CAMERA.image_size
#: Cards lying apart on the table (centre mm, turn degrees), spread over the picture.
APART = [((-150.0, -60.0), 10.0), ((140.0, -70.0), 80.0), ((-120.0, 90.0), 130.0),
         ((130.0, 80.0), 45.0), ((0.0, -100.0), 0.0)]


def _off_card_mm(plane: PlaneMap, corners_px: np.ndarray) -> float:
    """How far (mm) an outline lies on ``plane``'s table from a 63 x 88 mm card: the largest
    error of its sides and diagonals."""
    table = plane.to_table(corners_px)
    sides = np.linalg.norm(table - np.roll(table, -1, axis=0), axis=1)
    diagonals = np.linalg.norm(table[:2] - table[2:], axis=1)
    card = np.array([63.0, 88.0, 63.0, 88.0])
    return float(max(min(np.abs(sides - card).max(), np.abs(sides - card[::-1]).max()),
                     np.abs(diagonals - np.hypot(63.0, 88.0)).max()))


def _outlines(rng: np.random.Generator, noise_px: float = 0.4) -> list[np.ndarray]:
    return [PLANE.to_pixels(_card_mm(centre, angle)) + rng.normal(0, noise_px, (4, 2))
            for centre, angle in APART]


def test_cards_seen_whole_give_the_plane_every_card_on_it_is_a_card_s_shape_on() -> None:
    rng = np.random.default_rng(3)
    found = card_plane(_outlines(rng), SIZE)
    assert found is not None and found.card_mm == (63.0, 88.0) and found.fitting == 5
    plane = found.plane
    # cards elsewhere on the table, none of them used, are a card's shape on it too; a
    # homography alone, without the lens's bend, leaves them 3-6 mm off
    elsewhere = [PLANE.to_pixels(_card_mm(centre, angle))
                 for centre, angle in [((0.0, 20.0), 25.0), ((-60.0, -40.0), 95.0),
                                       ((70.0, 40.0), 160.0)]]
    assert max(_off_card_mm(plane, c) for c in elsewhere) < 1.0
    assert plane.lens is not None and plane.lens.dist_coeffs[0] < 0  # a barrel lens
    # a card 15 mm short is no card's shape there
    assert _off_card_mm(plane, PLANE.to_pixels(_card_mm((0.0, 20.0), 25.0, 73.0))) > 10


def test_a_card_outlined_wrongly_does_not_bend_the_plane() -> None:
    rng = np.random.default_rng(4)
    outlines = _outlines(rng)
    # one outline two cards long (two cards side by side outlined as one)
    outlines[2] = PLANE.to_pixels(_card_mm((-120.0, 90.0), 130.0, 150.0))
    found = card_plane(outlines, SIZE)
    assert found is not None and found.fitting == 4
    plane = found.plane
    assert _off_card_mm(plane, outlines[2]) > 3 * FIT_MM
    check = PLANE.to_pixels(_card_mm((0.0, 20.0), 25.0))
    assert _off_card_mm(plane, check) < 1.0


def _card(centre: tuple[float, float], angle: float, size_mm: tuple[float, float],
          rng: np.random.Generator, noise_px: float = 0.4,
          plane: PlaneMap = PLANE) -> np.ndarray:
    """A card ``size_mm`` in size lying at ``centre`` turned ``angle`` degrees, as outlined
    in the picture ``plane`` maps (corners off by ``noise_px``)."""
    a = np.radians(angle)
    along, across = np.array([np.sin(a), np.cos(a)]), np.array([np.cos(a), -np.sin(a)])
    corners = [np.array(centre) + sign_l * along * size_mm[1] / 2
               + sign_w * across * size_mm[0] / 2
               for sign_l, sign_w in [(-1, 1), (-1, -1), (1, -1), (1, 1)]]
    return plane.to_pixels(np.array(corners)) + rng.normal(0, noise_px, (4, 2))


def test_cards_of_a_bridge_deck_tell_the_plane_for_their_size() -> None:
    rng = np.random.default_rng(6)
    bridge = [_card(centre, angle, (57.0, 89.0), rng) for centre, angle in APART]
    found = card_plane(bridge, SIZE)
    assert found is not None and found.card_mm == (57.0, 89.0) and found.fitting == 5
    # told the deck's size, none fits a poker card's plane
    assert card_plane(bridge, SIZE, [(63.0, 88.0)]) is None
    poker = card_plane(_outlines(rng), SIZE)
    assert poker is not None and poker.card_mm == (63.0, 88.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_many_cards_of_either_size_or_neither_give_a_plane_or_none(seed: int) -> None:
    # Eight cards: trying the size they are not, the search leaves cards out up to DROPS
    # times (it once then failed with an IndexError, helper review, session 55).
    spots = [*APART, ((-40.0, 60.0), 70.0), ((50.0, 0.0), 20.0), ((-60.0, -10.0), 100.0)]
    for size, fitting in [((63.0, 88.0), 8), ((57.0, 89.0), 8), ((70.0, 120.0), None)]:
        rng = np.random.default_rng(seed)
        found = card_plane([_card(centre, angle, size, rng) for centre, angle in spots], SIZE)
        if fitting is None:  # a tarot card's shape is neither size's
            assert found is None
        else:
            assert found is not None and found.card_mm == size and found.fitting == fitting


def test_no_plane_from_a_lens_too_bent_to_straighten_the_picture_s_corners() -> None:
    from referee.detection.card_plane import _sees_table

    half = (0.5, 0.28)  # a 16:9 picture, normalised by its width
    plane = np.eye(3)
    assert _sees_table(plane, 0.0, half) and _sees_table(plane, -0.3, half)
    # a barrel bend of k1 r^2 under -4/27 has no straight point for the corners
    assert not _sees_table(plane, -0.5, half)
    # and a horizon across the picture is no table seen from above
    assert not _sees_table(np.array([[1.0, 0, 0], [0, 1, 0], [2.0, 0, 1]]), 0.0, half)


def test_no_plane_from_fewer_than_three_cards_that_agree() -> None:
    rng = np.random.default_rng(5)
    outlines = _outlines(rng)
    assert card_plane([], SIZE) is None
    assert card_plane(outlines[:1], SIZE) is None  # one card fits some plane exactly
    assert card_plane(outlines[:2], SIZE) is None  # and two, a plane and lens bent so
    # two cards and a quad no card could be on the same table
    squashed = outlines[2].copy()
    squashed[2:] = squashed[1::-1] + (squashed[2:] - squashed[1::-1]) * 0.3
    assert _off_card_mm(PLANE, squashed) > 20
    assert card_plane([*outlines[:2], squashed], SIZE) is None
    assert card_plane(outlines[:3], SIZE) is not None


@pytest.mark.parametrize("size_mm", [(63.0, 88.0), (57.0, 89.0)])
@pytest.mark.parametrize("others", [2, 1])
def test_detect_outlines_a_covered_card_whole_by_the_cards_seen_whole(
        others: int, size_mm: tuple[float, float]) -> None:
    # The four is covered by the seven and outlined short of its end, as the detector often
    # outlines it (test_card_shape: on a calibrated table it is made whole). Here nobody
    # calibrated the table: three cards seen whole tell its plane (the seven among them:
    # nothing lies on it) and which size of card they are; with two, the seven tells the
    # plane near itself as a camera would see it (one_card_plane).
    cards = [("4S", (0.0, 0.0), 0.0), ("7H", (0.0, 50.0), 90.0),
             ("9C", (-150.0, -60.0), 10.0), ("KD", (140.0, -70.0), 80.0)][:2 + others]
    image, objects = _rendered(*cards, size_mm=size_mm)
    truths = [np.array(o.corners_px) for o in objects]
    # the four's outline from the end that shows, 85% of its length (its other end under the
    # seven)
    short = _short(truths[0])
    assert _iou(short, truths[0]) < 0.9
    # (one card does not tell its size: a bridge deck's is told, as by a calibration)
    told = size_mm if others == 1 and size_mm != (63.0, 88.0) else None
    found = detect(image, _ReadsAs("4S", 0.99), _FindsThese([short, *truths[1:]]),  # type: ignore[arg-type]
                   shapes_too=False, card_mm=told)
    under = max(_iou(np.array(c.corners), truths[0]) for c in found.cards)
    assert under > 0.95
    for truth in truths[1:]:  # the cards seen whole as they were
        assert max(_iou(np.array(c.corners), truth) for c in found.cards) > 0.95


@pytest.mark.parametrize(("poker", "bridge", "chosen", "bridge_tried"), [
    ((5, 0.4), (5, 0.1), (63.0, 88.0), False),  # all fit 63 x 88: bridge not tried
    ((4, 0.4), (4, 0.19), (57.0, 89.0), True),  # as many, under half as far off
    ((4, 0.4), (4, 0.2), (63.0, 88.0), True),   # as many, half as far off: not enough
    ((3, 0.1), (4, 1.4), (57.0, 89.0), True),   # more fit it
    (None, (3, 0.5), (57.0, 89.0), True),       # no plane for 63 x 88
    (None, None, None, True),
])
def test_the_bridge_size_is_tried_and_taken_only_as_its_rules_say(
        monkeypatch: pytest.MonkeyPatch, poker: tuple[int, float] | None,
        bridge: tuple[int, float] | None, chosen: tuple[float, float] | None,
        bridge_tried: bool) -> None:
    import referee.detection.card_plane as card_plane_module
    from referee.detection.card_plane import DROPS, CardPlane

    tried: list[tuple[tuple[float, float], int]] = []
    fits = {(63.0, 88.0): poker, (57.0, 89.0): bridge}

    def fitted(outlines: object, image_size: object, card_mm: tuple[float, float],
               drops: int) -> CardPlane | None:
        tried.append((card_mm, drops))
        fit = fits[card_mm]
        return None if fit is None else CardPlane(PLANE, card_mm, fit[0], fit[1])

    monkeypatch.setattr(card_plane_module, "_fitted", fitted)
    found = card_plane([np.zeros((4, 2))] * 5, SIZE)
    assert (found.card_mm if found else None) == chosen
    # 63 x 88 searched leaving cards out, bridge (where tried) not
    assert tried == [((63.0, 88.0), DROPS), *([((57.0, 89.0), 0)] if bridge_tried else [])]


def _short(card: np.ndarray) -> np.ndarray:
    """The outline (image pixels) of the card at the origin (``card``) from its end furthest
    from the seven at (0, 50), 85% of its length."""
    table = PLANE.to_table(card)
    near = 0 if table[:, 1].mean() > table[0, 1] else 2
    ends = table[[near, near + 1]], table[[(near + 3) % 4, (near + 2) % 4]]
    return PLANE.to_pixels(np.array([*ends[0], *(ends[0] + 0.85 * (ends[1] - ends[0]))[::-1]]))


def _covered_four(monkeypatch: pytest.MonkeyPatch, near_mm: float) -> float:
    """The four of test_detect_outlines_a_covered_card_whole_by_the_cards_seen_whole under
    the seven alone (so no plane of three cards), outlines within ``near_mm`` of a card seen
    whole made a card's shape: the IoU of the four's outline with the card."""
    monkeypatch.setattr(detect_module, "NEAR_MM", near_mm)
    image, objects = _rendered(("4S", (0.0, 0.0), 0.0), ("7H", (0.0, 50.0), 90.0))
    truths = [np.array(o.corners_px) for o in objects]
    found = detect(image, _ReadsAs("4S", 0.99), _FindsThese([_short(truths[0]), truths[1]]),  # type: ignore[arg-type]
                   shapes_too=False)
    assert max(_iou(np.array(c.corners), truths[1]) for c in found.cards) > 0.95
    return max(_iou(np.array(c.corners), truths[0]) for c in found.cards)


def test_one_card_seen_whole_tells_the_plane_only_near_itself(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the seven's centre lies 50-60 mm from the four's outline's
    assert _covered_four(monkeypatch, 80.0) > 0.95
    assert _covered_four(monkeypatch, 30.0) < 0.9  # (as outlined: 0.87)


#: A camera with no lens bend whose optical centre is the picture's middle, as
#: ``one_card_plane`` takes a camera to be (its field of view 66 degrees, between those it
#: tries).
PINHOLE = Camera.looking_at((0.0, 0.0), 450.0, tilt_deg=30.0, yaw_deg=-15.0, hfov_deg=66.0,
                            image_size=(1280, 720))
PINHOLE_PLANE = PlaneMap(None, PINHOLE.image_to_table, (1280, 720))


@pytest.mark.parametrize("size_mm", [(63.0, 88.0), (57.0, 89.0)])
def test_one_card_tells_the_plane_near_it(size_mm: tuple[float, float]) -> None:
    rng = np.random.default_rng(2)
    card = _card((-40.0, 20.0), 25.0, size_mm, rng, plane=PINHOLE_PLANE)
    found = one_card_plane(card, (1280, 720), [size_mm])
    assert found is not None and found.card_mm == size_mm and found.fitting == 1
    assert found.off_mm < 1.0
    assert found.plane.image_size == (1280, 720)  # (width, height), as a calibration's
    # the cards round it (up to 130 mm away) are a card's shape on it, within 3 mm (0.5-2.3)
    for centre, angle in [((60.0, 20.0), 80.0), ((-40.0, -90.0), 0.0), ((-150.0, 60.0), 40.0)]:
        other = _card(centre, angle, size_mm, rng, noise_px=0.0, plane=PINHOLE_PLANE)
        table = found.plane.to_table(other)
        sides = np.linalg.norm(table - np.roll(table, -1, axis=0), axis=1)
        assert np.abs(np.sort(sides) - np.sort([*size_mm, *size_mm])).max() < 3.0


def test_one_card_plane_needs_an_outline_a_camera_could_show_as_a_card() -> None:
    # two cards end to end outlined as one, and an outline one end of which is half as
    # wide as the other
    double = PINHOLE_PLANE.to_pixels(np.array([[0.0, 0.0], [63.0, 0.0], [63.0, 176.0],
                                               [0.0, 176.0]]))
    narrowing = PINHOLE_PLANE.to_pixels(np.array([[0.0, 0.0], [63.0, 0.0], [47.0, 88.0],
                                                  [16.0, 88.0]]))
    for outline in (double, narrowing):
        assert one_card_plane(outline, (1280, 720)) is None
    # one the lens bends a little (the camera of test_card_shape) still fits
    bent = PLANE.to_pixels(_card_mm((0.0, 0.0), 20.0))
    found = one_card_plane(bent, SIZE, [(63.0, 88.0)])
    assert found is not None and found.off_mm < 2.0


@pytest.mark.parametrize("seed", range(6))
def test_one_card_is_taken_for_the_first_size_it_may_be(seed: int) -> None:
    # seen from 450 mm, a 63 x 88 card outlined 0.5 px off is a 63 x 88 card (a bridge
    # card's camera may lie nearer it: one card does not tell its size) ...
    rng = np.random.default_rng(seed)
    card = _card((-40.0, 20.0), 25.0 + 30 * seed, (63.0, 88.0), rng, noise_px=0.5,
                 plane=PINHOLE_PLANE)
    found = one_card_plane(card, (1280, 720))
    assert found is not None and found.card_mm == (63.0, 88.0)
    # ... and a bridge card seen from 250 mm, turned so that no camera shows it as a 63 x 88
    # card (turned otherwise, some may), a bridge card
    near = Camera.looking_at((0.0, 0.0), 250.0, tilt_deg=30.0, yaw_deg=-15.0, hfov_deg=66.0,
                             image_size=(1280, 720))
    bridge = _card((0.0, 0.0), 25.0, (57.0, 89.0), rng, noise_px=0.3,
                   plane=PlaneMap(None, near.image_to_table, (1280, 720)))
    assert one_card_plane(bridge, (1280, 720), [(63.0, 88.0)]) is None
    found = one_card_plane(bridge, (1280, 720))
    assert found is not None and found.card_mm == (57.0, 89.0)


def test_one_card_plane_of_no_quad_is_none() -> None:
    card = _card((0.0, 0.0), 0.0, (63.0, 88.0), np.random.default_rng(0), plane=PINHOLE_PLANE)
    twice = card.copy()
    twice[1] = twice[0]  # two corners at one point
    tiny = card[0] + (card - card[0]) * 0.01
    nan = card.copy()
    nan[2, 0] = np.nan
    for outline in (twice, tiny, nan, np.zeros((4, 2))):
        assert one_card_plane(outline, (1280, 720)) is None


def test_no_plane_from_a_card_seen_so_slanted_the_horizon_is_in_the_picture() -> None:
    steep = Camera.looking_at((0.0, 0.0), 450.0, tilt_deg=80.0, hfov_deg=66.0,
                              image_size=(1280, 720))
    card = _card((0.0, 0.0), 20.0, (63.0, 88.0), np.random.default_rng(1), noise_px=0.0,
                 plane=PlaneMap(None, steep.image_to_table, (1280, 720)))
    assert one_card_plane(card, (1280, 720), [(63.0, 88.0)]) is None


def test_an_outline_takes_the_plane_of_the_nearest_card_seen_whole_within_near_mm() -> None:
    from referee.detection.detect import NEAR_MM, _near_planes, _partly_shown
    from referee.detection.outlines import Outline

    rng = np.random.default_rng(4)
    size = (63.0, 88.0)
    spots = [((-150.0, 0.0), 0.0), ((150.0, 0.0), 90.0),  # the cards seen whole, A and B
             ((-150.0, 120.0), 10.0),  # 120 mm from A
             ((10.0, 0.0), 0.0),  # 160 mm from A, 140 from B
             ((-150.0, -165.0), 0.0),  # 165 mm from A, further from B
             ((0.0, 260.0), 0.0),  # 300 mm from both
             ((-60.0, 40.0), 0.0)]  # near A, but all of it shows
    outlines = [Outline(_card(centre, angle, size, rng, plane=PINHOLE_PLANE), 1.0)
                for centre, angle in spots]
    whole = [True, True, False, False, False, False, False]
    readings = [("AS", 0.99), ("KD", 0.99)] + [("??", 0.0)] * 5
    # what shows: the cards seen whole and the last all of themselves, the others half
    half = [np.array([o.corners[0], o.corners[1], (o.corners[1] + o.corners[2]) / 2,
                      (o.corners[0] + o.corners[3]) / 2]) for o in outlines]
    visible = [[o.corners] for o in outlines[:2]] + [[h] for h in half[2:6]] \
        + [[outlines[6].corners]]
    assert 140.0 < NEAR_MM < 160.0
    partly = _partly_shown(outlines, visible)
    assert partly == [2, 3, 4, 5]
    planes = _near_planes(outlines, readings, whole, partly, [size], (1280, 720))
    assert planes[0] is None and planes[1] is None  # (the cards that tell them)
    a, b = (one_card_plane(outlines[k].corners, (1280, 720), [size]) for k in (0, 1))
    assert a is not None and b is not None
    for k, expected in [(2, a), (3, b)]:
        told = planes[k]
        assert told is not None and told.card_mm == size and told.under_only
        assert np.allclose(told.plane.image_to_table, expected.plane.image_to_table)
    assert planes[4] is None and planes[5] is None and planes[6] is None


def test_where_three_cards_seen_whole_do_not_agree_one_tells_the_plane_near_itself() -> None:
    # three cards seen whole, one of them outlined half as long again as a card: they tell
    # no plane of three, and the seven still tells the plane near itself for the four
    image, objects = _rendered(("4S", (0.0, 0.0), 0.0), ("7H", (0.0, 50.0), 90.0),
                               ("9C", (-150.0, -60.0), 10.0), ("KD", (140.0, -70.0), 80.0))
    truths = [np.array(o.corners_px) for o in objects]
    too_long = PLANE.to_pixels(_card_mm((140.0, -70.0), 80.0, 132.0))
    assert card_plane([truths[1], truths[2], too_long], SIZE) is None
    found = detect(image, _ReadsAs("4S", 0.99),
                   _FindsThese([_short(truths[0]), truths[1], truths[2], too_long]),  # type: ignore[arg-type]
                   shapes_too=False)
    assert max(_iou(np.array(c.corners), truths[0]) for c in found.cards) > 0.95


#: Cards lying in a row along the table, each over the end of the one before (centre mm,
#: turn degrees); none is seen whole in the tests below.
ROW = [((-150.0 + 60.0 * k, 10.0 * k), 95.0) for k in range(5)]


def _end(card: np.ndarray, shown: float = 0.4) -> np.ndarray:
    """An end of a card's outline (``_card``'s corners: 0 -> 1 an end), as
    ``card_shape.shown_end`` gives it: its corners, then the points ``shown`` of the way
    along its sides (all of them that shows)."""
    return np.array([card[0], card[1], card[0] + shown * (card[3] - card[0]),
                     card[1] + shown * (card[2] - card[1])])


def _sides_off_mm(plane: PlaneMap, card_px: np.ndarray, size_mm: tuple[float, float]) -> float:
    """How far (mm) a card's sides lie on ``plane``'s table from ``size_mm``'s."""
    table = plane.to_table(card_px)
    sides = np.sort(np.linalg.norm(table - np.roll(table, -1, axis=0), axis=1))
    return float(np.abs(sides - np.sort([*size_mm, *size_mm])).max())


def test_the_ends_of_covered_cards_tell_the_plane() -> None:
    from referee.detection.card_plane import ENDS_FIT_MEAN_MM, ends_plane

    rng = np.random.default_rng(7)
    size = (63.0, 88.0)
    ends = [_end(_card(centre, angle, size, rng, plane=PINHOLE_PLANE)) for centre, angle in ROW]
    found = ends_plane(ends, [], (1280, 720), size)
    assert found is not None and found.card_mm == size and found.fitting == 5
    assert found.off_mm < ENDS_FIT_MEAN_MM
    # where the cards lie the camera sees them foreshortened: whole cards there (and near)
    # are a card's size on the plane, within 2 mm; on the plane of a camera looking
    # straight down, 4-10 mm off
    down = np.array([[1.0, 0.0, -640.0], [0.0, 1.0, -360.0], [0.0, 0.0, 1.0]])
    square = PlaneMap(None, down, (1280, 720))
    for centre, angle in [*ROW, ((0.0, 120.0), 0.0), ((-100.0, -90.0), 30.0)]:
        whole = _card(centre, angle, size, rng, noise_px=0.0, plane=PINHOLE_PLANE)
        assert _sides_off_mm(found.plane, whole, size) < 2.0
        assert _sides_off_mm(square, whole * 63 / np.linalg.norm(whole[0] - whole[1]),
                             size) > 4.0


def test_ends_that_are_no_card_s_or_too_few_tell_no_plane() -> None:
    from referee.detection.card_plane import MIN_FITTING, ends_plane

    rng = np.random.default_rng(8)
    size = (63.0, 88.0)
    ends = [_end(_card(centre, angle, size, rng, plane=PINHOLE_PLANE)) for centre, angle in ROW]
    assert ends_plane(ends[:MIN_FITTING - 1], [], (1280, 720), size) is None
    # ends 30-110 mm wide, their sides' far points moved 0.45 of the end across: no card's
    wrong = [_end(_card(centre, angle, (width, 88.0), rng, plane=PINHOLE_PLANE))
             for (centre, angle), width in zip(ROW, [30.0, 110.0, 45.0, 95.0, 63.0],
                                                strict=True)]
    wrong = [np.array([e[0], e[1], e[2] + 0.45 * (e[1] - e[0]), e[3] + 0.45 * (e[1] - e[0])])
             for e in wrong]
    assert ends_plane(wrong, [], (1280, 720), size) is None
    # two of five 22 mm too wide: three fit
    wider = [_end(_card(centre, angle, (85.0, 88.0), rng, plane=PINHOLE_PLANE))
             for centre, angle in ROW[3:]]
    found = ends_plane([*ends[:3], *wider], [], (1280, 720), size)
    assert found is not None and found.fitting == 3
    # each 3.5 mm too narrow or too wide in turn: all fit, but 3.2 mm off on average
    uneven = np.random.default_rng(11)
    rough = [_end(_card(centre, angle, (63.0 + (3.5 if k % 2 else -3.5), 88.0), uneven,
                        plane=PINHOLE_PLANE)) for k, (centre, angle) in enumerate(ROW)]
    assert ends_plane(rough, [], (1280, 720), size) is None
    # two ends and a card seen whole are three
    whole = _card((0.0, 120.0), 0.0, size, rng, plane=PINHOLE_PLANE)
    found = ends_plane(ends[:2], [whole], (1280, 720), size)
    assert found is not None and found.fitting == 3


def test_covered_cards_no_card_seen_whole_tells_take_the_plane_their_ends_tell() -> None:
    from referee.detection.detect import _ends_planes, _OnPlane, _partly_shown
    from referee.detection.outlines import Outline

    rng = np.random.default_rng(9)
    size = (63.0, 88.0)
    outlines = [Outline(_card(centre, angle, size, rng, plane=PINHOLE_PLANE), 1.0)
                for centre, angle in [*ROW, ((0.0, 150.0), 0.0), ((150.0, -100.0), 0.0)]]
    # the row's cards each show their first end (the next lies on the rest); the sixth
    # shows all of itself; the seventh has its plane already
    visible = [_shows(o.corners, 0.6) for o in outlines[:5]] + [[outlines[5].corners]] \
        + [_shows(outlines[6].corners, 0.5)]
    given = _OnPlane(PINHOLE_PLANE, size, under_only=True)
    partly = _partly_shown(outlines, visible)
    assert partly == [0, 1, 2, 3, 4, 6]
    planes = _ends_planes(outlines, [("??", 0.0)] * 7, [False] * 7, visible, partly,
                          [None] * 6 + [given], [size], (1280, 720))
    assert planes[5] is None and planes[6] is given
    told = planes[0]
    assert told is not None and told.under_only and told.card_mm == size
    assert all(on is told for on in planes[:5])  # one plane
    for centre, angle in ROW:
        whole = _card(centre, angle, size, rng, noise_px=0.0, plane=PINHOLE_PLANE)
        assert _sides_off_mm(told.plane, whole, size) < 2.0
    # with only two cards' ends, no plane
    none = _ends_planes(outlines[:2], [("??", 0.0)] * 2, [False] * 2, visible[:2], [0, 1],
                        [None] * 2, [size], (1280, 720))
    assert none == [None, None]


def test_an_end_whose_sides_lean_or_a_card_seen_whole_no_card_s_shape_does_not_fit() -> None:
    # What fits the plane is judged on every error, not the ends' widths alone: an end its
    # card's width whose sides lean 30 mm over its length does not fit it, nor does a card
    # seen whole 13 mm narrower than a card; and two that fit are too few.
    from referee.detection.card_plane import MIN_FITTING, ends_plane

    rng = np.random.default_rng(13)
    size = (63.0, 88.0)
    ends = [_end(_card(centre, angle, size, rng, noise_px=0.0, plane=PINHOLE_PLANE))
            for centre, angle in ROW]
    # (on the table: corners 0 and 1 the end, 2 and 3 along its sides; the sides moved
    # 30 mm across at their far points)
    table = [PINHOLE_PLANE.to_table(e) for e in ends[3:]]
    leaning = [PINHOLE_PLANE.to_pixels(np.array([t[0], t[1], t[2] + 30.0 * (t[1] - t[0]) / 63.0,
                                                 t[3] + 30.0 * (t[1] - t[0]) / 63.0]))
               for t in table]
    found = ends_plane([*ends[:3], *leaning], [], (1280, 720), size)
    assert found is not None and found.fitting == 3
    narrow = _card((0.0, 150.0), 20.0, (50.0, 88.0), rng, noise_px=0.0, plane=PINHOLE_PLANE)
    found = ends_plane(ends[:3], [narrow], (1280, 720), size)
    assert found is not None and found.fitting == 3
    assert MIN_FITTING == 3
    assert ends_plane([*ends[:2], *leaning], [], (1280, 720), size) is None


def test_no_plane_whose_horizon_lies_within_the_margin_round_the_picture() -> None:
    # The horizon must lie beyond the picture and a margin round it (HORIZON_MARGIN of its
    # size): a plane whose horizon runs just above the picture's top edge is refused.
    from referee.detection.card_plane import HORIZON_MARGIN, _sees_table

    half = (0.5, 0.28)
    for beyond, seen in [(0.5 * HORIZON_MARGIN, False), (2.0 * HORIZON_MARGIN, True)]:
        # w = 1 + y / y0 is 0 on the line y = -y0, above the picture's top (-0.28)
        y0 = half[1] * (1 + beyond)
        plane = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 1 / y0, 1.0]])
        assert _sees_table(plane, 0.0, half) is seen


def test_no_plane_from_ends_seen_so_slanted_the_horizon_is_in_the_picture() -> None:
    from referee.detection.card_plane import ends_plane

    steep = Camera.looking_at((0.0, 0.0), 450.0, tilt_deg=80.0, hfov_deg=66.0,
                              image_size=(1280, 720))
    plane = PlaneMap(None, steep.image_to_table, (1280, 720))
    rng = np.random.default_rng(10)
    ends = [_end(_card((x, 0.0), 90.0, (63.0, 88.0), rng, noise_px=0.0, plane=plane))
            for x in (-150.0, -50.0, 50.0, 150.0)]
    assert all(np.all(np.isfinite(e)) for e in ends)
    assert ends_plane(ends, [], (1280, 720)) is None


@pytest.mark.parametrize(("whole", "chosen"), [
    ((57.0, 89.0), (57.0, 89.0)), ((63.0, 88.0), (63.0, 88.0)), (None, (63.0, 88.0))])
def test_the_size_of_card_the_ends_plane_is_for_is_the_one_cards_seen_whole_tell(
        whole: tuple[float, float] | None, chosen: tuple[float, float]) -> None:
    # Ends do not tell a card's length: a card seen whole, read for sure, tells the deck's
    # size (none: the first size); the plane is scaled to that size's width.
    from referee.cards import DECK_SIZES_MM
    from referee.detection.detect import _ends_planes, _partly_shown
    from referee.detection.outlines import Outline

    rng = np.random.default_rng(12)
    outlines = [Outline(_card(centre, angle, chosen, rng, plane=PINHOLE_PLANE), 1.0)
                for centre, angle in ROW]
    visible = [_shows(o.corners, 0.6) for o in outlines]
    readings = [("??", 0.0)] * 5
    if whole is not None:
        outlines.append(Outline(_card((0.0, 150.0), 20.0, whole, rng,
                                      plane=PINHOLE_PLANE), 1.0))
        visible.append([outlines[-1].corners])
        readings.append(("QS", 0.99))
    seen_whole = [False] * 5 + [True] * (len(outlines) - 5)
    planes = _ends_planes(outlines, readings, seen_whole, visible,
                          _partly_shown(outlines, visible), [None] * len(outlines),
                          DECK_SIZES_MM, (1280, 720))
    told = planes[0]
    assert told is not None and told.card_mm == chosen
    whole = _card(*ROW[2], chosen, rng, noise_px=0.0, plane=PINHOLE_PLANE)
    assert _sides_off_mm(told.plane, whole, chosen) < 2.0


def test_detect_outlines_covered_cards_whole_by_the_ends_of_a_row_none_seen_whole() -> None:
    # A row of four, each over the end of the one before, seen by a camera with no lens bend
    # (as ``ends_plane`` takes one), none read for sure (so none tells the plane, nor one near
    # it): the three covered ones, outlined 80% of their length from their shown end, are
    # made whole on the plane their ends tell.
    spots, image, truths = _rendered_row()
    short = [_short_from(t, spots[k + 1]) for k, t in enumerate(truths[:3])]
    assert all(_iou(s, t) < 0.8 for s, t in zip(short, truths, strict=False))
    found = detect(image, _ReadsAs("??", 0.5), _FindsThese([*short, truths[3]]),  # type: ignore[arg-type]
                   shapes_too=False)
    for t in truths:
        assert max(_iou(np.array(c.corners), t) for c in found.cards) > 0.95


class _ReadsNearEnd(_ReadsAs):
    """Reads each outline as ``card``: the index corner at its end nearer the table's -x
    (where a row's covered cards show) for sure, the other too where the outline is no
    longer than a card on ``PINHOLE_PLANE``'s table, else as no card (the face of the card
    it reaches onto)."""

    def identify_many(self, image, cards, uncovered=None, *, quick=False, clear=None):  # type: ignore[no-untyped-def]
        from referee.detection.cards import NOT_A_CARD, CardReading
        from referee.detection.crops import order_corners

        out = []
        for corners in cards:
            table = PINHOLE_PLANE.to_table(order_corners(corners))
            first = table[:2].mean(axis=0)[0] < table[2:].mean(axis=0)[0]
            long = np.linalg.norm(table[:2].mean(axis=0) - table[2:].mean(axis=0)) > 95.0
            sure, other = (self.card, self.confidence), (NOT_A_CARD, 0.9) if long \
                else (self.card, self.confidence)
            out.append(CardReading(self.card, self.confidence,
                                   (sure, other) if first else (other, sure)))
        return out


def test_detect_shortens_a_row_s_overlong_outlines_from_the_end_their_index_corner_reads(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A row of four, each over the end of the one before, where the edges do not tell which
    # lies on which (``stacking`` undecided, as where an outline's far end lies on the next
    # card but one's edge): each covered card's outline reaches 30% beyond its card, so all
    # of each shows, yet only the index corner at its shown end reads it. Those ends tell
    # the plane, and on it each is made a card's size from that end.
    from referee.detection.detect import _end_piece, _read_end

    spots, image, truths = _rendered_row()
    long = [_short_from(t, spots[k + 1], share=1.3) for k, t in enumerate(truths[:3])]
    assert all(_iou(o, t) < 0.8 for o, t in zip(long, truths, strict=False))
    monkeypatch.setattr(detect_module, "stacking",
                        lambda slopes, outlines: [[None] * len(outlines) for _ in outlines])
    reader = _ReadsNearEnd("4S", 0.95)
    readings = reader.identify_many(image, long)
    assert [_read_end(r) is not None for r in readings] == [True] * 3
    assert _read_end(reader.identify_many(image, [truths[3]])[0]) is None
    # (what shows of each, as it is made a card's shape: the half at the end that reads,
    # two of its corners the outline's, at the table's -x end)
    half = _end_piece(long[0], _read_end(readings[0]))  # type: ignore[arg-type]
    shared = [p for p in half if min(np.linalg.norm(long[0] - p, axis=1)) < 1e-9]
    assert len(shared) == 2
    assert PINHOLE_PLANE.to_table(np.array(shared))[:, 0].mean() \
        < PINHOLE_PLANE.to_table(long[0])[:, 0].mean() - 40.0
    found = detect(image, reader, _FindsThese([*long, truths[3]]),  # type: ignore[arg-type]
                   shapes_too=False)
    for t in truths:
        assert max(_iou(np.array(c.corners), t) for c in found.cards) > 0.95
    # read at neither end surely enough, an outline tells no end: they stay as long
    monkeypatch.setattr(detect_module, "END_READ_SURE", 0.99)
    found = detect(image, reader, _FindsThese([*long, truths[3]]),  # type: ignore[arg-type]
                   shapes_too=False)
    for t in truths[:3]:
        assert max(_iou(np.array(c.corners), t) for c in found.cards) < 0.8


def test_a_row_s_outline_no_plane_is_told_for_reports_all_of_itself_as_what_shows(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Taken to show one end only by its index corners (``_cued``), an outline is given that
    # half only to tell the plane and to be made a card's size on it; where no plane is
    # told, what ``detect`` reports as showing of it is all of it, as before.
    spots, image, truths = _rendered_row()
    long = [_short_from(t, spots[k + 1], share=1.3) for k, t in enumerate(truths[:3])]
    monkeypatch.setattr(detect_module, "stacking",
                        lambda slopes, outlines: [[None] * len(outlines) for _ in outlines])
    monkeypatch.setattr(detect_module, "ends_plane", lambda *args, **kwargs: None)
    found = detect(image, _ReadsNearEnd("4S", 0.95),  # type: ignore[arg-type]
                   _FindsThese([*long, truths[3]]), shapes_too=False)
    for outline in long:
        card = max(found.cards, key=lambda c: _iou(np.array(c.corners), outline))
        assert _iou(np.array(card.corners), outline) > 0.99  # (not made a card's size)
        assert sum(_area(np.array(p)) for p in card.visible) > 0.97 * _area(outline)


def test_an_outline_is_taken_to_show_the_end_its_corners_read_only_over_another() -> None:
    # ``_cued``: an outline all of which shows, not seen whole, lying over another, whose
    # index corners tell an end; not one partly shown (what shows of it says so already),
    # seen whole, alone (near the picture's edge, say), or whose corners tell no end.
    from referee.detection.detect import _cued
    from referee.detection.outlines import Outline

    quad = np.array([[0.0, 0.0], [60.0, 0.0], [60.0, 90.0], [0.0, 90.0]])
    outlines = [Outline(quad + offset, 0.9) for offset in
                ([0.0, 0.0], [0.0, 50.0], [0.0, 100.0], [400.0, 0.0], [0.0, -60.0])]
    # 0 over 1 and 4; 1 over 0 and 2; 2 over 1; 3 alone; 4 over 0
    ends = [1, 0, 1, 0, 1]
    assert _cued(outlines, ends, [], [False] * 5) == {0: 1, 1: 0, 2: 1, 4: 1}
    assert _cued(outlines, ends, [1, 4], [False] * 5) == {0: 1, 2: 1}
    assert _cued(outlines, ends, [], [True, False, False, False, False]) == {1: 0, 2: 1, 4: 1}
    assert _cued(outlines, [None, 0, None, 0, None], [], [False] * 5) == {1: 0}
    # (touching at a corner or a side is lying over no other)
    apart = [Outline(quad, 0.9), Outline(quad + np.array([60.0, 0.0]), 0.9)]
    assert _cued(apart, [0, 0], [], [False, False]) == {}


@pytest.mark.parametrize(("corners", "end"), [
    ((("7D", 0.9), ("other", 0.9)), 0), ((("KS", 0.3), ("7D", 0.6)), 1),
    ((("7D", 0.9), ("7D", 0.6)), None), ((("7D", 0.4), ("other", 0.9)), None),
    ((("KS", 0.9), ("other", 0.9)), None)])
def test_the_end_an_outline_shows_is_the_one_whose_index_corner_alone_reads_its_card(
        corners: tuple[tuple[str, float], tuple[str, float]], end: int | None) -> None:
    from referee.detection.cards import CardReading
    from referee.detection.detect import END_READ_SURE, _read_end

    assert END_READ_SURE == 0.5
    assert _read_end(CardReading("7D", 0.9, corners)) == end
    # (at the bar, read; a back, a joker or ?? shows no end so)
    assert _read_end(CardReading("7D", 0.9, (("other", 0.9), ("7D", 0.5)))) == 1
    assert _read_end(CardReading("back", 0.9, (("back", 0.9), ("other", 0.9)))) is None
    assert _read_end(CardReading("JK", 0.9, (("JK", 0.9), ("other", 0.9)))) is None
    assert _read_end(CardReading("??", 0.4, (("??", 0.9), ("other", 0.9)))) is None


def test_an_end_read_on_an_outline_since_moved_is_the_new_outline_s_end_nearest_it() -> None:
    # A polished outline may keep the reading made on the outline before it (``moved``);
    # the two, a degree apart, are put in order from opposite ends (``order_corners``
    # starts at another corner), so the end is found by where it lies.
    from referee.detection.cards import CardReading
    from referee.detection.crops import order_corners
    from referee.detection.detect import _read_end

    def outline(angle: float) -> np.ndarray:
        a = np.radians(angle)
        along, across = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
        return np.array([np.array([400.0, 300.0]) + sl * along * 57.0 + sw * across * 31.5
                         for sl, sw in [(-1, -1), (-1, 1), (1, 1), (1, -1)]])

    before, after = outline(28.5), outline(29.5)
    old, new = order_corners(before), order_corners(after)
    # (the two ordered from opposite ends)
    assert np.linalg.norm(old[:2].mean(axis=0) - new[:2].mean(axis=0)) > 50.0
    reading = CardReading("7D", 0.9, (("7D", 0.9), ("other", 0.9)))
    assert _read_end(reading) == 0
    end = _read_end(reading, after, before)
    assert end == 1
    assert np.linalg.norm(new[2:].mean(axis=0) - old[:2].mean(axis=0)) < 3.0
    assert _read_end(reading, after, after) == 0


@pytest.mark.parametrize("end", [0, 1])
def test_the_half_of_an_outline_at_an_end_is_what_shows_of_it(end: int) -> None:
    # The end a reading names is the outline's corners 0-1 (or 2-3) as ``order_corners``
    # puts them, as the card is cut for reading: its half there is what shows of it, and
    # the card is made whole from that end on a plane (``card_shape.shown_end``).
    from referee.detection.card_shape import shown_end
    from referee.detection.crops import order_corners
    from referee.detection.detect import _end_piece

    outline = np.array([[400.0, 300.0], [520.0, 310.0], [505.0, 480.0], [390.0, 470.0]])
    q = order_corners(outline)
    half = _end_piece(outline[[2, 3, 0, 1]], end)  # (in whatever order the corners come)
    at_end = q[[0, 1]] if end == 0 else q[[2, 3]]
    assert all(min(np.linalg.norm(half - p, axis=1)) < 1e-9 for p in at_end)
    assert abs(_area(half) / _area(q) - 0.5) < 0.02  # (cut at its long sides' middles)
    shown = shown_end(outline, [half])
    assert shown is not None
    assert {tuple(p) for p in shown[:2]} == {tuple(p) for p in at_end}


def _area(quad: np.ndarray) -> float:
    x, y = quad[:, 0], quad[:, 1]
    return float(abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) / 2)


def _rendered_row() -> tuple[list[tuple[float, float]], np.ndarray, list[np.ndarray]]:
    """A row of four 4S, 60 mm apart along the table's x, each over the end of the one
    before, as ``PINHOLE`` shows it: their centres (mm), the picture, their outlines."""
    from synth.scene import Renderer, Scene, card
    from tests.detection.test_crops_and_outlines import CLEAN

    spots = [(-120.0 + 60.0 * k, 0.0) for k in range(4)]
    scene = Scene(tuple(card(f"c{k}", "4S", "aisleriot:anglo_poker", spot, 90.0)
                        for k, spot in enumerate(spots)))
    image, truth = Renderer(PINHOLE, np.random.default_rng(5), CLEAN,
                            surface_colour=(40, 90, 30)).render(scene)
    return spots, image, [np.array(o.corners_px) for o in truth.objects]


def _short_from(card: np.ndarray, cover: tuple[float, float], share: float = 0.8) -> np.ndarray:
    """A card's outline (image pixels, as ``PINHOLE`` shows it) from its end further from
    ``cover`` (mm), ``share`` of its length."""
    table = PINHOLE_PLANE.to_table(card)
    far = max(((0, 1), (2, 3)), key=lambda e: float(np.linalg.norm(
        table[list(e)].mean(axis=0) - np.array(cover))))
    start = table[list(far)]
    stop = table[[3, 2]] if far == (0, 1) else table[[0, 1]]
    return PINHOLE_PLANE.to_pixels(np.array([*start, *(start + share * (stop - start))[::-1]]))
