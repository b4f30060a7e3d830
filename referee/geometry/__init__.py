"""Table-plane geometry in millimetres, on Shapely. Written once, shared by every game."""

from referee.geometry.shapes import (
    ROUND_OFF_MM,
    ROUND_OFF_MM2,
    BedVerdict,
    CardOutline,
    GeometryError,
    bed_of_disc,
    card_outline,
    fully_covers,
    gap_mm,
    more_than,
    overlap_mm2,
    reaches_line,
    touches,
)

__all__ = [
    "ROUND_OFF_MM",
    "ROUND_OFF_MM2",
    "BedVerdict",
    "CardOutline",
    "GeometryError",
    "bed_of_disc",
    "card_outline",
    "fully_covers",
    "gap_mm",
    "more_than",
    "overlap_mm2",
    "reaches_line",
    "touches",
]
