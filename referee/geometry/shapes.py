"""Card outlines and coin discs on the table plane (millimetres)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeAlias

from shapely.geometry import MultiPoint, Polygon

CardOutline: TypeAlias = Polygon

#: A card outline smaller than this (mm^2) is not a card; a poker card is 63 x 88 = 5544.
_MIN_CARD_AREA_MM2 = 100.0


class GeometryError(ValueError):
    """Coordinates that do not describe the shape they claim to."""


def card_outline(corners: Sequence[Sequence[float]]) -> CardOutline:
    """The card's outline from its four corners, in any order (their convex hull)."""
    if len(corners) != 4:
        raise GeometryError(f"a card needs 4 corners, got {len(corners)}")
    # Micrometres are precision enough on a table, and snapping to them keeps GEOS clear
    # of the round-off troubles of coordinates like 1e-170 mm.
    hull = MultiPoint([(round(float(x), 3), round(float(y), 3)) for x, y in corners]).convex_hull
    if not isinstance(hull, Polygon) or hull.area < _MIN_CARD_AREA_MM2:
        raise GeometryError("card corners enclose no card-sized area")
    return hull


#: Areas are compared this loosely (mm^2): outlines snapped to micrometres are exact far
#: below it, but their areas in floats are not (an overlap of exactly 20 mm^2 may come out
#: 20.000000000000004 or 19.999999999999996, depending on where the cards lie).
ROUND_OFF_MM2 = 1e-6


def overlap_mm2(a: CardOutline, b: CardOutline) -> float:
    return float(a.intersection(b).area)


def more_than(area_mm2: float, tolerance_mm2: float) -> bool:
    """Whether an area exceeds a tolerance by more than round-off (``ROUND_OFF_MM2``)."""
    return area_mm2 > tolerance_mm2 + ROUND_OFF_MM2


def touches(a: CardOutline, b: CardOutline, tolerance_mm2: float) -> bool:
    """Two cards touch when their outlines overlap by more than the tolerance.

    Edges that merely meet (within detection noise) do not touch.
    """
    return more_than(overlap_mm2(a, b), tolerance_mm2)


def fully_covers(top: CardOutline, bottom: CardOutline, tolerance_mm2: float) -> bool:
    """``top`` hides all of ``bottom`` but for at most ``tolerance_mm2`` of it."""
    return not more_than(float(bottom.difference(top).area), tolerance_mm2)


def gap_mm(a: CardOutline, b: CardOutline) -> float:
    """Shortest distance between two outlines (0 when they touch or overlap)."""
    return float(a.distance(b))


#: Distances on the board are compared this loosely (mm), so that a disc exactly at a
#: boundary gets the same verdict at every line: 3 x 50.8 is 152.39999999999998 in floats.
ROUND_OFF_MM = 1e-6


def reaches_line(center_y: float, radius: float, line_y: float) -> bool:
    """A coin reaches a line when the far edge of its disc passes it."""
    return center_y + radius >= line_y - ROUND_OFF_MM


@dataclass(frozen=True)
class BedVerdict:
    """Where a coin lies on the Shove piecepack board.

    ``bed`` is the bed (1 = nearest the shooter) the disc lies wholly inside, or None.
    ``clearance_mm`` is the disc's smallest distance to a line's edge or the side
    boundary (negative: it touches or crosses it); disputes are settled on it.
    """

    bed: int | None
    nearest_line: int
    clearance_mm: float


def bed_of_disc(
    center: tuple[float, float],
    radius: float,
    *,
    tile_mm: float,
    seam_mm: float,
    beds: int,
) -> BedVerdict:
    """Which bed a coin disc scores in (board frame of rules.md section 2).

    Line k lies at y = k * tile_mm and is ``seam_mm`` wide; bed k lies between lines k
    and k + 1; the playing width is x in [0, 4 * tile_mm].
    """
    x, y = center
    lines = beds + 1
    nearest = min(range(1, lines + 1), key=lambda k: abs(y - k * tile_mm))
    line_clearance = abs(y - nearest * tile_mm) - radius - seam_mm / 2
    side_clearance = min(x - radius, 4 * tile_mm - (x + radius))
    clearance = min(line_clearance, side_clearance)
    below = int(y // tile_mm)  # the line at or below the centre
    inside = 1 <= below <= beds and line_clearance > ROUND_OFF_MM \
        and side_clearance >= -ROUND_OFF_MM
    return BedVerdict(bed=below if inside else None, nearest_line=nearest, clearance_mm=clearance)
