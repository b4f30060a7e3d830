"""Identity voted over frames, and a reading of a card already on the table."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from referee.detection.cards import CardReading as Read
from referee.tracking.cards import CardReading
from referee.tracking.identity import IdentifierReader
from referee.tracking.tracker import RUNNER_UP_MIN, _possible


class _Frames:
    """A stand-in identifier giving one card these readings on successive frames."""

    def __init__(self, readings: Sequence[Read]) -> None:
        self.readings = list(readings)

    def identify_many(self, frame, cards, uncovered=None):  # type: ignore[no-untyped-def]
        return [self.readings.pop(0)]


def test_votes_keep_the_runners_up_of_every_frame() -> None:
    corners = (("JC", 0.8), ("QC", 0.5))
    frames = [Read("JC", 0.8, corners, alternatives=(("QC", 0.5),)),
              Read("JC", 0.7, corners, alternatives=(("QC", 0.6), ("KC", 0.1))),
              Read("QC", 0.6, corners, alternatives=(("JC", 0.5),))]
    reader = IdentifierReader(_Frames(frames))  # type: ignore[arg-type]
    square = np.zeros((4, 2))
    (read,) = reader.read(0.0, [np.zeros((2, 2, 3), np.uint8)] * 3, [square], [square])
    assert read.card == "JC" and abs(read.confidence - 1.5 / 3) < 1e-9
    assert read.alternatives[0][0] == "QC" and abs(read.alternatives[0][1] - 1.7 / 3) < 1e-9
    assert read.alternatives[1][0] == "KC"


def test_a_card_read_as_one_on_the_table_is_its_likely_runner_up() -> None:
    reading = CardReading("JC", 0.8, (("QC", RUNNER_UP_MIN + 0.1), ("KC", 0.5)))
    assert _possible(reading, {"5S"}) == reading  # possible: as read
    assert _possible(reading, {"JC"}).card == "QC"
    assert _possible(reading, {"JC", "QC"}).card == "KC"
    unlikely = CardReading("JC", 0.8, (("QC", RUNNER_UP_MIN - 0.1),))
    assert _possible(unlikely, {"JC"}) == unlikely  # stands: reported as impossible


def test_a_back_or_a_joker_may_lie_on_the_table_twice() -> None:
    for code in ("back", "JK", "??"):
        reading = CardReading(code, 0.9, (("QC", 0.8),))
        assert _possible(reading, {code}) == reading
