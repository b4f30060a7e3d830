"""How a card's reading is made: the index corners always, the whole face when uncovered."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from referee.detection.cards import (
    ACE_POOLED_PX_PER_MM,
    BACK_INDEX_SURE,
    COVERED_BACK_SURE,
    DEFAULT_FACE_MODEL,
    DEFAULT_MODEL,
    DEFAULT_SUIT_MODEL,
    FACE_JOKER_SURE,
    FACE_SURE,
    JOKER_CORNER_SURE,
    CardIdentifier,
    CardReading,
    ModelMissingError,
    joker_checked,
    share_in_picture,
)
from synth import effects
from synth.camera import Camera
from synth.scene import Renderer, Scene, card

pytestmark = pytest.mark.skipif(not DEFAULT_FACE_MODEL.exists(), reason="no face model")
#: A card seen as the real photos' webcam frames show it (a short side of about 160 px).
SEEN_LARGE = 2.5


@pytest.fixture(scope="module")
def identifier() -> CardIdentifier:
    return CardIdentifier()


def _probs(identifier: CardIdentifier, classes: list[str], **sure: float) -> np.ndarray:
    p = np.full(len(classes), 1e-4, np.float32)
    for code, value in sure.items():
        p[classes.index(code)] = value
    return p


def test_a_sure_face_decides_number_cards_backs_and_jokers_only(
        identifier: CardIdentifier) -> None:
    face_classes = identifier._face.classes if identifier._face else []
    corners = _probs(identifier, identifier.classes, **{"8H": 0.8, "7H": 0.05})

    by_corners = identifier._combine(corners, corners)
    assert by_corners.card == "8H" and by_corners.face is None

    def read(**face: float) -> str:
        return identifier._decide(by_corners, _probs(identifier, face_classes, **face),
                                  np.stack([corners, corners]), SEEN_LARGE).card

    assert read(**{"7H": 0.97}) == "7H"  # the face counts seven hearts
    assert read(back=0.95) == "back" and read(JK=0.95) == "JK"
    assert read(**{"7H": FACE_SURE - 0.1}) == "8H"  # not sure enough: the corners decide
    assert read(QD=0.97) == "8H" and read(AD=0.97) == "8H"  # courts and aces: corners


def test_a_face_taken_for_a_back_does_not_outweigh_a_corner_sure_of_an_index(
        identifier: CardIdentifier) -> None:
    face_classes = identifier._face.classes if identifier._face else []
    face = _probs(identifier, face_classes, back=0.97)

    def read(first: dict[str, float], second: dict[str, float]) -> str:
        a, b = (_probs(identifier, identifier.classes, **c) for c in (first, second))
        return identifier._decide(identifier._combine(a, b), face, np.stack([a, b]),
                                  SEEN_LARGE).card

    # a card seen small whose face the face model takes for a back's pattern (kde
    # svg-penguins' KD), or one of whose corners shows part of a big pip
    assert read({"KD": BACK_INDEX_SURE + 0.05}, {"KD": BACK_INDEX_SURE + 0.05}) == "KD"
    assert read({"TH": BACK_INDEX_SURE + 0.05}, {"other": 0.9}) == "TH"
    assert read({"TH": BACK_INDEX_SURE - 0.1}, {"other": 0.9}) == "back"
    assert read({"back": 0.9}, {"back": 0.9}) == "back"


def test_a_joker_whose_corners_read_a_jack_or_nothing_sure_is_a_joker_by_its_face(
        identifier: CardIdentifier) -> None:
    face_classes = identifier._face.classes if identifier._face else []

    def read(corner: dict[str, float], joker: float) -> str:
        probs = _probs(identifier, identifier.classes, **corner)
        face = _probs(identifier, face_classes, JK=joker, JD=(1 - joker) / 2)
        return identifier._decide(identifier._combine(probs, probs), face,
                                  np.stack([probs, probs]), 1.2).card

    # aisleriot tango's joker: its corner's J over a red "o" reads JD, 0.8-0.9 sure
    assert read({"JD": 0.6, "JC": 0.2}, FACE_JOKER_SURE + 0.1) == "JK"
    assert read({"JD": 0.6, "JC": 0.2}, FACE_JOKER_SURE - 0.1) == "JD"
    # corners unsure of anything (a star, a word they never saw)
    assert read({"7S": 0.4, "3C": 0.3}, FACE_JOKER_SURE + 0.1) == "JK"
    # corners sure of another rank stay: the face takes a few small kings for jokers
    assert read({"KD": 0.999}, FACE_JOKER_SURE + 0.15) == "KD"
    assert read({"KD": 0.999}, FACE_SURE + 0.05) == "JK"  # unless it is sure


def test_when_face_and_corners_read_one_rank_both_choose_the_suit(
        identifier: CardIdentifier) -> None:
    face_classes = identifier._face.classes if identifier._face else []

    def read(corner: dict[str, float], face: dict[str, float],
             px_per_mm: float = SEEN_LARGE) -> str:
        probs = _probs(identifier, identifier.classes, **corner)
        reading = identifier._combine(probs, probs)
        return identifier._decide(reading, _probs(identifier, face_classes, **face),
                                  np.stack([probs, probs]), px_per_mm).card

    # Small corner suits half taken for the wrong one; the face sees the pips: diamonds.
    assert read({"KH": 0.7, "KD": 0.28}, {"KD": 0.55, "KH": 0.01}) == "KD"
    assert read({"8H": 0.7, "8D": 0.28}, {"8D": 0.97, "8H": 0.02}) == "8D"
    # Corners sure of spades outweigh a face that half sees clubs (and a sure one too).
    assert read({"5S": 0.99, "5C": 0.005}, {"5C": 0.6, "5S": 0.4}) == "5S"
    assert read({"5S": 0.999, "5C": 1e-4}, {"5C": 0.97, "5S": 0.02}) == "5S"
    # An ace seen large keeps the corners' suit.
    assert read({"AS": 0.77, "AC": 0.16}, {"AC": 0.99, "AS": 0.01}) == "AS"
    # Seen small, its corner suit is a blob and its one big pip decides with the corners.
    small = ACE_POOLED_PX_PER_MM
    assert read({"AS": 0.77, "AC": 0.16}, {"AC": 0.99, "AS": 0.01}, small) == "AC"
    assert read({"AS": 0.999, "AC": 1e-4}, {"AC": 0.99, "AS": 0.01}, small) == "AS"
    # There the face's big pip counts as much as the corners' blob (kde jolly-royal's AC at
    # 1.1 px/mm); a number card's small pips still count less.
    assert read({"AS": 0.97, "AC": 0.025}, {"AC": 0.98, "AS": 0.02}, small) == "AC"
    assert read({"5S": 0.97, "5C": 0.025}, {"5C": 0.98, "5S": 0.02}, small) == "5S"


def test_a_card_indexed_in_one_corner_takes_its_suit_from_the_face(
        identifier: CardIdentifier) -> None:
    # As aisleriot tango_nuevo: the rank alone in the corner the model reads (a red 2 taken
    # for diamonds), nothing in the other, hearts in the middle of the card.
    face_classes = identifier._face.classes if identifier._face else []
    face = _probs(identifier, face_classes, **{"4H": 0.3, "2H": 0.2, "7H": 0.2, "5D": 0.1})

    def read(first: dict[str, float], second: dict[str, float]) -> str:
        a, b = (_probs(identifier, identifier.classes, **c) for c in (first, second))
        return identifier._decide(identifier._combine(a, b), face, np.stack([a, b]),
                                  SEEN_LARGE).card

    assert read({"2D": 0.79, "2H": 0.05}, {"other": 0.9}) == "2H"
    assert read({"2D": 0.79, "2H": 0.05}, {"2D": 0.7}) == "2D"  # two corners read: they decide
    assert read({"AD": 0.79, "AH": 0.05}, {"other": 0.9}) == "AD"  # an ace: the corners
    assert read({"2D": 0.3, "3D": 0.3}, {"other": 0.9}) == "??"  # no rank sure enough


def _bands(top: dict[str, float], bottom: dict[str, float]) -> np.ndarray:
    """Both end bands' probabilities of each suit, in ``SUITS`` order."""
    return np.array([[band.get(suit, 0.01) for suit in "SHDC"] for band in (top, bottom)],
                    np.float32)


