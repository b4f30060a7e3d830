from typing import Final

import cv2
import numpy as np
import pytest

from referee.tracking.cards import CardObserver, TableCard, _Looks, card_corners
from referee.tracking.topdown import TableView

from .helpers import flat_plane

VIEW = TableView.build(flat_plane(400, 300), (0.0, 0.0, 400.0, 300.0), 1.0)


def _table(cards: list[tuple[tuple[float, float], float]]) -> np.ndarray:
    image = np.full((300, 400, 3), (60, 90, 40), np.uint8)  # green cloth
    for centre, angle in cards:
        corners = card_corners(centre, angle, (63.0, 88.0))
        px = VIEW.to_raster(corners)
        cv2.fillPoly(image, [np.round(px).astype(np.int32)], (235, 235, 235))
        cv2.polylines(image, [np.round(px).astype(np.int32)], True, (120, 120, 120), 1)
        cv2.putText(image, "7", tuple(int(v) for v in px[0] + [5, 15]),
                    cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 200), 2)
    return image


def _err(fit: np.ndarray, centre: tuple[float, float], angle: float,
         size: tuple[float, float] = (63.0, 88.0)) -> float:
    truth = card_corners(centre, angle, size)
    return max(float(np.min(np.linalg.norm(fit - c, axis=1))) for c in truth)


def _placed(observer: CardObserver, state: np.ndarray) -> list[TableCard]:
    changes = observer.compare(state)
    new = [TableCard(observer.new_uid(), "7H", tuple(map(tuple, f.corners_mm)))
           for f in changes.placed]
    observer.commit(state, new, changes)
    return new


def test_a_placed_card_is_found_with_its_whole_outline() -> None:
    observer = CardObserver(VIEW)
    observer.start(_table([]))
    new = _placed(observer, _table([((150.0, 150.0), 20.0)]))
    assert len(new) == 1
    assert _err(new[0].outline, (150.0, 150.0), 20.0) < 3.0


def test_a_card_that_changes_in_two_pieces_is_placed_once() -> None:
    """A band across its middle looks like the cloth (a picture, a shadow's edge, the card
    below showing the same colour): the change falls apart in two pieces, each of which
    fits the whole card."""
    observer = CardObserver(VIEW)
    observer.start(_table([]))
    state = _table([((200.0, 150.0), 0.0)])
    band = VIEW.to_raster(card_corners((200.0, 150.0), 0.0, (63.0, 16.0)))
    cv2.fillPoly(state, [np.round(band).astype(np.int32)], (60, 90, 40))
    new = _placed(observer, state)
    assert len(new) == 1
    assert _err(new[0].outline, (200.0, 150.0), 0.0) < 3.0


def _marble(level: int) -> np.ndarray:
    """A pale table with soft veins, a little darker than a white card."""
    rng = np.random.default_rng(3)
    veins = cv2.GaussianBlur(rng.normal(0, 1, (300, 400)).astype(np.float32), (0, 0), 8)
    base = np.array([level, level - 10, level + 4], np.float32)
    return np.clip(base + (veins / veins.std() * 12)[..., None], 0, 255).astype(np.uint8)


@pytest.mark.parametrize("level", [220, 222])
def test_a_white_card_taken_off_a_pale_table_is_removed_not_replaced_by_a_ghost(
        level: int) -> None:
    """White to pale changes only part of the card's area past the change level; the
    place it lay now matches the empty table all over, so the card was taken."""
    cloth = _marble(level)
    observer = CardObserver(VIEW)
    observer.start(cloth)
    state = cloth.copy()
    corners = VIEW.to_raster(card_corners((200.0, 150.0), 10.0, (63.0, 88.0)))
    cv2.fillPoly(state, [np.round(corners).astype(np.int32)], (240, 240, 240))
    assert len(_placed(observer, state)) == 1
    changes = observer.compare(cloth)
    assert len(changes.removed) == 1 and not changes.placed


def test_a_card_on_top_of_another_keeps_both_and_the_new_one_is_whole() -> None:
    observer = CardObserver(VIEW)
    observer.start(_table([]))
    first = ((150.0, 150.0), 0.0)
    _placed(observer, _table([first]))
    second = ((185.0, 152.0), 3.0)
    new = _placed(observer, _table([first, second]))
    assert len(new) == 1 and len(observer.cards) == 2
    assert _err(new[0].outline, *second) < 4.0


