"""Outlines made a card's shape on a calibrated table, from the end that tells where the
card lies.

In the picture a card's length is foreshortened by where it lies (the camera's slant), so
an outline that ends in the wrong place cannot be told from a card's. On the table a card
is 63 x 88 mm wherever it lies: an outline whose one end is a card's end and whose other is
not (hidden under another card, or off) is a card's size from the first."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt
from shapely.geometry import Point, Polygon
from shapely.ops import unary_union

from referee.calibration.rectify import PlaneMap
from referee.detection.crops import CARD_H_MM, CARD_W_MM

Corners = npt.NDArray[np.float64]
#: An end shows when the point this share of the outline's length inside it shows.
END_PROBE: Final = 0.06
#: A shown end's width on the table, as a share of a card's, taken for a card's end (else
#: the outline is left as it is: two cards outlined as one, or no card at all).
END_WIDTH_RANGE: Final = (0.8, 1.25)
#: An end is a card's, when both ends show (or neither), if it is this close to a card's
#: width (mm) and its corners to right angles (degrees). (Chosen on validation-design
#: frames and 100 held-out frames, models/README.md.)
END_WIDTH_MM: Final = 3.0
END_ANGLE_DEG: Final = 3.0


def card_shaped(outlines: Sequence[Corners], shown: Sequence[Sequence[Corners]],
                plane: PlaneMap) -> list[Corners]:
    """Each outline (4 x 2 image pixels; ``shown``: what of it shows, from
    ``outlines.shown_parts``) made a card's shape from one end, its middle and the direction
    of the outline's long sides kept on the table, where one end tells where the card lies:
    - one end shows and the other is hidden (a card under another), from the end that shows;
    - else, from its one end that is a card's (its width, its corners right angles) when
      the other end is not.
    Other outlines are returned as they are (the same arrays)."""
    out: list[Corners] = []
    for corners, pieces in zip(outlines, shown, strict=True):
        whole = _from_one_end(np.asarray(corners, dtype=np.float64).reshape(4, 2),
                              pieces, plane)
        out.append(corners if whole is None else whole)
    return out


def _from_one_end(corners: Corners, pieces: Sequence[Corners],
                  plane: PlaneMap) -> Corners | None:
    table = plane.to_table(corners)
    if not np.all(np.isfinite(table)):
        return None
    sides = np.linalg.norm(table - np.roll(table, -1, axis=0), axis=1)
    # The card's ends are the pair of opposite sides nearer a card's width (a card that
    # shows less than its width along its length is outlined shorter than wide).
    turn = 0 if abs(sides[0] + sides[2] - 2 * CARD_W_MM) <= abs(sides[1] + sides[3]
                                                                  - 2 * CARD_W_MM) else 1
    table = np.roll(table, -turn, axis=0)
    pixels = np.roll(corners, -turn, axis=0)
    sides = np.roll(sides, -turn)
    showing = _shows(pieces, [(pixels[0] + pixels[1]) / 2, (pixels[2] + pixels[3]) / 2])
    if showing[0] != showing[1]:
        end = 0 if showing[0] else 1
        low, high = END_WIDTH_RANGE
        if not low * CARD_W_MM <= sides[0 if end == 0 else 2] <= high * CARD_W_MM:
            return None
    else:
        cards_end = _cards_ends(table, sides)
        if cards_end[0] == cards_end[1]:  # a card's shape, or no end tells (or both do)
            return None
        end = 0 if cards_end[0] else 1
    whole = plane.to_pixels(_card_from_end(table, end))
    if not np.all(np.isfinite(whole)):
        return None
    return np.roll(whole, turn, axis=0)


def _cards_ends(table: Corners, sides: npt.NDArray[np.float64]) -> tuple[bool, bool]:
    """Whether each end (sides 0 and 2 of ``table``, in mm) is a card's: its width and both
    its corners' angles."""
    edges = np.roll(table, -1, axis=0) - table
    unit = edges / np.maximum(sides[:, None], 1e-9)
    # the angle at corner k, between side k - 1 and side k, off a right angle
    off = np.abs(np.degrees(np.arccos(np.clip(
        -(unit * np.roll(unit, 1, axis=0)).sum(axis=1), -1.0, 1.0))) - 90.0)
    return tuple(bool(abs(sides[s] - CARD_W_MM) <= END_WIDTH_MM  # type: ignore[return-value]
                      and off[s] <= END_ANGLE_DEG and off[s + 1] <= END_ANGLE_DEG)
                 for s in (0, 2))


def _card_from_end(table: Corners, end: int) -> Corners:
    """A card's corners on the table (the outline's order) from end ``end`` (0: corners 0
    and 1; 1: corners 3 and 2) of ``table``: that end's middle, and the direction of the
    long sides."""
    first, second = (0, 1) if end == 0 else (3, 2)
    along = (table[3] - table[0]) + (table[2] - table[1])
    along /= np.linalg.norm(along)
    if end == 1:
        along = -along
    across = np.array([-along[1], along[0]])
    if np.dot(table[first] - table[second], across) < 0:
        across = -across
    middle = (table[first] + table[second]) / 2
    card = np.empty((4, 2))
    card[first] = middle + across * CARD_W_MM / 2
    card[second] = middle - across * CARD_W_MM / 2
    far = {0: 3, 1: 2, 3: 0, 2: 1}
    card[far[first]] = card[first] + along * CARD_H_MM
    card[far[second]] = card[second] + along * CARD_H_MM
    return card


def _shows(pieces: Sequence[Corners], ends: Sequence[Corners]) -> tuple[bool, bool]:
    """Whether the point just inside each end (``END_PROBE`` of the length in) shows."""
    if not pieces:
        return False, False
    shown = unary_union([Polygon(p).buffer(0) for p in pieces]).buffer(1.0)
    length = ends[1] - ends[0]
    probes = (ends[0] + END_PROBE * length, ends[1] - END_PROBE * length)
    return shown.contains(Point(*probes[0])), shown.contains(Point(*probes[1]))