def test_the_end_bands_weigh_the_suit_of_an_uncovered_card(
        identifier: CardIdentifier) -> None:
    # As aisleriot tango_nuevo: a rank alone in its one index corner, guessed a diamond
    # with some certainty, the hearts printed in the opposite corner of the top band (read
    # surely) and a giant pip across the bottom one (half taken for a diamond's point).
    face_classes = identifier._face.classes if identifier._face else []
    unsure_face = _probs(identifier, face_classes, **{"4H": 0.3, "7D": 0.2})

    def read(first: dict[str, float], second: dict[str, float], band: np.ndarray | None,
             face: np.ndarray = unsure_face) -> str:
        a, b = (_probs(identifier, identifier.classes, **c) for c in (first, second))
        return identifier._decide(identifier._combine(a, b), face, np.stack([a, b]),
                                  SEEN_LARGE, band).card

    hearts = _bands({"H": 0.95, "D": 0.04}, {"H": 0.45, "D": 0.55})
    assert read({"7D": 0.85, "7H": 0.1}, {"other": 0.98}, None) == "7D"  # without: corners
    assert read({"7D": 0.85, "7H": 0.1}, {"other": 0.98}, hearts) == "7H"
    # Corners sure of their suit keep it against bands half in doubt.
    assert read({"7D": 0.999, "7H": 1e-4}, {"7D": 0.999}, hearts) == "7D"
    # Corners sure of the rank only (split between suits, so "??") take the bands' suit...
    assert read({"9S": 0.45, "9C": 0.35}, {"other": 0.98}, None) == "??"
    clubs = _bands({"C": 0.9, "S": 0.08}, {"C": 0.6, "S": 0.3})
    assert read({"9S": 0.45, "9C": 0.35}, {"other": 0.98}, clubs) == "9C"
    # ...but not when the rank itself is in doubt, nor for a joker the corners read.
    assert read({"9S": 0.3, "6C": 0.3}, {"other": 0.98}, clubs) == "??"
    assert read({"JK": 0.9}, {"JK": 0.3, "JC": 0.65}, clubs) == "JK"
    # A sure face still decides a number card, and a joker its corners take for a jack.
    assert read({"7D": 0.85}, {"other": 0.98}, hearts,
                _probs(identifier, face_classes, **{"8D": 0.97})) == "8D"
    assert read({"JD": 0.85}, {"other": 0.98}, hearts,
                _probs(identifier, face_classes, JK=FACE_JOKER_SURE + 0.1)) == "JK"
    # Face and corners reading one rank: the bands join their product.
    assert read({"KD": 0.6, "KH": 0.35}, {"KD": 0.6, "KH": 0.35}, hearts,
                _probs(identifier, face_classes, KD=0.5, KH=0.4)) == "KH"
    # Not for an ace the face reads too (seen small): its bands show only the small corner
    # suits, the face its one pip (kde jolly-royal's clubs, whose corners look like spades).
    spades = _bands({"S": 0.93, "C": 0.05}, {"S": 0.9, "C": 0.08})
    ace_corners = {"AS": 0.6, "AC": 0.35}
    small = ACE_POOLED_PX_PER_MM

    def read_ace(face: np.ndarray, band: np.ndarray) -> str:
        a = _probs(identifier, identifier.classes, **ace_corners)
        return identifier._decide(identifier._combine(a, a), face, np.stack([a, a]), small,
                                  band).card

    assert read_ace(_probs(identifier, face_classes, AC=0.98, AS=0.01), spades) == "AC"
    # An ace whose face reads something else (one giant pip cut off): the bands count.
    assert read_ace(_probs(identifier, face_classes, **{"4S": 0.5}),
                    _bands({"C": 0.9, "S": 0.08}, {"C": 0.6, "S": 0.3})) == "AC"


