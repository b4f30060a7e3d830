"""Warping a detected card to its canonical upright view, and cutting its index corners
and its whole face.

Training (the synthetic export) and inference use this one implementation. A card's four
corners come in any order; they are put in clockwise image order with a short side first,
which fixes the card up to a half turn. A half turn swaps the two index corners, and both
are read, so the ambiguity never matters.
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

Image = npt.NDArray[np.uint8]
Corners = npt.NDArray[np.float64]

CARD_W_MM: Final = 63.0
CARD_H_MM: Final = 88.0
#: Pixels per millimetre of the canonical card view.
CANONICAL_PX_PER_MM: Final = 4.0
#: The cut at each index corner (mm, width x height): rank and suit with a little of the
#: face. Some designs print the suit well below the rank (aisleriot tango: 20-28 mm down).
#: Models trained on crops of another size say so in their metadata (``index_mm``).
INDEX_MM: Final = (26.0, 32.0)
#: Models from before ``index_mm`` was recorded were trained on 26 mm squares.
LEGACY_INDEX_MM: Final = (26.0, 26.0)
#: Every cut is scaled to this square, whatever its size in mm.
INDEX_CROP_PX: Final = 64
#: The whole card (63 x 88 mm) is squeezed into this square for the face model.
FACE_CROP_PX: Final = 64
#: The band at each end of a card the suit model reads (mm from the card's short edge, its
#: whole width): the index, the first row of pips, and a suit printed in the opposite
#: corner, as aisleriot tango_nuevo prints it beside a rank-only index. Squeezed to a
#: ``SUIT_CROP_PX`` square.
SUIT_BAND_MM: Final = 36.0
SUIT_CROP_PX: Final = 64


def short_side(corners: npt.ArrayLike) -> float:
    """The length of an outline's shortest side (its four corners' units: pixels or mm)."""
    pts = np.asarray(corners, dtype=np.float64).reshape(4, 2)
    return float(np.linalg.norm(pts - np.roll(pts, -1, axis=0), axis=1).min())


def order_corners(corners: npt.ArrayLike) -> Corners:
    """Clockwise in the image (y down), starting so that corner 0 -> 1 is a short side."""
    pts = np.asarray(corners, dtype=np.float64).reshape(4, 2)
    centre = pts.mean(axis=0)
    angles = np.arctan2(pts[:, 1] - centre[1], pts[:, 0] - centre[0])
    pts = pts[np.argsort(angles)]  # increasing angle = clockwise when y points down
    if np.linalg.norm(pts[1] - pts[0]) > np.linalg.norm(pts[2] - pts[1]):
        pts = np.roll(pts, -1, axis=0)
    return pts


def _card_warp(corners: npt.ArrayLike, px_per_mm: float) -> npt.NDArray[np.float64]:
    """The homography from the image onto the canonical card view (``canonical_card``)."""
    ordered = order_corners(corners).astype(np.float32)
    w, h = round(CARD_W_MM * px_per_mm), round(CARD_H_MM * px_per_mm)
    target = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], dtype=np.float32)
    return np.asarray(cv2.getPerspectiveTransform(ordered, target), np.float64)


def _warp_part(image: Image, warp: npt.NDArray[np.float64], left: int, top: int,
               size: tuple[int, int]) -> Image:
    """The part of the canonical view ``warp`` makes whose top-left pixel is (left, top),
    ``size`` (w, h) pixels: the same pixels as that slice of the whole view, warped alone."""
    shift = np.array([[1.0, 0.0, -left], [0.0, 1.0, -top], [0.0, 0.0, 1.0]])
    part = cv2.warpPerspective(image, shift @ warp, size, flags=cv2.INTER_AREA,
                               borderMode=cv2.BORDER_REPLICATE)
    return np.asarray(part, dtype=np.uint8)


def canonical_card(image: Image, corners: npt.ArrayLike,
                   px_per_mm: float = CANONICAL_PX_PER_MM) -> Image:
    """The card seen straight on, upright up to a half turn (w x h = 63 x 88 mm)."""
    w, h = round(CARD_W_MM * px_per_mm), round(CARD_H_MM * px_per_mm)
    return _warp_part(image, _card_warp(corners, px_per_mm), 0, 0, (w, h))


#: The patch the corner model (``corners.CornerModel``) reads round an outline: pixels,
#: width x height, at 1 px per mm of the card the outline gives, the card in the middle with
#: 16.5 and 20 mm round it (room for a side the outline has 15 mm off). The same pixels may be
#: cut at fewer a mm (``px_per_mm``: at 0.5, 64.5 and 84 mm round the card), as for a coarse
#: model measured in session 52 and not kept (``training/card_corners.py data --px-per-mm``).
CORNER_PATCH_PX: Final = (96, 128)


def corner_patch(image: Image, corners: npt.ArrayLike, px_per_mm: float = 1.0,
                 ) -> tuple[Image, npt.NDArray[np.float64]]:
    """The ``CORNER_PATCH_PX`` patch round the card ``corners`` outlines (upright up to a
    half turn, as ``canonical_card``), ``px_per_mm`` pixels a mm of that card, and the
    homography from the image onto it."""
    width, height = CORNER_PATCH_PX
    warp = np.asarray(cv2.getPerspectiveTransform(
        order_corners(corners).astype(np.float32),
        patch_corners(px_per_mm).astype(np.float32)), np.float64)
    patch = cv2.warpPerspective(image, warp, (width, height), flags=cv2.INTER_AREA,
                                borderMode=cv2.BORDER_REPLICATE)
    return np.asarray(patch, np.uint8), warp


def patch_corners(px_per_mm: float = 1.0) -> Corners:
    """The card's corners in a ``corner_patch`` cut at ``px_per_mm`` (clockwise from the
    top-left one)."""
    width, height = CORNER_PATCH_PX
    card_w, card_h = CARD_W_MM * px_per_mm, CARD_H_MM * px_per_mm
    left, top = (width - card_w) / 2, (height - card_h) / 2
    return np.array([[left, top], [left + card_w, top],
                     [left + card_w, top + card_h], [left, top + card_h]])


def _scaled(part: Image, side: int) -> Image:
    return np.asarray(cv2.resize(part, (side, side), interpolation=cv2.INTER_AREA), np.uint8)


def index_crops(image: Image, corners: npt.ArrayLike,
                index_mm: tuple[float, float] = INDEX_MM) -> tuple[Image, Image]:
    """The two index corners (``index_mm`` of the card each), each scaled to an upright
    square ``INDEX_CROP_PX`` wide: the first at corner 0 of ``order_corners``, the second at
    the diagonally opposite corner turned a half turn so both look alike. The same pixels
    as ``card_crops`` cuts, from two small warps instead of the whole card's (a third of the
    pixels: the referee reads many candidate outlines' corners before it reads any face)."""
    warp = _card_warp(corners, CANONICAL_PX_PER_MM)
    w, h = (round(v * CANONICAL_PX_PER_MM) for v in index_mm)
    card_w, card_h = (round(v * CANONICAL_PX_PER_MM) for v in (CARD_W_MM, CARD_H_MM))
    first = _warp_part(image, warp, 0, 0, (w, h))
    second = _warp_part(image, warp, card_w - w, card_h - h, (w, h))
    return (_scaled(first, INDEX_CROP_PX),
            _scaled(np.asarray(cv2.rotate(second, cv2.ROTATE_180), np.uint8), INDEX_CROP_PX))


