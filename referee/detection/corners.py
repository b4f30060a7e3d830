"""A card's four corners read from a patch cut round its outline, by a small learned model.

The detector's boxes are rectangles round a card seen in perspective, and tightening them
onto the image's edges (``learned.tighten``, ``learned.polish``) catches now and then a
line of the card's print or the edge of the card next to it. The corner model
(``models/card_corners.onnx``, trained on rendered scenes: ``training/card_corners.py``)
looks at the card with some of the table round it (``crops.corner_patch``) and says where
its corners are, each on its own (the card's perspective), the covered ones too. Since
session 50 a second run (``card_corners_2.onnx``, a member named in the first's metadata)
reads the same patches, and each corner is where the two put it on average.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import cv2
import numpy as np
import numpy.typing as npt

from referee.detection.crops import CORNER_PATCH_PX, corner_patch, patch_corners
from referee.detection.onnx_model import (
    MODELS_DIR,
    ModelMissingError,
    cpu_session,
    member_paths,
    read_meta,
)

Image = npt.NDArray[np.uint8]
DEFAULT_CORNER_MODEL: Final = MODELS_DIR / "card_corners.onnx"


class CornerModel:
    """Reads the corners of cards from patches round their outlines: the model and the
    members its metadata names, averaged."""

    def __init__(self, model: Path = DEFAULT_CORNER_MODEL, *, threads: int = 2) -> None:
        meta = read_meta(model, "card corner model")
        # (opened now: a file that cannot be run fails here, not in the middle of an image)
        self._sessions = [_opened(model, meta, threads)]
        # Further runs its metadata names (``members``, files beside it): each reads the
        # corners too, and a corner is where they put it on average.
        for member in member_paths(model, meta, "card corner model"):
            self._sessions.append(_opened(member, read_meta(member, "card corner model"),
                                          threads))

    def corners(self, image: Image, outlines: Sequence[npt.ArrayLike],
                ) -> list[npt.NDArray[np.float64]]:
        """For each outline (4 corners, image pixels, any order), the card's corners as the
        model reads them round it (image pixels, clockwise from a short side)."""
        if len(outlines) == 0:
            return []
        cuts = [corner_patch(image, outline) for outline in outlines]
        batch = np.ascontiguousarray(np.stack([patch for patch, _ in cuts]).transpose(0, 3, 1, 2),
                                     dtype=np.float32)
        offsets = [np.asarray(session.run(None, {session.get_inputs()[0].name: batch})[0],
                              np.float64).reshape(-1, 4, 2) for session in self._sessions]
        reference = patch_corners()
        out = []
        for k, (_, warp) in enumerate(cuts):
            back = np.linalg.inv(warp)
            read = [cv2.perspectiveTransform((reference + offset[k]).reshape(1, 4, 2), back)[0]
                    for offset in offsets]
            out.append(np.asarray(np.mean(read, axis=0), np.float64))
        return out


def _opened(model: Path, meta: dict[str, Any], threads: int) -> Any:
    """An onnxruntime session of a corner model (``meta``: its metadata), refused with a clear
    error when it reads patches of another size or scale or takes no patches."""
    if meta.get("patch_px") != list(CORNER_PATCH_PX):
        raise ModelMissingError(f"card corner model {model} reads patches of "
                                f"{meta.get('patch_px')} pixels, not {list(CORNER_PATCH_PX)}")
    # (a model trained on patches cut at another scale, ``training/card_corners.py data
    # --px-per-mm``, would read these as a card of another size)
    if meta.get("px_per_mm", 1.0) != 1.0:
        raise ModelMissingError(f"card corner model {model} reads patches cut at "
                                f"{meta.get('px_per_mm')!r} px a mm of the card, not 1")
    # (its threads sleep between runs: busy waiting, one model's threads took the cores from
    # the next one's, and two models read 9 patches in 25 ms, against 10 ms so; one alone
    # reads them in 6 ms either way, session 50)
    session = cpu_session(model, threads, spinning=False)
    shape = session.get_inputs()[0].shape
    width, height = CORNER_PATCH_PX
    if len(shape) != 4 or list(shape[1:]) != [3, height, width]:
        raise ModelMissingError(f"card corner model {model} takes {shape}, not patches")
    return session