def test_a_taken_trick_removes_every_card_and_a_nudge_is_not_a_new_card() -> None:
    observer = CardObserver(VIEW)
    observer.start(_table([]))
    a, b = ((120.0, 150.0), 0.0), ((260.0, 150.0), 90.0)
    _placed(observer, _table([a]))
    _placed(observer, _table([a, b]))
    nudged = observer.compare(_table([((123.0, 151.0), 1.0), b]))
    assert not nudged.placed and not nudged.removed
    taken = observer.compare(_table([]))
    assert {c.uid for c in taken.removed} == {c.uid for c in observer.cards}
    assert not taken.placed


def _faces(cards: list[tuple[tuple[float, float], float, str]], *,
           edges: bool = True, size: tuple[float, float] = (63.0, 88.0)) -> np.ndarray:
    """Cards with different faces (a big glyph each), drawn bottom first (``edges``: each
    with a grey edge; without, white on white shows no edge at all; ``size``: each card's)."""
    image = np.full((300, 400, 3), (60, 90, 40), np.uint8)
    for centre, angle, glyph in cards:
        px = VIEW.to_raster(card_corners(centre, angle, size))
        cv2.fillPoly(image, [np.round(px).astype(np.int32)], (235, 235, 235))
        if edges:
            cv2.polylines(image, [np.round(px).astype(np.int32)], True, (120, 120, 120), 1)
        cx, cy = (int(v) for v in px.mean(axis=0))
        cv2.putText(image, glyph, (cx - 25, cy + 20), cv2.FONT_HERSHEY_SIMPLEX, 2.0,
                    (0, 0, 200) if glyph in "AK" else (20, 20, 20), 5)
    return image


def test_a_card_put_squarely_on_another_and_taken_off_again() -> None:
    observer = CardObserver(VIEW)
    observer.start(_faces([]))
    below = ((200.0, 150.0), 0.0, "A")
    _placed(observer, _faces([below]))
    assert len(observer.cards) == 1
    # The same outline, another face: a new card on top, with that outline.
    on_top = _placed(observer, _faces([below, ((201.0, 150.0), 0.5, "K")]))
    assert len(on_top) == 1 and len(observer.cards) == 2
    assert _err(on_top[0].outline, (200.0, 150.0), 0.0) < 3.0
    # The same face shifted a little: nothing new.
    same = observer.compare(_faces([below, ((202.0, 151.0), 0.5, "K")]))
    assert not same.placed and not same.removed
    # Taken off: the card below shows again, so the top card was taken, not placed.
    taken = observer.compare(_faces([below]))
    assert [c.uid for c in taken.removed] == [observer.cards[1].uid] and not taken.placed


def test_a_card_laid_a_few_mm_off_the_one_below_gets_its_own_outline() -> None:
    observer = CardObserver(VIEW)
    observer.start(_faces([]))
    below = ((200.0, 150.0), 0.0, "A")
    _placed(observer, _faces([below]))
    # Too little of it beside the card below to be fitted alone (a strip 4-5 mm wide):
    # the outline below, moved to the strip, not copied.
    on_top = _placed(observer, _faces([below, ((204.0, 153.0), 2.0, "K")]))
    assert len(on_top) == 1 and len(observer.cards) == 2
    assert _err(on_top[0].outline, (204.0, 153.0), 2.0) < 2.5


_BRIDGE: Final = (57.0, 89.0)
_Pose = tuple[tuple[float, float], float, str]


def _bridge_pair(told: tuple[float, float], below: _Pose, on_top: _Pose,
                 ) -> tuple[list[TableCard], list[TableCard]]:
    """What a tracker told cards are ``told`` in size finds placed when a bridge card is laid
    down, then another partly on it."""
    observer = CardObserver(VIEW, card_mm=told)
    observer.start(_faces([], size=_BRIDGE))
    first = _placed(observer, _faces([below], size=_BRIDGE))
    return first, _placed(observer, _faces([below, on_top], size=_BRIDGE))


def test_a_bridge_deck_is_tracked_at_the_card_size_the_calibration_names() -> None:
    bridge = _BRIDGE
    below, on_top = ((150.0, 150.0), 20.0, "A"), ((156.0, 158.0), 26.0, "K")
    fits = {}
    for told in (bridge, (63.0, 88.0)):
        first, second = _bridge_pair(told, below, on_top)
        assert len(first) == 1 and len(second) == 1
        fits[told] = (_err(first[0].outline, *below[:2], bridge),
                      _err(second[0].outline, *on_top[:2], bridge))
    assert max(fits[bridge]) < 2.0
    assert min(fits[(63.0, 88.0)]) > 2.5  # a standard card's size is 3 mm too wide a side


