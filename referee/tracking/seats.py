"""Who acted: the arm that reached in comes from the player's seat.

While the table moves, every moving pixel is added to a heat map of the small camera image.
At the next stable state the heat far from where the action happened is the arm; its
direction from the action, on the table, points at the seat it came from.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from referee.calibration.layouts import Seat
from referee.calibration.rectify import PlaneMap
from referee.tracking.motion import BORDER_PX  # the arm-in-view border, same small image

#: Heat nearer than this to the action (mm) is the object itself, not the arm.
ARM_FROM_MM: Final = 100.0
FAR_MM: Final = 2500.0
#: Heat pixels (small image) an arm leaves at least.
MIN_ARM_PIXELS: Final = 3
#: Heat on the image border farther than this (mm) from the action is where the arm came
#: into view: past a card's half diagonal (54 mm), so never the card's own footprint.
BORDER_FROM_MM: Final = 65.0


@dataclass(frozen=True)
class SeatDirection:
    player: str
    arm_deg: float  # direction from the table towards the seat (arm comes from there)


def seat_directions(players: Sequence[str], seats: Sequence[Seat]) -> tuple[SeatDirection, ...]:
    """A seat's player faces ``facing_deg``: their arm reaches from the opposite way."""
    return tuple(SeatDirection(p, (s.facing_deg + 180.0) % 360.0)
                 for p, s in zip(players, seats, strict=False))


class ArmTracer:
    def __init__(self, plane: PlaneMap, small_shape: tuple[int, int]) -> None:
        height, width = small_shape
        scale = plane.image_size[0] / width
        cols, rows = np.meshgrid(np.arange(width), np.arange(height))
        px = np.column_stack([cols.ravel(), rows.ravel()]).astype(np.float64) * scale
        table = plane.to_table(px)
        ok = np.all(np.isfinite(table), axis=1) & (np.abs(table).max(axis=1) < FAR_MM)
        self._table = table
        self._ok = ok.reshape(height, width)
        self._heat = np.zeros(small_shape, np.float32)
        border = np.zeros(small_shape, bool)
        border[:BORDER_PX], border[-BORDER_PX:] = True, True
        border[:, :BORDER_PX], border[:, -BORDER_PX:] = True, True
        self._border = border.ravel()

    def add(self, moving: npt.NDArray[np.bool_]) -> None:
        if moving.shape == self._heat.shape:
            self._heat += moving

    def reset(self) -> None:
        self._heat[:] = 0

    def moved_near(self, centre: tuple[float, float], radius_mm: float) -> bool:
        """Whether anything moved within ``radius_mm`` of ``centre`` (table mm) since the
        last stable state: a hand, or a coin, passed there."""
        hot = (self._heat * self._ok).ravel() > 0
        if not hot.any():
            return False
        dist = np.linalg.norm(self._table[hot] - np.array(centre), axis=1)
        return bool((dist <= radius_mm).any())

    def arm_direction(self, centre: tuple[float, float]) -> float | None:
        """Degrees (table frame, x = 0) from ``centre`` towards where the arm came from."""
        heat = (self._heat * self._ok).ravel()
        hot = heat > 0
        if not hot.any():
            return None
        vectors = self._table[hot] - np.array(centre)
        weights = heat[hot]
        dist = np.linalg.norm(vectors, axis=1)
        # Where the arm came into view is the surest sign of the seat: near the edge of
        # the view the arm is mostly out of it, and the heat farthest from the card is the
        # card's own path, not the arm.
        entry = self._border[hot] & (dist > BORDER_FROM_MM)
        if np.count_nonzero(entry) >= MIN_ARM_PIXELS:
            return _mean_direction(vectors[entry], dist[entry], weights[entry])
        # A card put down near the edge of the view shows only a hand, no arm: then the
        # heat nearer the card has to do.
        for reach in (ARM_FROM_MM, 0.6 * ARM_FROM_MM, 0.35 * ARM_FROM_MM):
            far = dist > reach
            if np.count_nonzero(far) >= MIN_ARM_PIXELS:
                break
        else:
            return None
        return _mean_direction(vectors[far], dist[far], weights[far])

    def player(self, centre: tuple[float, float], seats: Sequence[SeatDirection],
               ) -> str | None:
        direction = self.arm_direction(centre)
        if direction is None or not seats:
            return None
        def gap(seat: SeatDirection) -> float:
            return abs((seat.arm_deg - direction + 180.0) % 360.0 - 180.0)
        return min(seats, key=gap).player


def _mean_direction(vectors: npt.NDArray[np.float64], dist: npt.NDArray[np.float64],
                    weights: npt.NDArray[np.float32]) -> float | None:
    """Degrees (table frame) of the heat-weighted mean of the unit vectors."""
    mean = (vectors / dist[:, None] * weights[:, None]).sum(axis=0)
    if not np.any(mean):
        return None
    return math.degrees(math.atan2(mean[1], mean[0])) % 360.0
