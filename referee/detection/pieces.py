"""Coins and tokens in one image, for `referee detect` with a board calibration.

The tracker finds pieces from how the table changed; a single picture has no "before", so
here they are found on the calibrated top-down view by their shape alone:
- piecepack coins: circles of the coin's size (Hough), each kept only when its rim shows
  as an edge most of the way round (printed artwork and textured tables seldom draw a
  whole circle of exactly that size);
- Shove tokens: the board's squares read by colour, as the tracker reads them.
"""

from __future__ import annotations

from typing import Any, Final

import cv2
import numpy as np
import numpy.typing as npt

from referee.calibration.layouts import GridBoardLayout, layout_for_game
from referee.calibration.model import Calibration
from referee.tracking.tokens import read_board
from referee.tracking.topdown import TableView, grid_bounds, piecepack_bounds
from referee.tracking.tracker import BOARD_SCALE

Image = npt.NDArray[np.uint8]
COIN_MM: Final = 19.0
PX_PER_MM: Final = BOARD_SCALE  # the tracker's top-down scale for boards
#: Hough accumulator threshold: low, so that faint coins are candidates; the rim test
#: below throws out the circles noise makes.
HOUGH_VOTES: Final = 12
#: Canny high threshold inside Hough: low enough for a coin little darker than the board.
CANNY_HIGH: Final = 40
#: Share of the rim (sampled at 48 points) that must show an edge across it.
RIM_SHARE: Final = 0.75
#: Grey-level step across the rim (between 0.75 and 1.25 radii) that counts as an edge.
RIM_STEP: Final = 6.0
#: Lab colour difference between a coin's inside and its surroundings.
DISC_CONTRAST: Final = 15.0


def coins_in(image: Image, calibration: Calibration) -> list[dict[str, Any]]:
    """Coins on a piecepack board calibration: centre and radius in board mm."""
    board = calibration.board
    if board is None or board.kind != "piecepack":
        return []
    view = TableView.build(calibration.plane,
                           piecepack_bounds(board.pitch_mm, board.tiles_per_side), PX_PER_MM)
    top = view.warp(image)
    lab = cv2.cvtColor(top, cv2.COLOR_BGR2LAB).astype(np.float32)
    grey: Image = np.asarray(cv2.GaussianBlur(cv2.cvtColor(top, cv2.COLOR_BGR2GRAY), (0, 0),
                                              1.5), np.uint8)
    radius = COIN_MM / 2 * PX_PER_MM
    circles = cv2.HoughCircles(grey, cv2.HOUGH_GRADIENT, dp=1, minDist=radius * 1.5,
                               param1=CANNY_HIGH, param2=HOUGH_VOTES, minRadius=int(radius * 0.8),
                               maxRadius=int(radius * 1.2) + 1)
    out = []
    for x, y, r in ([] if circles is None else circles[0]):
        if not view.seen[int(y), int(x)] or _rim_share(grey, x, y, r) < RIM_SHARE \
                or _contrast(lab, x, y, r) < DISC_CONTRAST:
            continue
        cx, cy = view.to_mm([[x, y]])[0]
        # The rim found is the blurred edge's middle, a little inside the coin: the radius
        # given is the coin's own (the detector finds coins of that size only).
        out.append({"center": [round(float(cx), 1), round(float(cy), 1)],
                    "radius": COIN_MM / 2})
    return out


def _rim_share(grey: Image, x: float, y: float, r: float) -> float:
    """The share of directions in which the grey level steps across the circle's rim."""
    angles = np.linspace(0, 2 * np.pi, 48, endpoint=False)
    h, w = grey.shape

    def ring(scale: float) -> npt.NDArray[np.float32]:
        xs = np.clip(np.round(x + scale * r * np.cos(angles)).astype(int), 0, w - 1)
        ys = np.clip(np.round(y + scale * r * np.sin(angles)).astype(int), 0, h - 1)
        return np.asarray(grey[ys, xs], np.float32)

    step = np.abs(ring(0.75) - ring(1.25))
    return float(np.mean(step >= RIM_STEP))


def _contrast(lab: npt.NDArray[np.float32], x: float, y: float, r: float) -> float:
    """Colour difference (Lab) between the disc's inside and the ring just outside it:
    a coin differs from what it lies on; a circle drawn by noise does not."""
    h, w = lab.shape[:2]
    reach = int(1.6 * r) + 1
    x0, y0 = max(0, int(x) - reach), max(0, int(y) - reach)
    window = lab[y0:min(h, int(y) + reach + 1), x0:min(w, int(x) + reach + 1)]
    ys, xs = np.ogrid[:window.shape[0], :window.shape[1]]
    d2 = (xs + x0 - x) ** 2 + (ys + y0 - y) ** 2
    inside = d2 <= (0.7 * r) ** 2
    ring = (d2 >= (1.25 * r) ** 2) & (d2 <= (1.6 * r) ** 2)
    if not inside.any() or not ring.any():
        return 0.0
    return float(np.linalg.norm(window[inside].mean(axis=0) - window[ring].mean(axis=0)))


def tokens_in(image: Image, calibration: Calibration) -> list[dict[str, Any]]:
    """Red and blue tokens on a Shove grid board calibration: colour and square."""
    if calibration.frame != "grid":
        return []
    layout = layout_for_game("shove")
    assert isinstance(layout, GridBoardLayout)
    view = TableView.build(calibration.plane, grid_bounds(layout.width_mm, layout.height_mm),
                           PX_PER_MM)
    reading = read_board(view, view.warp(image), layout.rows, layout.cols, layout.square_mm)
    size = layout.square_mm
    return [{"colour": colour, "square": [row, col],
             "center": [round((col + 0.5) * size, 1), round((row + 0.5) * size, 1)]}
            for colour, squares in (("red", reading.red), ("blue", reading.blue))
            for row, col in squares]