def test_a_bridge_card_laid_a_few_mm_off_the_one_below_is_its_own_size() -> None:
    bridge = _BRIDGE
    below, on_top = ((200.0, 150.0), 0.0, "A"), ((204.0, 153.0), 2.0, "K")
    errors = {}
    for told in (bridge, (63.0, 88.0)):
        _, (new,) = _bridge_pair(told, below, on_top)
        errors[told] = _err(new.outline, *on_top[:2], bridge)
    assert errors[bridge] < 2.5 and errors[(63.0, 88.0)] > 2.5


def test_the_cards_placed_apart_are_measured_whatever_size_the_tracker_is_told() -> None:
    bridge = (57.0, 89.0)
    observer = CardObserver(VIEW)  # told a standard card's size
    observer.start(_faces([], size=bridge))
    cards = [((80.0, 150.0), 10.0, "A")]
    _placed(observer, _faces(cards, size=bridge))
    assert observer.measured_card_mm is None  # one card is no evidence yet
    cards.append(((250.0, 120.0), -30.0, "K"))
    _placed(observer, _faces(cards, size=bridge))
    measured = observer.measured_card_mm
    assert measured is not None
    # (the change measures a little over the card: here its 1 px grey edge at 1 px a mm)
    assert 57.0 <= measured[0] < 60.0 and 89.0 <= measured[1] < 92.0
    cards.append(((258.0, 126.0), -26.0, "Q"))  # laid on the king: not measured
    assert len(_placed(observer, _faces(cards, size=bridge))) == 1
    assert len(observer.sizes_seen) == 2


def test_a_row_taken_at_once_takes_the_cards_hidden_under_others_too() -> None:
    observer = CardObserver(VIEW)
    observer.start(_faces([]))
    bottom = ((200.0, 150.0), 0.0, "A")
    middle = ((202.0, 150.0), 0.0, "K")  # the bottom card hides under these two
    top = ((204.0, 150.0), 0.0, "Q")
    for placed in ([bottom], [bottom, middle], [bottom, middle, top]):
        _placed(observer, _faces(placed))
    assert len(observer.cards) == 3
    taken = observer.compare(_faces([]))
    assert [c.uid for c in taken.removed] == [c.uid for c in observer.cards]


def test_a_cards_shadow_does_not_pull_its_outline_off_the_card() -> None:
    # A card lit from one side casts a soft shadow 6 mm wide on the other: the changed
    # region is card and shadow, and its own rectangle would sit ~3 mm into the shadow.
    view = TableView.build(flat_plane(400, 300), (0.0, 0.0, 400.0, 300.0), 1.5)
    centre, angle = (180.0, 140.0), 12.0

    def table(with_card: bool) -> np.ndarray:
        image = np.full((450, 600, 3), (70, 95, 130), np.uint8)  # wood
        if with_card:
            shadow = np.zeros(image.shape[:2], np.float32)
            moved = card_corners((centre[0] - 6.0, centre[1] - 4.0), angle, (63.0, 88.0))
            cv2.fillPoly(shadow, [np.round(view.to_raster(moved) * 4).astype(np.int32)], 1.0,
                         cv2.LINE_AA, shift=2)
            shadow = cv2.GaussianBlur(shadow, (0, 0), 2.0)
            image = (image * (1 - 0.45 * shadow[..., None])).astype(np.uint8)
            px = view.to_raster(card_corners(centre, angle, (63.0, 88.0)))
            cv2.fillPoly(image, [np.round(px * 4).astype(np.int32)], (230, 232, 235),
                         cv2.LINE_AA, shift=2)
        return np.asarray(cv2.GaussianBlur(image, (0, 0), 0.8), np.uint8)

    observer = CardObserver(view)
    observer.start(table(False))
    changes = observer.compare(table(True))
    assert len(changes.placed) == 1
    assert _err(changes.placed[0].corners_mm, centre, angle) < 1.2


def _white_on_white(centre: tuple[float, float], angle: float, gap: bool) -> np.ndarray:
    """A white card on a white table: only its thin grey edge (with a gap) shows."""
    image = np.full((300, 400, 3), 228, np.uint8)
    px = np.round(VIEW.to_raster(card_corners(centre, angle, (63.0, 88.0)))).astype(np.int32)
    cv2.polylines(image, [px], True, (150, 150, 150), 2)
    if gap:  # the edge lost for 12 mm along one long side
        a, b = px[1].astype(float), px[2].astype(float)
        m = (a + b) / 2
        d = (b - a) / np.linalg.norm(b - a) * 6
        cv2.line(image, tuple(np.round(m - d).astype(int)), tuple(np.round(m + d).astype(int)),
                 (228, 228, 228), 3)
    return image