def band_crops(image: Image, corners: npt.ArrayLike) -> tuple[Image, Image]:
    """The card's two end bands (``SUIT_BAND_MM`` of its length, its whole width), each
    squeezed to an upright ``SUIT_CROP_PX`` square, in the order ``index_crops`` cuts its
    corners: the first band holds the first index corner, the second is turned a half turn
    so both look alike."""
    return bands_of(canonical_card(image, corners))


def bands_of(flat: Image) -> tuple[Image, Image]:
    """``band_crops`` of a card already seen straight on (``canonical_card``)."""
    h = round(SUIT_BAND_MM * CANONICAL_PX_PER_MM)
    return (_scaled(flat[:h], SUIT_CROP_PX),
            _scaled(np.asarray(cv2.rotate(flat[-h:], cv2.ROTATE_180), np.uint8), SUIT_CROP_PX))


def face_crop(image: Image, corners: npt.ArrayLike) -> Image:
    """The whole face squeezed to a ``FACE_CROP_PX`` square, as ``card_crops`` cuts it."""
    return face_of(canonical_card(image, corners))


def face_of(flat: Image) -> Image:
    """``face_crop`` of a card already seen straight on (``canonical_card``)."""
    return _scaled(flat, FACE_CROP_PX)


def card_crops(image: Image, corners: npt.ArrayLike,
               index_mm: tuple[float, float] = INDEX_MM) -> tuple[Image, Image, Image]:
    """The two index corners as ``index_crops`` cuts them, and the whole face squeezed to a
    ``FACE_CROP_PX`` square (upright up to a half turn), from one warp."""
    flat = canonical_card(image, corners)
    w, h = (round(v * CANONICAL_PX_PER_MM) for v in index_mm)
    first = flat[:h, :w]
    second = np.asarray(cv2.rotate(flat[-h:, -w:], cv2.ROTATE_180), np.uint8)
    return (_scaled(first, INDEX_CROP_PX), _scaled(second, INDEX_CROP_PX),
            _scaled(flat, FACE_CROP_PX))


def corner_of(corners: npt.ArrayLike, index: int) -> int:
    """Which of the caller's corners ``order_corners`` put first (0) or third (1)."""
    pts = np.asarray(corners, dtype=np.float64).reshape(4, 2)
    ordered = order_corners(pts)
    target = ordered[0] if index == 0 else ordered[2]
    return int(np.argmin(np.linalg.norm(pts - target, axis=1)))