def test_a_card_something_may_lie_on_is_weighed_by_its_clear_bands_alone(
        identifier: CardIdentifier) -> None:
    def read(first: dict[str, float], second: dict[str, float], band: np.ndarray) -> str:
        a, b = (_probs(identifier, identifier.classes, **c) for c in (first, second))
        return identifier._decide_bands(identifier._combine(a, b), np.stack([a, b]), band).card

    hearts = _bands({"H": 0.95, "D": 0.04}, {})[:1]  # one band clear of other cards
    assert read({"7D": 0.85, "7H": 0.1}, {"other": 0.98}, hearts) == "7H"
    assert read({"7D": 0.999, "7H": 1e-4}, {"7D": 0.999}, hearts) == "7D"
    assert read({"9S": 0.45, "9H": 0.35}, {"other": 0.98}, hearts) == "9H"
    assert read({"JK": 0.9}, {"JK": 0.3, "JH": 0.65}, hearts) == "JK"


@pytest.mark.skipif(not DEFAULT_SUIT_MODEL.exists(), reason="no suit model")
def test_only_the_bands_said_clear_of_a_covered_card_are_read(
        identifier: CardIdentifier) -> None:
    image, corners = _seven_of_clubs()
    quick, = identifier.identify_many(image, [corners], quick=True)
    assert quick.cut is not None
    cuts = [quick.cut] * 3
    rows = identifier._read_bands(cuts, [(True, False), (False, False), (True, True)])
    assert sorted(rows) == [0, 2] and rows[0].shape == (1, 4) and rows[2].shape == (2, 4)
    assert np.allclose(rows[0][0], rows[2][0])  # the same first band
    covered, = identifier.confirm([quick], [False], clear=[(True, True)])
    assert covered.card == "7C" and covered.face is None  # bands, but no face, read


