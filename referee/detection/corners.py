"""A card's four corners read from a patch cut round its outline, by a small learned model.

The detector's boxes are rectangles round a card seen in perspective, and tightening them
onto the image's edges (``learned.tighten``, ``learned.polish``) catches now and then a
line of the card's print or the edge of the card next to it. The corner model
(``models/card_corners.onnx``, trained on rendered scenes: ``training/card_corners.py``)
looks at the card with some of the table round it (``crops.corner_patch``) and says where
its corners are, each on its own (the card's perspective), the covered ones too.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from referee.detection.crops import CORNER_PATCH_PX, corner_patch, patch_corners
from referee.detection.onnx_model import MODELS_DIR, ModelMissingError, cpu_session, read_meta

Image = npt.NDArray[np.uint8]
DEFAULT_CORNER_MODEL: Final = MODELS_DIR / "card_corners.onnx"


class CornerModel:
    """Reads the corners of cards from patches round their outlines."""

    def __init__(self, model: Path = DEFAULT_CORNER_MODEL, *, threads: int = 2) -> None:
        meta = read_meta(model, "card corner model")
        if meta.get("patch_px") != list(CORNER_PATCH_PX):
            raise ModelMissingError(f"card corner model {model} reads patches of "
                                    f"{meta.get('patch_px')} pixels, not {list(CORNER_PATCH_PX)}")
        # (opened now: a file that cannot be run fails here, not in the middle of an image)
        self._session = cpu_session(model, threads)
        shape = self._session.get_inputs()[0].shape
        width, height = CORNER_PATCH_PX
        if len(shape) != 4 or list(shape[1:]) != [3, height, width]:
            raise ModelMissingError(f"card corner model {model} takes {shape}, not patches")

    def corners(self, image: Image, outlines: Sequence[npt.ArrayLike],
                ) -> list[npt.NDArray[np.float64]]:
        """For each outline (4 corners, image pixels, any order), the card's corners as the
        model reads them round it (image pixels, clockwise from a short side)."""
        if len(outlines) == 0:
            return []
        cuts = [corner_patch(image, outline) for outline in outlines]
        batch = np.stack([patch for patch, _ in cuts]).transpose(0, 3, 1, 2)
        offsets = self._session.run(None, {self._session.get_inputs()[0].name:
                                           np.ascontiguousarray(batch, dtype=np.float32)})[0]
        reference = patch_corners()
        out = []
        for (_, warp), offset in zip(cuts, np.asarray(offsets, np.float64).reshape(-1, 4, 2),
                                     strict=True):
            points = (reference + offset).reshape(1, 4, 2)
            out.append(np.asarray(cv2.perspectiveTransform(points, np.linalg.inv(warp))[0],
                                  np.float64))
        return out
