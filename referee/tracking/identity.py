"""Vote, then ask the rules: a card's identity read on several frames of a stable state."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from referee.detection.cards import UNSURE, CardIdentifier
from referee.detection.outlines import alone
from referee.tracking.cards import CardReader, CardReading
from referee.tracking.topdown import FloatArray, Image


class IdentifierReader:
    """Reads each card on every frame given (the original camera frames, never the warp)
    and sums the confidence per code: a card misread once is outvoted by the others.
    The cards read are the ones just placed, so on top: their faces are read too, unless
    two of them overlap each other."""

    def __init__(self, identifier: CardIdentifier) -> None:
        self.identifier = identifier

    def read(self, t: float, frames: Sequence[Image], corners_mm: Sequence[FloatArray],
             corners_px: Sequence[FloatArray]) -> list[CardReading]:
        del t
        votes: list[dict[str, float]] = [defaultdict(float) for _ in corners_px]
        seconds: list[dict[str, float]] = [defaultdict(float) for _ in corners_px]
        uncovered = alone(list(corners_mm))
        for frame in frames:
            readings = self.identifier.identify_many(frame, list(corners_px), uncovered)
            for vote, second, reading in zip(votes, seconds, readings, strict=True):
                vote[reading.card] += reading.confidence
                for code, confidence in reading.alternatives:
                    second[code] += confidence
        out = []
        n = max(1, len(frames))
        for vote, second in zip(votes, seconds, strict=True):
            known = {code: v for code, v in vote.items() if code != UNSURE}
            if not known:
                out.append(CardReading(UNSURE, 0.0))
                continue
            code = max(known, key=lambda c: known[c])
            # Runners-up: read first on other frames, or next on this card's readings.
            others = {c: (known.get(c, 0.0) + second.get(c, 0.0)) / n
                      for c in {*known, *second} if c != code}
            ranked = tuple(sorted(others.items(), key=lambda item: -item[1]))
            out.append(CardReading(code, known[code] / n, ranked))
        return out


class UnreadableReader:
    """No card model: every card is ``??`` (the referee still tracks outlines)."""

    def read(self, t: float, frames: Sequence[Image], corners_mm: Sequence[FloatArray],
             corners_px: Sequence[FloatArray]) -> list[CardReading]:
        return [CardReading(UNSURE, 0.0) for _ in corners_px]


def reader_for(game: str) -> tuple[CardReader, str | None]:
    """The card reader a game needs, and a warning when the card model is missing."""
    from referee.detection.cards import ModelMissingError
    from referee.tracking.tracker import MODES

    if MODES[game] != "cards":
        return UnreadableReader(), None
    try:
        return IdentifierReader(CardIdentifier()), None
    except (ModelMissingError, OSError, ValueError, KeyError) as error:
        return UnreadableReader(), f"{error}; cards are reported as ??"