@pytest.mark.skipif(not DEFAULT_SUIT_MODEL.exists(), reason="no suit model")
def test_the_shipped_suit_model_reads_a_rendered_card_s_bands(
        identifier: CardIdentifier) -> None:
    image, corners = _seven_of_clubs()
    quick, = identifier.identify_many(image, [corners], quick=True)
    assert identifier._suit is not None and quick.cut is not None
    read = identifier._suit.probabilities(list(quick.cut.bands()))
    assert [identifier._suit.classes[int(p.argmax())] for p in read] == ["C", "C"]
    assert CardIdentifier(suit_model=None)._suit is None


def test_the_face_is_read_only_for_cards_said_to_be_uncovered(
        identifier: CardIdentifier) -> None:
    image, corners = _seven_of_clubs()
    covered, uncovered = identifier.identify_many(image, [corners, corners], [False, True])
    assert covered.face is None and covered.card == "7C"
    assert uncovered.face is not None and uncovered.face[0] == "7C"
    assert uncovered.card == "7C"


def test_a_card_is_measured_by_its_short_side_as_seen(identifier: CardIdentifier) -> None:
    image, corners = _seven_of_clubs()
    cut = identifier.identify_many(image, [corners], quick=True)[0].cut
    assert cut is not None
    sides = np.linalg.norm(corners - np.roll(corners, -1, axis=0), axis=1)
    assert cut.px_per_mm() == pytest.approx(sides.min() / 63.0)
    assert 1.5 < cut.px_per_mm() < 4.0  # a 960 x 540 camera 300 mm above the card


def _seven_of_clubs() -> tuple[np.ndarray, np.ndarray]:
    camera = Camera.looking_at((0.0, 0.0), 300.0, tilt_deg=15.0, image_size=(960, 540))
    scene = Scene((card("a", "7C", "aisleriot:anglo_poker", (0.0, 0.0), 20.0),))
    clean = effects.Photometry.random(np.random.default_rng(0), clean=True)
    image, truth = Renderer(camera, np.random.default_rng(1), clean).render(scene)
    return image, np.array(truth.objects[0].corners_px)


def test_a_reading_moved_to_another_outline_reads_the_face_there(
        identifier: CardIdentifier) -> None:
    image, corners = _seven_of_clubs()
    centre = corners.mean(axis=0)
    loose = centre + (corners - centre) * 1.12 + (6.0, -4.0)  # a box askew round the card
    quick, = identifier.identify_many(image, [loose], quick=True)
    moved = identifier.moved(quick, corners)
    # the corners' reading stays as it was read, from the box
    assert (moved.card, moved.confidence, moved.corners, moved.alternatives) == (
        quick.card, quick.confidence, quick.corners, quick.alternatives)
    assert moved.cut is not None and quick.cut is not None
    assert np.array_equal(moved.cut.probabilities, quick.cut.probabilities)
    # the face and end bands are cut where the card now is: as read there from the start
    there, = identifier.identify_many(image, [corners], quick=True)
    assert there.cut is not None
    assert np.array_equal(moved.cut.face(), there.cut.face())
    assert not np.array_equal(moved.cut.face(), quick.cut.face())
    assert all(np.array_equal(a, b) for a, b in zip(moved.cut.bands(), there.cut.bands(),
                                                    strict=True))
    confirmed, = identifier.confirm([moved], [True])
    assert confirmed.face == identifier.confirm([there], [True])[0].face
    # what of it lies in the picture is judged there too
    beyond = corners - (0.0, float(corners[:, 1].max()) - 60.0)  # most of it above the top
    cut = identifier.moved(quick, beyond).cut
    assert cut is not None and cut.in_picture == share_in_picture(beyond, image) < 0.5
    assert cut.seen != (True, True) and quick.cut.seen == (True, True)
    with pytest.raises(ValueError, match="quick=True"):
        identifier.moved(CardReading("7C", 0.9, (("7C", 0.9), ("7C", 0.9))), corners)


