"""Between camera pixels and table millimetres: point mapping and top-down warps."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from referee.calibration.solve import Lens

FloatArray = npt.NDArray[np.float64]
Image = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class PlaneMap:
    """Camera pixels <-> table mm: the lens (None: no distortion) and the homography from
    undistorted pixels to table mm."""

    lens: Lens | None
    image_to_table: FloatArray
    image_size: tuple[int, int]

    def to_table(self, pixels: FloatArray) -> FloatArray:
        pts = np.asarray(pixels, dtype=np.float64).reshape(-1, 2)
        undistorted = self.lens.undistort(pts) if self.lens else pts
        out = cv2.perspectiveTransform(undistorted.reshape(-1, 1, 2), self.image_to_table)
        return np.asarray(out, dtype=np.float64).reshape(-1, 2)

    def to_pixels(self, table_mm: FloatArray) -> FloatArray:
        """Table mm -> distorted image px."""
        pts = np.asarray(table_mm, dtype=np.float64).reshape(-1, 1, 2)
        undistorted = cv2.perspectiveTransform(pts, np.linalg.inv(self.image_to_table))
        flat = np.asarray(undistorted, dtype=np.float64).reshape(-1, 2)
        return self.lens.distort(flat) if self.lens else flat

    def then(self, table_to_frame: FloatArray) -> PlaneMap:
        """The same camera, mapping into another frame of the table plane."""
        combined = table_to_frame @ self.image_to_table
        return PlaneMap(self.lens, combined / combined[2, 2], self.image_size)

    def visible_bounds(self, limit_mm: float = 3000.0) -> tuple[float, float, float, float]:
        """(x_min, y_min, x_max, y_max) of the table the image border encloses."""
        width, height = self.image_size
        t = np.linspace(0, 1, 41)
        border = np.concatenate([
            np.column_stack([t * (width - 1), np.zeros_like(t)]),
            np.column_stack([t * (width - 1), np.full_like(t, height - 1)]),
            np.column_stack([np.zeros_like(t), t * (height - 1)]),
            np.column_stack([np.full_like(t, width - 1), t * (height - 1)])])
        table = self.to_table(border)
        table = table[np.all(np.isfinite(table), axis=1)]
        lo = np.clip(table.min(axis=0), -limit_mm, limit_mm)
        hi = np.clip(table.max(axis=0), -limit_mm, limit_mm)
        return float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1])

    def sample(self, image: Image, table_mm: FloatArray) -> FloatArray:
        """Bilinear image values at table points (NaN outside the image)."""
        pts = np.asarray(table_mm, dtype=np.float64).reshape(-1, 2)
        px = self.to_pixels(pts).astype(np.float32).reshape(-1, 1, 2)
        grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        values = cv2.remap(grey.astype(np.float32), px[..., 0], px[..., 1], cv2.INTER_LINEAR,
                           borderMode=cv2.BORDER_CONSTANT, borderValue=np.nan)
        return np.asarray(values, dtype=np.float64).ravel()


#: Raster rows projected per band by ``top_down_map``.
MAP_ROWS: Final = 64


def top_down_map(plane: PlaneMap, bounds: tuple[float, float, float, float],
                 px_per_mm: float) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
    """For a top-down raster of ``bounds`` (column = (x - x_min) * s, row = (y_max - y) * s):
    the image pixel under each raster pixel (H x W x 2) and the mask the camera saw."""
    x_min, y_min, x_max, y_max = bounds
    width = max(1, round((x_max - x_min) * px_per_mm))
    height = max(1, round((y_max - y_min) * px_per_mm))
    px = np.empty((height, width, 2), np.float32)
    xs = x_min + np.arange(width, dtype=np.float64) / px_per_mm
    # A band of rows at a time: projecting (with the lens model) a whole raster at once
    # takes hundreds of MB of temporaries.
    for top in range(0, height, MAP_ROWS):
        rows = np.arange(top, min(height, top + MAP_ROWS), dtype=np.float64)
        cols, ys = np.meshgrid(xs, y_max - rows / px_per_mm)
        table = np.column_stack([cols.ravel(), ys.ravel()])
        px[top:top + len(rows)] = plane.to_pixels(table).reshape(len(rows), width, 2)
    img_w, img_h = plane.image_size
    seen = ((px[..., 0] >= 0) & (px[..., 0] <= img_w - 1) & (px[..., 1] >= 0)
            & (px[..., 1] <= img_h - 1))
    return px, seen


def top_down(image: Image, plane: PlaneMap, bounds: tuple[float, float, float, float],
             px_per_mm: float) -> tuple[Image, npt.NDArray[np.bool_]]:
    """A top-down warp of the table inside ``bounds`` and the mask of pixels the camera saw."""
    px, seen = top_down_map(plane, bounds, px_per_mm)
    out = cv2.remap(image, px[..., 0], px[..., 1], cv2.INTER_LINEAR,
                    borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    return np.asarray(out, dtype=np.uint8), seen
