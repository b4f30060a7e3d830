"""Red and blue tokens on the Shove grid board -> which square holds which colour.

Each square is judged from a disc at its centre (a token is 20 mm on a 30 mm square, so a
disc of 6 mm radius stays on the token even when it sits a few millimetres off centre).
Colour is read as chromaticity relative to the board's own paper, which cancels the
light's brightness and white balance.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from referee.tracking.topdown import Image, TableView

SAMPLE_RADIUS_MM: Final = 6.0
#: Red minus blue chromaticity (relative to the paper) that marks a token, and the share
#: of a square's sample disc that must show it.
CHROMA_LEVEL: Final = 0.12
SHARE: Final = 0.5
#: Pixels darker than this share of the paper's brightness count as colourless.
DARK_FRACTION: Final = 0.25

Square = tuple[int, int]


@dataclass(frozen=True)
class BoardReading:
    red: tuple[Square, ...]
    blue: tuple[Square, ...]


def read_board(view: TableView, state: Image, rows: int, cols: int,
               square_mm: float) -> BoardReading:
    """Which squares hold a red or a blue token in a stable top-down state."""
    pixels = state.astype(np.float32) + 1.0
    chroma = pixels / pixels.sum(axis=2, keepdims=True)  # b, g, r shares
    inside = view.seen
    paper = np.median(chroma[inside].reshape(-1, 3), axis=0) if inside.any() else \
        np.full(3, 1 / 3, np.float32)
    redness = (chroma[..., 2] - paper[2]) - (chroma[..., 0] - paper[0])
    # Near-black print (the victory square) has no trustworthy colour: a slight cast of the
    # light makes it "blue". Tokens are coloured, never that dark.
    brightness = pixels.sum(axis=2)
    paper_brightness = float(np.median(brightness[inside])) if inside.any() else 765.0
    redness[brightness < DARK_FRACTION * paper_brightness] = 0.0
    red: list[Square] = []
    blue: list[Square] = []
    offsets = _disc_offsets(view.px_per_mm)
    for row in range(rows):
        for col in range(cols):
            centre = view.to_raster([((col + 0.5) * square_mm, (row + 0.5) * square_mm)])[0]
            values = _sample(redness, centre, offsets)
            if values.size == 0:
                continue
            if np.mean(values > CHROMA_LEVEL) >= SHARE:
                red.append((row, col))
            elif np.mean(values < -CHROMA_LEVEL) >= SHARE:
                blue.append((row, col))
    return BoardReading(tuple(red), tuple(blue))


def _disc_offsets(px_per_mm: float) -> npt.NDArray[np.int32]:
    r = int(SAMPLE_RADIUS_MM * px_per_mm)
    ys, xs = np.mgrid[-r:r + 1, -r:r + 1]
    keep = xs ** 2 + ys ** 2 <= r * r
    return np.column_stack([xs[keep], ys[keep]]).astype(np.int32)


def _sample(values: npt.NDArray[np.float32], centre: npt.NDArray[np.float64],
            offsets: npt.NDArray[np.int32]) -> npt.NDArray[np.float32]:
    pts = offsets + np.round(centre).astype(np.int32)
    h, w = values.shape
    ok = (pts[:, 0] >= 0) & (pts[:, 0] < w) & (pts[:, 1] >= 0) & (pts[:, 1] < h)
    pts = pts[ok]
    return np.asarray(values[pts[:, 1], pts[:, 0]], dtype=np.float32)
