"""Card identity from a card's two index corners, with a small classifier run by onnxruntime.

The model (``models/card_index.onnx``, trained on synthetic renders, see models/README.md)
classifies one 64 x 64 index crop into a card code, ``JK``, ``back`` or ``other``. Both
index corners of a card are read; agreeing readings add up, and a card whose best reading
is not confident enough is reported as ``??``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from referee.detection.crops import INDEX_CROP_PX, LEGACY_INDEX_MM, index_crops
from referee.detection.onnx_model import MODELS_DIR, ModelMissingError, cpu_session, read_meta

__all__ = ["MODELS_DIR", "CardIdentifier", "CardReading", "ModelMissingError"]

Image = npt.NDArray[np.uint8]
DEFAULT_MODEL: Final = MODELS_DIR / "card_index.onnx"
UNSURE: Final = "??"
#: The classifier's class for a corner that is table or clutter, not a card.
NOT_A_CARD: Final = "other"
#: Below this probability a reading is "??" (measured on validation decks, models/README.md).
MIN_CONFIDENCE: Final = 0.6


@dataclass(frozen=True)
class CardReading:
    """What a card is: its code (or ``??``/``back``), how sure, and each corner's reading."""

    card: str
    confidence: float
    corners: tuple[tuple[str, float], tuple[str, float]]


class CardIdentifier:
    """Reads card identities with the ONNX index-corner classifier."""

    def __init__(self, model: Path = DEFAULT_MODEL, *, threads: int = 1) -> None:
        meta = read_meta(model, "card model")
        self.model_path = model
        self.classes: list[str] = list(meta["classes"])
        #: The size of the index cut the model was trained on (mm, width x height).
        width, height = meta.get("index_mm", LEGACY_INDEX_MM)
        self.index_mm = (float(width), float(height))
        self.threads = threads

    @cached_property
    def _session(self) -> Any:
        return cpu_session(self.model_path, self.threads)

    def probabilities(self, crops: list[Image]) -> npt.NDArray[np.float32]:
        """Class probabilities (N x classes) for BGR index crops of INDEX_CROP_PX square."""
        batch = np.stack([c[:, :, ::-1] for c in crops]).astype(np.float32) / 255.0
        batch = np.ascontiguousarray(batch.transpose(0, 3, 1, 2))
        session = self._session
        output = session.run(None, {session.get_inputs()[0].name: batch})[0]
        return np.asarray(output, dtype=np.float32)

    def identify(self, image: Image, corners_px: npt.ArrayLike) -> CardReading:
        """Read the card whose four corners (image pixels, any order) are given."""
        return self.identify_many(image, [corners_px])[0]

    def identify_many(self, image: Image, cards: list[npt.ArrayLike]) -> list[CardReading]:
        if not cards:
            return []
        crops: list[Image] = []
        for corners in cards:
            crops.extend(index_crops(image, corners, self.index_mm))
        assert crops[0].shape[:2] == (INDEX_CROP_PX, INDEX_CROP_PX)
        probs = self.probabilities(crops)
        return [self._combine(probs[2 * i], probs[2 * i + 1]) for i in range(len(cards))]

    def _combine(self, first: npt.NDArray[np.float32],
                 second: npt.NDArray[np.float32]) -> CardReading:
        readings = tuple((self.classes[int(p.argmax())], float(p.max())) for p in (first, second))
        # A covered corner reads as "other" or as something unsure: the best card class over
        # both corners wins, so one clear corner suffices and two agreeing ones reinforce.
        joint = first + second
        if NOT_A_CARD in self.classes:
            joint[self.classes.index(NOT_A_CARD)] = -1.0
        best = int(joint.argmax())
        confidence = float(max(first[best], second[best],
                               1 - (1 - first[best]) * (1 - second[best])))
        card = self.classes[best] if confidence >= MIN_CONFIDENCE else UNSURE
        return CardReading(card, confidence, readings)  # type: ignore[arg-type]