def test_a_white_card_on_a_white_table_is_found_from_its_edge_alone() -> None:
    for gap in (False, True):
        observer = CardObserver(VIEW)
        empty = np.full((300, 400, 3), 228, np.uint8)
        observer.start(empty)
        new = _placed(observer, _white_on_white((200.0, 150.0), 25.0, gap))
        assert len(new) == 1, gap
        assert _err(new[0].outline, (200.0, 150.0), 25.0) < 3.0


def test_a_card_partly_on_another_is_moved_onto_its_edges_over_bare_table() -> None:
    from referee.detection.outlines import gradients
    from referee.tracking.cards import CardFit, _polish_open

    below, above = ((150.0, 150.0), 0.0), ((195.0, 130.0), 6.0)
    state = _table([below, above])
    slopes = gradients(state)
    others = VIEW.polygon_mask([card_corners(*below, (63.0, 88.0))], grow_mm=4.0)
    # The changed region fell short of the card's open sides (its fit slid towards the
    # card below): the fit goes out onto them.
    towards = np.subtract(below[0], above[0]) / np.linalg.norm(np.subtract(below[0], above[0]))
    for shift, turn in ((2.5, 0.0), (3.0, 0.0), (3.5, 0.0), (2.5, 1.5), (3.0, -1.5)):
        centre = np.add(above[0], shift * towards)
        off = card_corners((float(centre[0]), float(centre[1])), above[1] + turn,
                           (63.0, 88.0))
        assert _err(off, *above) > 2.4
        polished = _polish_open(VIEW, slopes, CardFit(off, (0.0, 0.0)), others)
        assert _err(polished.corners_mm, *above) < 1.5
    # A fit that reaches the open sides already stays: an edge found just inside a side
    # is the card's own (its dark cut edge lies inside it), and a few tenths of a degree
    # of turn are the print's noise.
    close = CardFit(card_corners(above[0], above[1], (63.0, 88.0)), above[0])
    assert _polish_open(VIEW, slopes, close, others) is close
    # A card whose every side lies on other cards is left as it was fitted.
    squarely = CardFit(card_corners((151.0, 151.0), 1.0, (63.0, 88.0)), (151.0, 151.0))
    everywhere = VIEW.polygon_mask([card_corners((150.0, 150.0), 0.0, (90.0, 120.0))])
    assert _polish_open(VIEW, slopes, squarely, everywhere) is squarely


def test_opposite_open_sides_centre_a_card_between_its_edges() -> None:
    from referee.detection.outlines import gradients
    from referee.tracking.cards import CardFit, _polish_open

    card = ((200.0, 150.0), 12.0)
    slopes = gradients(_table([card]))
    nothing = np.zeros(VIEW.shape, bool)
    for dx, dy, turn in ((2.0, 0.0, 0.0), (0.0, -3.0, 0.0), (-2.0, 2.0, 1.5)):
        off = card_corners((card[0][0] + dx, card[0][1] + dy), card[1] + turn, (63.0, 88.0))
        polished = _polish_open(VIEW, slopes, CardFit(off, (0.0, 0.0)), nothing)
        assert _err(polished.corners_mm, *card) < 0.6 < _err(off, *card)
    # Out of the camera's view is no bare table: a fit whose sides all lie there stays.
    blind = TableView(VIEW.bounds, VIEW.px_per_mm, VIEW.map1, VIEW.map2,
                      np.zeros(VIEW.shape, bool))
    off = CardFit(card_corners((202.0, 150.0), card[1], (63.0, 88.0)), (202.0, 150.0))
    assert _polish_open(blind, slopes, off, nothing) is off


def test_a_turn_is_taken_only_from_sides_that_agree() -> None:
    from referee.tracking.cards import _agreed_turn

    def deg(*values: float) -> list[float]:
        return [float(np.radians(v)) for v in values]

    assert np.degrees(_agreed_turn(deg(-2.21, -1.97))) == pytest.approx(-2.09)
    assert np.degrees(_agreed_turn(deg(-0.27, -1.84, -1.08, -1.79))) == pytest.approx(-1.79)
    assert _agreed_turn(deg(-0.23, -5.85)) == 0.0  # two sides, two turns: neither trusted
    assert _agreed_turn(deg(-1.5, -1.4, 2.0, 2.2)) == 0.0  # no majority
    assert _agreed_turn(deg(-1.5)) == 0.0  # one side alone
    assert _agreed_turn(deg(0.1, 0.2)) == 0.0  # the print's noise
    assert _agreed_turn(deg(6.0, 6.2)) == 0.0  # more than an edge's search can mean


