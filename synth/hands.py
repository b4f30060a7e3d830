"""A hand-like occluder: forearm, palm, four fingers and a thumb, in table millimetres."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from shapely.affinity import rotate, translate
from shapely.geometry import LineString, Point, Polygon
from shapely.ops import unary_union


@dataclass(frozen=True)
class HandPose:
    """Fingertips near ``reach`` (mm), the arm coming from ``direction_deg`` (0 = from the
    operator's side, i.e. pointing up the table), ``spread`` 0..1 opens the fingers."""

    reach: tuple[float, float]
    direction_deg: float = 0.0
    scale: float = 1.0
    spread: float = 0.3
    skin: tuple[int, int, int] = (120, 160, 210)  # BGR
    height_mm: float = 40.0  # above the table: sets the shadow offset

    def outline(self) -> Polygon:
        """The hand's silhouette on the table plane, pointing up +y, then placed."""
        s = self.scale
        palm = Polygon([(x * 42 * s, -55 * s + y * 50 * s) for x, y in _ellipse(24)])
        arm = LineString([(0, -95 * s), (0, -420 * s)]).buffer(33 * s, cap_style=2)
        parts = [palm, arm]
        for i, base_x in enumerate((-27.0, -9.0, 9.0, 27.0)):
            length = (62, 72, 70, 56)[i] * s
            angle = (i - 1.5) * 6 * self.spread
            finger = LineString([(0, 0), (0, length)]).buffer(8.5 * s)
            finger = rotate(finger, angle, origin=(0, 0))
            parts.append(translate(finger, base_x * s, -20 * s))
        thumb = LineString([(0, 0), (0, 55 * s)]).buffer(10 * s)
        thumb = rotate(thumb, 55 + 25 * self.spread, origin=(0, 0))
        parts.append(translate(thumb, -35 * s, -70 * s))
        shape = unary_union(parts)
        # Fingertips (y about +50 s) land on ``reach``.
        shape = translate(shape, 0, -50 * s)
        shape = rotate(shape, self.direction_deg, origin=(0, 0))
        placed = translate(shape, *self.reach)
        return placed if isinstance(placed, Polygon) else placed.convex_hull

    def moved(self, reach: tuple[float, float]) -> HandPose:
        return HandPose(reach, self.direction_deg, self.scale, self.spread, self.skin,
                        self.height_mm)


def _ellipse(n: int) -> list[tuple[float, float]]:
    return [(math.cos(2 * math.pi * k / n), math.sin(2 * math.pi * k / n)) for k in range(n)]


def random_hand(rng: np.random.Generator, reach: tuple[float, float],
                direction_deg: float | None = None) -> HandPose:
    skins = [(150, 180, 225), (120, 160, 210), (95, 130, 185), (70, 100, 150), (50, 70, 105)]
    skin = skins[int(rng.integers(len(skins)))]
    tint = rng.uniform(0.9, 1.1)
    return HandPose(
        reach=reach,
        direction_deg=float(rng.uniform(-40, 40) if direction_deg is None else direction_deg),
        scale=float(rng.uniform(0.85, 1.15)),
        spread=float(rng.uniform(0, 1)),
        skin=tuple(int(min(255, c * tint)) for c in skin),  # type: ignore[arg-type]
        height_mm=float(rng.uniform(15, 80)),
    )


def disc(center: tuple[float, float], radius: float) -> Polygon:
    return Point(center).buffer(radius, quad_segs=16)