def test_the_index_model_s_members_are_averaged_in_and_a_quick_reading_confirmed_later(
        identifier: CardIdentifier, tmp_path: Path) -> None:
    image, corners = _seven_of_clubs()
    quick, = identifier.identify_many(image, [corners], quick=True)
    assert quick.face is None  # quick: no face
    confirmed, = identifier.confirm([quick], [True])
    assert confirmed == identifier.identify(image, corners, True)  # the same as at once
    assert confirmed.face is not None
    # The confirmed corners are the mean of every member's probabilities.
    index = identifier._index
    assert index.members, "the shipped index model has an ensemble"
    crops = list(quick.cut.corners) if quick.cut else []
    mean = np.mean([index.probabilities(crops, m) for m in range(1 + len(index.members))],
                   axis=0)
    assert confirmed.corners == tuple((index.classes[int(p.argmax())], float(p.max()))
                                      for p in mean)
    alone, = identifier.confirm([quick], [True], ensemble=False)  # the face only
    assert alone.corners == quick.corners and alone.face == confirmed.face
    # A member that classifies into other classes is refused.
    meta = json.loads(DEFAULT_MODEL.with_suffix(".json").read_text())
    other = tmp_path / "other.onnx"
    other.write_bytes(b"")
    other.with_suffix(".json").write_text(json.dumps({**meta, "classes": ["2C", "other"]}))
    main = tmp_path / "main.onnx"
    main.write_bytes(b"")
    main.with_suffix(".json").write_text(json.dumps({**meta, "members": ["other.onnx"]}))
    with pytest.raises(ValueError, match="classes"):
        CardIdentifier(main)
    # Members that are no file names beside it are refused in so many words.
    for members in ([None], "other.onnx", ["../other.onnx"], [""]):
        main.with_suffix(".json").write_text(json.dumps({**meta, "members": members}))
        with pytest.raises(ModelMissingError, match="members are not file names beside it"):
            CardIdentifier(main)


def test_without_a_face_model_only_the_corners_read(identifier: CardIdentifier) -> None:
    plain = CardIdentifier(DEFAULT_MODEL, face_model=None)
    assert not plain.reads_faces and identifier.reads_faces


def test_a_reading_keeps_the_next_likeliest_cards(identifier: CardIdentifier) -> None:
    first = _probs(identifier, identifier.classes, **{"JC": 0.7, "QC": 0.25, "other": 0.9})
    second = _probs(identifier, identifier.classes, **{"JC": 0.5, "QC": 0.45})
    reading = identifier._combine(first, second)
    assert reading.card == "JC"
    code, sure = reading.alternatives[0]  # "other" (no card) is never an alternative
    assert code == "QC" and sure == pytest.approx(1 - 0.75 * 0.55, abs=1e-3)
    face = _probs(identifier, identifier._face.classes if identifier._face else [],
                  **{"7C": 0.97})
    decided = identifier._decide(reading, face, np.stack([first, second]), SEEN_LARGE)
    assert decided.card == "7C" and decided.alternatives[:2] == (
        ("JC", reading.confidence), reading.alternatives[0])  # the corners' reading first


def test_a_big_batch_split_among_cores_reads_as_one_run(identifier: CardIdentifier) -> None:
    rng = np.random.default_rng(3)
    crops = [rng.integers(0, 256, (64, 64, 3), dtype=np.uint8) for _ in range(40)]
    index = identifier._index
    saved = index.workers
    try:
        index.workers = 1
        whole = index.probabilities(crops)
        index.workers = 3
        split = index.probabilities(crops)
    finally:
        index.workers = saved
    assert split.shape == whole.shape == (40, len(identifier.classes))
    np.testing.assert_allclose(split, whole, atol=1e-5)


def test_batches_are_split_only_for_one_thread_sessions_and_never_lost() -> None:
    assert CardIdentifier(threads=2)._index.workers == 1  # it has the cores already
    fresh = CardIdentifier(threads=1)
    index = fresh._index
    index.workers = 2
    rng = np.random.default_rng(4)
    crops = [rng.integers(0, 256, (64, 64, 3), dtype=np.uint8) for _ in range(40)]
    split = index.probabilities(crops)
    index._workers().shutdown()  # as at the interpreter's exit: no new work is taken
    after = index.probabilities(crops)  # read unsplit instead of raising
    np.testing.assert_allclose(after, split, atol=1e-5)


