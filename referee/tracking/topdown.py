"""Rectify first: a top-down raster of part of the table plane at a fixed scale.

Every detector downstream reads millimetres: a card is always its deck's size (63 x 88 mm,
or the calibration's ``card_mm``), a coin a 19 mm disc. The remap tables are computed once
per calibration, so a warp is one ``cv2.remap``.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from referee.calibration.rectify import PlaneMap, top_down_map

Image = npt.NDArray[np.uint8]
FloatArray = npt.NDArray[np.float64]
Bounds = tuple[float, float, float, float]


@dataclass(frozen=True, eq=False)
class TableView:
    """Raster column = (x - x_min) * s, row = (y_max - y) * s (y up the table)."""

    bounds: Bounds
    px_per_mm: float
    map1: npt.NDArray[np.int16]
    map2: npt.NDArray[np.uint16]
    seen: npt.NDArray[np.bool_]

    @classmethod
    def build(cls, plane: PlaneMap, bounds: Bounds, px_per_mm: float) -> TableView:
        px, seen = top_down_map(plane, bounds, px_per_mm)
        map1, map2 = cv2.convertMaps(px[..., 0], px[..., 1], cv2.CV_16SC2)
        return cls(bounds, px_per_mm, np.asarray(map1, np.int16), np.asarray(map2, np.uint16),
                   seen)

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.seen.shape[0]), int(self.seen.shape[1]))

    def warp(self, image: Image) -> Image:
        out = cv2.remap(image, self.map1, self.map2, cv2.INTER_LINEAR,
                        borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        return np.asarray(out, dtype=np.uint8)

    def to_raster(self, mm: npt.ArrayLike) -> FloatArray:
        pts = np.asarray(mm, dtype=np.float64).reshape(-1, 2)
        x_min, _, _, y_max = self.bounds
        return np.column_stack([(pts[:, 0] - x_min) * self.px_per_mm,
                                (y_max - pts[:, 1]) * self.px_per_mm])

    def to_mm(self, raster: npt.ArrayLike) -> FloatArray:
        pts = np.asarray(raster, dtype=np.float64).reshape(-1, 2)
        x_min, _, _, y_max = self.bounds
        return np.column_stack([x_min + pts[:, 0] / self.px_per_mm,
                                y_max - pts[:, 1] / self.px_per_mm])

    def polygon_mask(self, polygons_mm: list[FloatArray], grow_mm: float = 0.0,
                     ) -> npt.NDArray[np.bool_]:
        """Raster mask of the polygons (table mm), optionally grown by ``grow_mm``."""
        mask = np.zeros(self.shape, np.uint8)
        for polygon in polygons_mm:
            pts = np.round(self.to_raster(polygon) * 4).astype(np.int32)
            cv2.fillPoly(mask, [pts], 1, cv2.LINE_8, shift=2)
        if grow_mm > 0:
            k = max(1, round(grow_mm * self.px_per_mm))
            mask = np.asarray(cv2.dilate(mask, cv2.getStructuringElement(
                cv2.MORPH_ELLIPSE, (2 * k + 1, 2 * k + 1))), np.uint8)
        return mask.astype(bool)


def colour_change(a: Image, b: Image) -> npt.NDArray[np.uint8]:
    """Per-pixel largest channel difference of two warps, lightly smoothed against noise."""
    blur_a = cv2.GaussianBlur(a, (5, 5), 0)
    blur_b = cv2.GaussianBlur(b, (5, 5), 0)
    return np.asarray(cv2.absdiff(blur_a, blur_b).max(axis=2), dtype=np.uint8)


def fill_holes(mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """The mask with every region's holes filled (all its outer contour encloses)."""
    contours, _ = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL,
                                   cv2.CHAIN_APPROX_SIMPLE)
    filled = np.zeros(mask.shape, np.uint8)
    cv2.drawContours(filled, contours, -1, 1, thickness=cv2.FILLED)
    return np.asarray(filled.astype(bool) | mask.astype(bool), dtype=bool)


def view_around(plane: PlaneMap, half_size_mm: tuple[float, float]) -> Bounds:
    """The part of the table the camera sees, at most ``2 * half_size`` around the point at
    the image centre (a tilted camera sees far too much of the table behind)."""
    width, height = plane.image_size
    centre = plane.to_table(np.array([[width / 2, height / 2]]))[0]
    x0, y0, x1, y1 = plane.visible_bounds()
    hx, hy = half_size_mm
    return (max(x0, centre[0] - hx), max(y0, centre[1] - hy),
            min(x1, centre[0] + hx), min(y1, centre[1] + hy))


def piecepack_bounds(pitch_mm: float, tiles_per_side: int | None) -> Bounds:
    """The piecepack board's frame (mm) with room for coins short of line 1 and past it."""
    return (-20.0, -40.0, 4 * pitch_mm + 20.0, (tiles_per_side or 9) * pitch_mm + 20.0)


def grid_bounds(width_mm: float, height_mm: float) -> Bounds:
    """The Shove grid board's frame (mm) with a small margin."""
    return (-5.0, -5.0, width_mm + 5.0, height_mm + 5.0)
