"""Table-plane geometry in millimetres, on Shapely. Written once, shared by every game."""

from referee.geometry.shapes import (
    BedVerdict,
    CardOutline,
    GeometryError,
    bed_of_disc,
    card_outline,
    fully_covers,
    gap_mm,
    overlap_mm2,
    reaches_line,
    touches,
)

__all__ = [
    "BedVerdict",
    "CardOutline",
    "GeometryError",
    "bed_of_disc",
    "card_outline",
    "fully_covers",
    "gap_mm",
    "overlap_mm2",
    "reaches_line",
    "touches",
]