def test_crops_cut_in_parts_among_cores_come_back_in_order(identifier: CardIdentifier) -> None:
    # Items cut into one or two crops each, as ``_read_bands`` cuts a card's clear bands.
    rng = np.random.default_rng(5)
    items = [(k, rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)) for k in range(30)]
    cutters: set[str] = set()

    def cut(item: tuple[int, np.ndarray]) -> tuple[np.ndarray, ...]:
        cutters.add(threading.current_thread().name)
        k, crop = item
        return (crop,) if k % 3 else (crop, np.ascontiguousarray(crop[::-1]))

    index = identifier._index
    saved = index.workers
    try:
        index.workers = 1
        whole_cuts, whole = index.cut_and_read(items, cut, each=2)
        assert cutters == {threading.main_thread().name}
        cutters.clear()
        index.workers = 3
        split_cuts, split = index.cut_and_read(items, cut, each=2)
    finally:
        index.workers = saved
    # the parts were cut in the pool's threads, not by the caller
    assert cutters and threading.main_thread().name not in cutters
    assert [len(c) for c in split_cuts] == [len(c) for c in whole_cuts] == [
        2 if k % 3 == 0 else 1 for k in range(30)]
    assert all((a == b).all() for x, y in zip(split_cuts, whole_cuts, strict=True)
               for a, b in zip(x, y, strict=True))
    assert split.shape == whole.shape == (40, len(identifier.classes))
    np.testing.assert_allclose(split, whole, atol=1e-5)
    # each crop's row is where the flattened crops put it
    np.testing.assert_allclose(index.probabilities([items[3][1]])[0], split[4], atol=1e-5)


