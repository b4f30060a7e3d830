"""Outlines made a card's shape on a calibrated table.

In the picture a card's length is foreshortened by where it lies (the camera's slant), so
an outline that ends in the wrong place cannot be told from a card's. On the table a card
is its deck's size wherever it lies (63 x 88 mm, or the calibration's ``card_mm``):
- an outline whose one end is a card's end and whose other is not (hidden under another
  card, or off) is a card's size from the first;
- an outline that is not a card's shape, or that shows one end only, is moved as a card's
  rectangle onto the picture's edges: its long sides a card's width apart, its ends a
  card's length (or its shown end alone), the two pairs searched apart."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt
from shapely.geometry import Point, Polygon
from shapely.ops import unary_union

from referee.calibration.rectify import PlaneMap
from referee.cards import CARD_MM
from referee.detection.crops import Corners, order_corners
from referee.detection.outlines import Gradients

#: An end shows when the point this share of the outline's length inside it shows.
END_PROBE: Final = 0.06
#: A shown end's width on the table, as a share of a card's, taken for a card's end (else
#: the outline is not made a card from it: two cards outlined as one, or no card at all).
END_WIDTH_RANGE: Final = (0.8, 1.25)
#: An end is a card's, when both ends show (or neither), if it is this close to a card's
#: width (mm) and its corners to right angles (degrees); an outline is a card's shape when
#: both ends are and its long sides are this close to a card's length (mm). (Chosen on
#: validation-design frames and 100 held-out frames, models/README.md.)
END_WIDTH_MM: Final = 3.0
END_ANGLE_DEG: Final = 3.0
SIDE_MM: Final = 3.0
#: An outline with a side shorter than this on the table (mm) is left as it is, and so is
#: one the plane does not map onto the table and back to within this (pixels).
MIN_SIDE_MM: Final = 5.0
ROUND_TRIP_PX: Final = 1.0
#: The search for a card's edges: how far its sides may move (mm), in steps of this (mm),
#: sampled this often along them (mm) short of the corners by this (mm); turned by these
#: (degrees) from the outline's long sides. (Chosen on 100 held-out frames; validation
#: frames checked, models/README.md.)
SNAP_REACH_MM: Final = 10.0
SNAP_STEP_MM: Final = 0.5
SNAP_ALONG_MM: Final = 2.0
SNAP_MARGIN_MM: Final = 5.0
SNAP_TURNS_DEG: Final = (-4.0, -2.0, 0.0, 2.0, 4.0)


@dataclass(frozen=True)
class _OnTable:
    """An outline on the table: its corners (mm) turned so that sides 0 and 2 are its ends
    (``turn``: by how many places), and whether each end shows."""

    corners: Corners
    turn: int
    showing: tuple[bool, bool]

    @property
    def sides(self) -> npt.NDArray[np.float64]:
        return np.asarray(np.linalg.norm(self.corners - np.roll(self.corners, -1, axis=0),
                                         axis=1), dtype=np.float64)


def card_shaped(outlines: Sequence[Corners], shown: Sequence[Sequence[Corners]],
                plane: PlaneMap, slopes: Gradients | None = None,
                card_mm: tuple[float, float] = CARD_MM,
                under_only: bool = False) -> list[Corners]:
    """Each outline (4 x 2 image pixels; ``shown``: what of it shows, from
    ``outlines.shown_parts``) made a card's shape (``card_mm``: its width and length) on
    the table where it is not one:
    - made a card from one end, that end's middle and the direction of the outline's long
      sides kept: the end that shows when the other is hidden (a card under another), else
      its one end that is a card's (its width, its corners right angles) when the other is
      not;
    - then, with the picture's gradients (``slopes``), an outline still not a card's shape
      or showing one end only is moved as a card onto the picture's edges (``_snapped``).
    Other outlines are returned as they are (the same arrays), and so are all but those
    showing one end only when ``under_only``."""
    out: list[Corners] = []
    for corners, pieces in zip(outlines, shown, strict=True):
        pixels = np.asarray(corners, dtype=np.float64).reshape(4, 2)
        seen = _on_table(pixels, pieces, plane, card_mm)
        if under_only and seen is not None and seen.showing[0] == seen.showing[1]:
            seen = None
        card = None if seen is None else _from_one_end(seen, card_mm)
        if seen is not None and slopes is not None:
            one_end = seen.showing[0] != seen.showing[1]
            # (one end showing is moved even when that end is no card's width, and so not
            # made a card from it: that found more cards on rendered frames than not)
            if one_end or (card is None and not _card_like(seen, card_mm)):
                shown_end = (0 if seen.showing[0] else 1) if one_end else None
                card = _snapped(slopes, plane, seen.corners if card is None else card,
                                shown_end, card_mm)
        whole = None if seen is None or card is None else plane.to_pixels(card)
        if whole is None or not np.all(np.isfinite(whole)):
            out.append(corners)
        else:
            out.append(np.roll(whole, seen.turn, axis=0))  # type: ignore[union-attr]
    return out


def shown_end(corners: Corners, pieces: Sequence[Corners]) -> Corners | None:
    """The one end of an outline (4 x 2 image pixels) that shows when its other does not
    (``pieces``: what of it shows, from ``outlines.shown_parts``), as 4 x 2 pixels: that
    end's two corners, then the corner each leads to along the outline's long side; None
    when both ends show, or neither. Its ends are the pair of opposite sides shorter
    together in the picture (with no plane, as here, the picture alone tells them;
    ``_on_table`` takes those nearer a card's width on the table), and an end shows when the
    point END_PROBE of the outline's length in from its middle shows (``_shows``)."""
    quad = order_corners(corners)
    sides = np.linalg.norm(quad - np.roll(quad, -1, axis=0), axis=1)
    if sides[0] + sides[2] > sides[1] + sides[3]:
        quad = np.roll(quad, -1, axis=0)
    showing = _shows(pieces, [(quad[0] + quad[1]) / 2, (quad[2] + quad[3]) / 2])
    if showing[0] == showing[1]:
        return None
    return quad[[0, 1, 3, 2]] if showing[0] else quad[[3, 2, 0, 1]]


def _on_table(corners: Corners, pieces: Sequence[Corners], plane: PlaneMap,
              card_mm: tuple[float, float]) -> _OnTable | None:
    """The outline on the table, or None where the plane does not map it there and back
    (beyond the horizon) or it has a side shorter than ``MIN_SIDE_MM``."""
    table = plane.to_table(corners)
    if not np.all(np.isfinite(table)) \
            or np.abs(plane.to_pixels(table) - corners).max() > ROUND_TRIP_PX:
        return None
    sides = np.linalg.norm(table - np.roll(table, -1, axis=0), axis=1)
    if sides.min() < MIN_SIDE_MM:
        return None
    # The card's ends are the pair of opposite sides nearer a card's width (a card that
    # shows less than its width along its length is outlined shorter than wide).
    width = card_mm[0]
    turn = 0 if abs(sides[0] + sides[2] - 2 * width) <= abs(sides[1] + sides[3] - 2 * width) \
        else 1
    pixels = np.roll(corners, -turn, axis=0)
    showing = _shows(pieces, [(pixels[0] + pixels[1]) / 2, (pixels[2] + pixels[3]) / 2])
    return _OnTable(np.roll(table, -turn, axis=0), turn, showing)


def _from_one_end(seen: _OnTable, card_mm: tuple[float, float]) -> Corners | None:
    """The card (mm) from the end that tells where it lies, or None when none does."""
    sides = seen.sides
    if seen.showing[0] != seen.showing[1]:
        end = 0 if seen.showing[0] else 1
        low, high = END_WIDTH_RANGE
        if not low * card_mm[0] <= sides[0 if end == 0 else 2] <= high * card_mm[0]:
            return None
    else:
        cards_end = _cards_ends(seen.corners, sides, card_mm)
        if cards_end[0] == cards_end[1]:  # a card's shape, or no end tells (or both do)
            return None
        end = 0 if cards_end[0] else 1
    return _card_from_end(seen.corners, end, card_mm)


def _cards_ends(table: Corners, sides: npt.NDArray[np.float64],
                card_mm: tuple[float, float]) -> tuple[bool, bool]:
    """Whether each end (sides 0 and 2 of ``table``, in mm) is a card's: its width and both
    its corners' angles."""
    edges = np.roll(table, -1, axis=0) - table
    unit = edges / np.maximum(sides[:, None], 1e-9)
    # the angle at corner k, between side k - 1 and side k, off a right angle
    off = np.abs(np.degrees(np.arccos(np.clip(
        -(unit * np.roll(unit, 1, axis=0)).sum(axis=1), -1.0, 1.0))) - 90.0)
    return tuple(bool(abs(sides[s] - card_mm[0]) <= END_WIDTH_MM  # type: ignore[return-value]
                      and off[s] <= END_ANGLE_DEG and off[s + 1] <= END_ANGLE_DEG)
                 for s in (0, 2))


def _card_like(seen: _OnTable, card_mm: tuple[float, float]) -> bool:
    """Both ends a card's, and the long sides a card's length."""
    sides = seen.sides
    return all(_cards_ends(seen.corners, sides, card_mm)) \
        and bool(np.all(np.abs(sides[[1, 3]] - card_mm[1]) <= SIDE_MM))


def _axis(table: Corners) -> npt.NDArray[np.float64]:
    """The unit direction of an outline's long sides (mm), from end 0 to end 1."""
    along = (table[3] - table[0]) + (table[2] - table[1])
    return np.asarray(along / np.linalg.norm(along), dtype=np.float64)


def _card_from_end(table: Corners, end: int, card_mm: tuple[float, float]) -> Corners:
    """A card's corners on the table (the outline's order) from end ``end`` (0: corners 0
    and 1; 1: corners 3 and 2) of ``table``: that end's middle, and the direction of the
    long sides."""
    first, second = (0, 1) if end == 0 else (3, 2)
    along = _axis(table)
    inwards = along if end == 0 else -along
    middle = (table[first] + table[second]) / 2
    return _card(table, middle + inwards * card_mm[1] / 2, along, card_mm)


def _card(table: Corners, centre: npt.NDArray[np.float64], along: npt.NDArray[np.float64],
          card_mm: tuple[float, float]) -> Corners:
    """A card's rectangle (mm) centred at ``centre``, its long sides along ``along`` (from
    end 0 to end 1 of ``table``), its corners in ``table``'s order (0 and 1 at end 0, 0 on
    the side of ``table``'s corner 0)."""
    across = np.array([-along[1], along[0]])
    if np.dot(table[0] - table[1], across) < 0:
        across = -across
    half_w, half_l = across * card_mm[0] / 2, along * card_mm[1] / 2
    return np.array([centre - half_l + half_w, centre - half_l - half_w,
                     centre + half_l - half_w, centre + half_l + half_w])


def _snapped(slopes: Gradients, plane: PlaneMap, table: Corners, shown_end: int | None,
             card_mm: tuple[float, float]) -> Corners:
    """A card's rectangle (mm) near ``table`` lying best on the picture's edges: turned by
    each of ``SNAP_TURNS_DEG`` from its long sides, its long sides moved together (a card's
    width apart) and its ends together (a card's length apart; the shown end alone when
    ``shown_end`` is 0 or 1) to where the brightness changes most across them, on average
    along them. The turn whose two best moves sum highest wins."""
    axis = _axis(table)
    centre = table.mean(axis=0)
    moves = np.arange(-SNAP_REACH_MM, SNAP_REACH_MM + 1e-9, SNAP_STEP_MM)
    half_w, half_l = card_mm[0] / 2, card_mm[1] / 2
    on_long = np.arange(-half_l + SNAP_MARGIN_MM, half_l - SNAP_MARGIN_MM + 1e-9, SNAP_ALONG_MM)
    on_end = np.arange(-half_w + SNAP_MARGIN_MM, half_w - SNAP_MARGIN_MM + 1e-9, SNAP_ALONG_MM)
    frames = []
    points = []
    for turn in np.radians(SNAP_TURNS_DEG):
        cos, sin = np.cos(turn), np.sin(turn)
        along = np.array([cos * axis[0] - sin * axis[1], sin * axis[0] + cos * axis[1]])
        across = np.array([-along[1], along[0]])
        frames.append((along, across))
        for side in (-half_w, half_w):  # the long sides, each moved by every step
            points.append(centre + (side + moves)[:, None, None] * across
                          + on_long[None, :, None] * along)
        for end in (-half_l, half_l):
            points.append(centre + (end + moves)[:, None, None] * along
                          + on_end[None, :, None] * across)
    # (with, last, the card's middle and a millimetre along each of its axes from there in
    # each turn: one mapping for all, sooner than a mapping each)
    axes = [centre + step for along, across in frames for step in (along, across)]
    pixels = plane.to_pixels(np.concatenate([*(p.reshape(-1, 2) for p in points), centre[None],
                                             np.array(axes)]))
    pixels, middle, ends = pixels[:-1 - len(axes)], pixels[-1 - len(axes)], pixels[-len(axes):]
    maps = pixels.astype(np.float32)
    gx = cv2.remap(slopes[0], maps[None, :, 0], maps[None, :, 1], cv2.INTER_LINEAR,
                   borderValue=0)[0]
    gy = cv2.remap(slopes[1], maps[None, :, 0], maps[None, :, 1], cv2.INTER_LINEAR,
                   borderValue=0)[0]
    counts = [len(moves) * len(on_long)] * 2 + [len(moves) * len(on_end)] * 2
    starts = np.cumsum([0, *counts * len(frames)])
    best: tuple[float, Corners] | None = None
    for k, (along, across) in enumerate(frames):
        # the picture's directions of the card's two axes, a millimetre long, at its middle
        step_l, step_w = ends[2 * k] - middle, ends[2 * k + 1] - middle
        profiles = []
        for j, step in enumerate((step_w, step_w, step_l, step_l)):
            lo, hi = starts[4 * k + j], starts[4 * k + j + 1]
            change = np.abs(gx[lo:hi] * step[0] + gy[lo:hi] * step[1])
            profiles.append(change.reshape(len(moves), -1).mean(axis=1))
        sideways = profiles[0] + profiles[1]
        lengthways = profiles[2] + profiles[3] if shown_end is None \
            else 2 * profiles[2 + shown_end]
        i, j = int(np.argmax(sideways)), int(np.argmax(lengthways))
        score = float(sideways[i] + lengthways[j])
        if best is None or score > best[0]:
            best = (score, _card(table, centre + moves[i] * across + moves[j] * along, along,
                                 card_mm))
    assert best is not None
    return best[1]


def _shows(pieces: Sequence[Corners], ends: Sequence[Corners]) -> tuple[bool, bool]:
    """Whether the point just inside each end (``END_PROBE`` of the length in) shows."""
    if not pieces:
        return False, False
    shown = unary_union([Polygon(p).buffer(0) for p in pieces]).buffer(1.0)
    length = ends[1] - ends[0]
    probes = (ends[0] + END_PROBE * length, ends[1] - END_PROBE * length)
    return shown.contains(Point(*probes[0])), shown.contains(Point(*probes[1]))
