"""The manual fallback: four clicked image points at the corners of a known rectangle."""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from referee.calibration.errors import CalibrationError
from referee.calibration.model import Calibration, card_size_problem, matrix3
from referee.calibration.solve import Lens
from referee.cards import CARD_MM

#: How far a click may be off, in pixels, for the error estimate.
CLICK_PX = 1.0


def four_point_calibration(clicks: Sequence[tuple[float, float]], width_mm: float,
                           depth_mm: float, image_size: tuple[int, int], *,
                           lens: Lens | None = None, game: str | None = None,
                           card_mm: tuple[float, float] = CARD_MM) -> Calibration:
    """Clicks in order front-left, front-right, back-right, back-left (distorted image px)
    of a ``width_mm`` x ``depth_mm`` rectangle; its front-left corner becomes the origin, its
    front edge the x axis. ``error_mm`` estimates a one-pixel click error on the table.
    ``card_mm``: the size of the cards played there."""
    problem = card_size_problem(card_mm)
    if problem:
        raise CalibrationError(f"the card size {problem}")
    if len(clicks) != 4:
        raise CalibrationError(f"four points are needed, got {len(clicks)}")
    if width_mm <= 0 or depth_mm <= 0:
        raise CalibrationError("the rectangle's sides must be positive")
    pixels = np.asarray(clicks, dtype=np.float64).reshape(4, 2)
    undistorted = lens.undistort(pixels) if lens else pixels
    # The corners must make a convex quadrilateral in this order (not crossed or folded).
    edges = np.roll(undistorted, -1, axis=0) - undistorted
    following = np.roll(edges, -1, axis=0)
    crosses = list(edges[:, 0] * following[:, 1] - edges[:, 1] * following[:, 0])
    if not (all(c > 1.0 for c in crosses) or all(c < -1.0 for c in crosses)):
        raise CalibrationError("the four points must be the rectangle's corners in order "
                               "(front-left, front-right, back-right, back-left)")
    table = np.array([[0.0, 0.0], [width_mm, 0.0], [width_mm, depth_mm], [0.0, depth_mm]])
    homography = cv2.getPerspectiveTransform(undistorted.astype(np.float32),
                                             table.astype(np.float32)).astype(np.float64)
    homography /= homography[2, 2]
    # Sensitivity: how far each corner moves on the table when its click moves one pixel.
    spans = []
    for point in undistorted:
        probe = np.array([point, point + np.array([CLICK_PX, 0.0]),
                          point + np.array([0.0, CLICK_PX])])
        mapped = cv2.perspectiveTransform(probe.reshape(-1, 1, 2), homography).reshape(-1, 2)
        spans.append(float(np.linalg.norm(mapped[1:] - mapped[0], axis=1).mean()))
    return Calibration(
        game=game, frame="rectangle", image_size=image_size,
        image_to_table=matrix3(homography),
        camera_matrix=matrix3(lens.camera_matrix) if lens else None,
        dist_coeffs=tuple(float(v) for v in lens.dist_coeffs) if lens else None,
        error_mm=float(np.sqrt(np.mean(np.square(spans)))), corner_count=4,
        source="four clicked points", card_mm=card_mm)