def test_a_card_laid_most_of_a_card_over_another_a_little_off_is_placed_and_taken() -> None:
    """White on white, a card put 7-8 mm off the card below changes only its print over
    that card and a strip beside it (trick piles, push-out-the-pig-703): it is a new card
    with its own outline, and taking it off again shows the card below, no new card."""
    observer = CardObserver(VIEW)
    observer.start(_faces([]))
    below = ((200.0, 150.0), 0.0, "A")
    _placed(observer, _faces([below]))
    top = ((193.0, 153.0), 0.0, "5")
    on_top = _placed(observer, _faces([below, top], edges=False))
    assert len(on_top) == 1 and len(observer.cards) == 2
    assert _err(on_top[0].outline, (193.0, 153.0), 0.0) < 4.0
    taken = observer.compare(_faces([below], edges=False))
    assert [c.uid for c in taken.removed] == [on_top[0].uid] and not taken.placed


def test_a_card_turned_on_the_card_below_is_fitted_its_own_way_round() -> None:
    """White on white, a card laid a few mm off and turned changes only in corner
    triangles and its print; the rectangle of that change lies across the card (a quarter
    turn off). The card below's outline, moved onto the change, is the better pose."""
    observer = CardObserver(VIEW)
    observer.start(_faces([]))
    below = ((200.0, 150.0), 0.0, "A")
    _placed(observer, _faces([below], edges=False))
    top = ((195.1, 152.6), -11.3, "5")
    on_top = _placed(observer, _faces([below, top], edges=False))
    assert len(on_top) == 1
    assert _err(on_top[0].outline, top[0], top[1]) < 4.0
    taken = observer.compare(_faces([below], edges=False))
    assert [c.uid for c in taken.removed] == [on_top[0].uid] and not taken.placed



def test_the_table_under_a_card_is_told_from_a_white_card_laid_on_it() -> None:
    """On a pale table a white card differs from the table it hid by little more than the
    change level: another white card laid on it looks nearly like that table too
    (push-out-the-pig-804 took the card below as gone). The table shows again only when
    it is much closer to what lay there before than the card was."""
    rng = np.random.default_rng(0)
    under = np.clip(rng.normal(222, 6, (88, 63, 3)), 0, 255).astype(np.uint8)

    def card(pips: list[tuple[int, int]]) -> np.ndarray:
        face = np.full((88, 63, 3), 246, np.uint8)
        for x, y in pips:
            cv2.circle(face, (x, y), 4, (40, 40, 190), -1)
        return face

    looks = _Looks(slice(0, 88), slice(0, 63), card([(20, 30), (43, 58)]), under)
    inside = np.ones((88, 63), bool)
    assert not looks.matches_under(card([(20, 20), (43, 20), (20, 68), (43, 68)]), inside)
    assert looks.matches_under(np.clip(under.astype(int) + 2, 0, 255).astype(np.uint8), inside)


def test_the_tracker_holds_cards_to_the_size_its_calibration_names() -> None:
    import json
    from pathlib import Path

    from referee.calibration.model import Calibration
    from referee.tracking.tracker import TableTracker

    sample = Path(__file__).resolve().parents[2] / "sample_footage" / "slapstick" / \
        "calibration.json"
    data = json.loads(sample.read_text())
    standard = TableTracker("slapstick", Calibration.model_validate(data), ["A", "B", "C"],
                       reader=None)  # type: ignore[arg-type]
    assert standard.cards.card_mm == (63.0, 88.0)
    bridge = Calibration.model_validate({**data, "card_mm": [57, 89]})
    tracker = TableTracker("slapstick", bridge, ["A", "B", "C"], reader=None)  # type: ignore[arg-type]
    assert tracker.cards.card_mm == (57.0, 89.0)
    tracker.cards.sizes_seen.append((57.5, 89.5))
    tracker.recalibrate(bridge.model_copy(update={"error_mm": 0.5}))  # drift re-solved
    assert tracker.cards.card_mm == (57.0, 89.0)
    assert tracker.cards.sizes_seen == [(57.5, 89.5)]  # what it measured is kept