def test_a_few_faces_are_cut_among_the_cores_and_read_as_in_one_batch(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A whole face costs FACE_CUT_COST index crops to cut: the verifier's four faces are
    # split among the cores (where 4 index crops are not), and read as in one batch.
    from referee.detection import cards as cards_module
    from referee.detection.cards import FACE_CUT_COST, SPLIT_BATCH, CardVerifier

    assert 4 * FACE_CUT_COST >= 2 * SPLIT_BATCH > 4
    verifier = CardVerifier(threads=1)
    model = verifier._model
    model.workers = 2
    rng = np.random.default_rng(7)
    image = rng.integers(0, 256, (300, 400, 3), dtype=np.uint8)
    outlines = [np.array([[40, 40], [140, 40], [140, 180], [40, 180]], float),
                np.array([[220, 60], [330, 70], [320, 220], [210, 210]], float),
                np.array([[60, 120], [200, 110], [205, 210], [65, 220]], float),
                np.array([[250, 20], [390, 30], [385, 130], [245, 125]], float)]
    cutters: list[str] = []
    face_crop = cards_module.face_crop

    def recorded(image: np.ndarray, corners: np.ndarray) -> np.ndarray:
        cutters.append(threading.current_thread().name)
        return face_crop(image, corners)

    monkeypatch.setattr(cards_module, "face_crop", recorded)
    split = verifier.not_card(image, outlines)
    assert len(cutters) == 4 and threading.main_thread().name not in cutters
    cutters.clear()
    monkeypatch.setattr(cards_module, "FACE_CUT_COST", 1)  # as cheap as an index crop
    whole = verifier.not_card(image, outlines)
    assert cutters == [threading.main_thread().name] * 4
    np.testing.assert_allclose(split, whole, atol=1e-6)


def test_an_index_corner_beyond_the_picture_reads_as_nothing_and_decides_nothing(
        identifier: CardIdentifier, monkeypatch: pytest.MonkeyPatch) -> None:
    # A card reaching 100 px above a 300 x 400 picture: its top index corner is the
    # picture's top row drawn out. It reads `other` for sure, in the quick reading and in
    # the ensemble's, and neither the face nor the band beyond the edge is read.
    rng = np.random.default_rng(6)
    image = rng.integers(0, 256, (300, 400, 3), dtype=np.uint8)
    beyond = np.array([[150, -100], [250, -100], [250, 40], [150, 40]], float)
    inside = np.array([[150, 100], [250, 100], [250, 240], [150, 240]], float)
    quick = identifier.identify_many(image, [beyond, inside], quick=True)
    seen = quick[0].cut.seen  # type: ignore[union-attr]
    assert sorted(seen) == [False, True] and quick[1].cut.seen == (True, True)  # type: ignore[union-attr]
    hidden = seen.index(False)
    other = identifier.classes.index("other")
    probabilities = quick[0].cut.probabilities  # type: ignore[union-attr]
    assert probabilities[hidden, other] == 1.0 and probabilities[hidden].sum() == 1.0
    assert quick[0].corners[hidden] == ("other", 1.0)
    suit = identifier._suit
    assert suit is not None
    banded: list[tuple[int, tuple[bool, bool]]] = []
    read_bands = suit.cut_and_read

    def recorded(items, cut, member=0, **given):  # type: ignore[no-untyped-def]
        from referee.detection.cards import FACE_CUT_COST

        banded.extend(items)
        assert given.get("cost") == FACE_CUT_COST  # (a band's card is warped whole first)
        return read_bands(items, cut, member, **given)

    monkeypatch.setattr(suit, "cut_and_read", recorded)
    confirmed = identifier.confirm(quick, [True, True], ensemble=True,
                                   clear=[(True, True), (True, True)])
    assert confirmed[0].corners[hidden] == ("other", 1.0)
    assert confirmed[0].face is None and confirmed[1].face is not None
    assert dict(banded) == {0: seen, 1: (True, True)}  # the band beyond the edge is not read
    # A card a twentieth of which lies beyond the picture shows its face: that is read.
    slightly = np.array([[150, -7], [250, -7], [250, 133], [150, 133]], float)
    read = identifier.identify_many(image, [slightly], [True])[0]
    assert read.cut.seen == (True, True) and read.face is not None  # type: ignore[union-attr]


def test_a_card_is_read_as_a_back_only_when_its_face_says_so_surely(
        identifier: CardIdentifier, monkeypatch: pytest.MonkeyPatch) -> None:
    # ``backs``: a loose box's face read as a back (``detect._seen_backs``); a corner sure of
    # a face-up card outweighs the face, as in ``_decide``.
    assert identifier._face is not None
    image, corners = _seven_of_clubs()
    quick = identifier.identify_many(image, [corners], quick=True)
    assert quick[0].card == "7C" and max(p for _, p in quick[0].corners) >= BACK_INDEX_SURE
    classes = identifier._face.classes

    def faces(back: float) -> None:
        probs = _probs(identifier, classes, back=back, JK=1 - back)
        monkeypatch.setattr(identifier._face, "cut_and_read",
                            lambda items, cut, **_: ([cut(i) for i in items], [probs] * len(items)))

    faces(0.95)
    assert identifier.backs(image, [corners]) == [None]  # its corners read 7C for sure
    table = CardReading("??", 0.1, (("other", 0.99), ("other", 0.98)), None, quick[0].cut)
    read = identifier.backs(image, [corners], quick=[table])[0]
    assert read is not None and read.card == "back" and read.confidence == pytest.approx(0.95)
    assert read.cut is quick[0].cut  # it can be confirmed later, as a quick reading
    assert read.face == ("back", pytest.approx(0.95))
    faces(FACE_SURE - 0.05)
    assert identifier.backs(image, [corners], quick=[table]) == [None]
    assert identifier.backs(image, [corners], quick=[table], at_least=0.5)[0] is not None


def test_a_covered_card_whose_corners_read_no_card_is_a_back_when_its_face_reads_one(
        identifier: CardIdentifier, monkeypatch: pytest.MonkeyPatch) -> None:
    # A face-down card of a design never seen, another card on it: its corners read table.
    assert identifier._face is not None
    image, corners = _seven_of_clubs()
    quick, = identifier.identify_many(image, [corners], quick=True)
    classes = identifier._face.classes
    asked: list[int] = []

    def faces(back: float) -> None:
        """Faces read as a back this sure, but for the seven of clubs' own cut: a 7C."""
        probs = _probs(identifier, classes, back=back, JK=1 - back)
        seven = _probs(identifier, classes, **{"7C": 0.99})

        def read(items, cut, **_):  # type: ignore[no-untyped-def]
            asked.append(len(items))
            return [cut(i) for i in items], [seven if i is quick.cut else probs for i in items]

        monkeypatch.setattr(identifier._face, "cut_and_read", read)

    assert quick.cut is not None

    def corners_read(first: dict[str, float], second: dict[str, float]) -> CardReading:
        """The seven's cut, its corners read as given (their likeliest first), ``??``."""
        probs = np.stack([_probs(identifier, identifier.classes, **first),
                          _probs(identifier, identifier.classes, **second)])
        likeliest = tuple((max(sure, key=lambda c: sure[c]), max(sure.values()))
                          for sure in (first, second))
        return replace(quick, card="??", confidence=0.2, corners=likeliest,  # type: ignore[arg-type]
                       cut=replace(quick.cut, probabilities=probs))  # type: ignore[type-var]

    table = corners_read({"other": 0.99}, {"back": 0.5, "other": 0.4})
    faces(COVERED_BACK_SURE + 0.03)
    one_end = [(False, True)]  # (an end band no other card overlaps: much of it shows)
    read, = identifier.confirm([table], [False], ensemble=False, clear=one_end)
    assert (read.card, read.confidence) == ("back", pytest.approx(COVERED_BACK_SURE + 0.03))
    assert read.face == ("back", pytest.approx(COVERED_BACK_SURE + 0.03)) and asked == [1]
    # the face less sure: still ??
    faces(COVERED_BACK_SURE - 0.05)
    assert identifier.confirm([table], [False], ensemble=False, clear=one_end)[0].card == "??"
    # A corner reading a card, however unsure, or a card read: its face is not read.
    asked.clear()
    faces(0.99)
    half = replace(table, corners=(("other", 0.99), ("QH", 0.4)))
    backed = replace(table, card="back", confidence=0.95, corners=(("back", 0.95),
                                                                    ("other", 0.9)))
    assert [r.card for r in identifier.confirm([half, quick, backed], [False] * 3,
                                               ensemble=False, clear=one_end * 3)] == [
        "??", "7C", "back"]
    assert asked == []
    # Read in one batch with an uncovered card's face, each card is decided by its own.
    asked.clear()
    faces(0.99)
    both = identifier.confirm([quick, table], [True, False], ensemble=False,
                              clear=[(True, True), (False, True)])
    assert [r.card for r in both] == ["7C", "back"] and asked == [2]  # (one batch)
    assert both[0].face == ("7C", pytest.approx(0.99))
    # Corners sure of a rank, whatever the suit, are read with the clear end band as that
    # rank (``_by_bands``): the face read as a back does not overrule them.
    ranked = corners_read({"other": 0.35, "7C": 0.25, "7S": 0.2, "7H": 0.2}, {"other": 0.99})
    assert ranked.corners[0][0] == "other"
    read, = identifier.confirm([ranked], [False], ensemble=False, clear=one_end)
    assert read.card[0] == "7"
    asked.clear()
    # Nor is the face of one a tenth of which lies beyond the picture, nor of one whose end
    # bands other cards overlap (all but hidden, its face shows the card on it), nor when
    # no band is said to be clear (the tracker's cards, placed on top).
    beyond = replace(table, cut=replace(table.cut, in_picture=0.8))  # type: ignore[type-var]
    assert identifier.confirm([beyond], [False], ensemble=False, clear=one_end)[0].card == "??"
    assert identifier.confirm([table], [False], ensemble=False,
                              clear=[(False, False)])[0].card == "??"
    assert identifier.confirm([table], [False], ensemble=False)[0].card == "??"
    assert asked == []


def test_a_card_whose_face_is_not_read_is_a_joker_by_one_corner_only_when_it_is_sure(
        identifier: CardIdentifier, monkeypatch: pytest.MonkeyPatch) -> None:
    def reading(first: dict[str, float], second: dict[str, float]) -> CardReading:
        return identifier._combine(_probs(identifier, identifier.classes, **first),
                                   _probs(identifier, identifier.classes, **second))

    unsure = reading({"JK": JOKER_CORNER_SURE - 0.05}, {"other": 0.99})
    assert unsure.card == "JK"  # as the corners alone read it
    made = joker_checked(unsure)
    assert made.card == "??" and made.corners == unsure.corners
    assert made.confidence == unsure.confidence
    # A corner sure enough, or both corners, or a card whose face was read: a joker stays.
    sure = reading({"other": 0.99}, {"JK": JOKER_CORNER_SURE + 0.01})
    both = reading({"JK": 0.7}, {"JK": 0.6})
    faced = replace(unsure, face=("JK", 0.4))
    assert [joker_checked(r).card for r in (sure, both, faced)] == ["JK"] * 3
    # A joker no corner reads as its likeliest class (the two together make it) is ?? too.
    neither = reading({"QH": 0.5, "JK": 0.45}, {"other": 0.55, "JK": 0.45})
    assert neither.card == "JK" and joker_checked(neither).card == "??"
    # ``confirm`` makes it so, with or without a face model, unless told not to.
    image, corners = _seven_of_clubs()
    quick, = identifier.identify_many(image, [corners], quick=True)
    joker = replace(quick, card="JK", confidence=unsure.confidence, corners=unsure.corners)
    assert identifier.confirm([joker], [False], ensemble=False)[0].card == "??"
    assert identifier.confirm([joker], [False], ensemble=False,
                              check_jokers=False)[0].card == "JK"
    plain = CardIdentifier(DEFAULT_MODEL, face_model=None)
    assert plain.confirm([joker], [False], ensemble=False)[0].card == "??"
    assert plain.confirm([joker], [False], ensemble=False, check_jokers=False)[0].card == "JK"
    assert plain.confirm([replace(joker, corners=sure.corners)], [False],
                         ensemble=False)[0].card == "JK"
    # An uncovered card's face is read, and what it then says stands (here: nothing new).
    monkeypatch.setattr(identifier, "_decide", lambda reading, *args, **kwargs: replace(
        reading, face=("JK", 0.4)))
    assert identifier.confirm([joker], [True], ensemble=False)[0].card == "JK"
