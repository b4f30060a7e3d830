"""A flat, distortion-free camera looking straight down: 1 px = 1 mm, y up the table."""

from __future__ import annotations

import numpy as np

from referee.calibration.rectify import PlaneMap


def flat_plane(width: int = 400, height: int = 300, origin: tuple[float, float] = (0, 0),
               ) -> PlaneMap:
    # pixel (u, v) -> table (u + ox, height - v + oy)
    h = np.array([[1.0, 0.0, origin[0]], [0.0, -1.0, height + origin[1]], [0.0, 0.0, 1.0]])
    return PlaneMap(None, h, (width, height))
