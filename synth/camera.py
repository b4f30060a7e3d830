"""A pinhole webcam with radial lens distortion looking at the table plane (z = 0).

Table frame: millimetres, x to the right, y away from the operator, z up. Image: pixels,
u to the right, v down. ``project`` is the exact forward model that ground truth uses;
``render`` samples a top-down table canvas through the inverse of the same model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import cv2
import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
Image = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class TableCanvas:
    """A top-down image of the table: column = (x - x0) * s, row = (y_top - y) * s."""

    image: Image
    px_per_mm: float
    x0: float
    y_top: float

    def to_pixels(self, points_mm: FloatArray) -> FloatArray:
        pts = np.asarray(points_mm, dtype=np.float64).reshape(-1, 2)
        return np.stack([(pts[:, 0] - self.x0) * self.px_per_mm,
                         (self.y_top - pts[:, 1]) * self.px_per_mm], axis=1)


@dataclass(frozen=True, eq=False)
class Camera:
    image_size: tuple[int, int]  # (width, height)
    camera_matrix: FloatArray  # 3 x 3
    dist_coeffs: FloatArray  # k1, k2, p1, p2, k3
    rotation: FloatArray  # 3 x 3, table -> camera
    translation: FloatArray  # 3
    _cache: dict[str, FloatArray] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def looking_at(
        cls,
        target: tuple[float, float],
        distance_mm: float,
        *,
        tilt_deg: float = 0.0,
        yaw_deg: float = 0.0,
        roll_deg: float = 0.0,
        hfov_deg: float = 65.0,
        image_size: tuple[int, int] = (1280, 720),
        dist_coeffs: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0, 0.0),
        principal_offset: tuple[float, float] = (0.0, 0.0),
    ) -> Camera:
        """A camera ``distance_mm`` from ``target`` on the table, tilted ``tilt_deg`` from
        looking straight down, standing on the operator's side (yaw turns it about the
        vertical), with image "up" pointing up the table."""
        tilt, yaw, roll = (math.radians(a) for a in (tilt_deg, yaw_deg, roll_deg))
        forward = np.array([math.sin(yaw), math.cos(yaw), 0.0])  # "up the image" on the table
        towards_camera = np.array([-forward[0] * math.sin(tilt), -forward[1] * math.sin(tilt),
                                   math.cos(tilt)])
        centre = np.array([target[0], target[1], 0.0]) + distance_mm * towards_camera
        z_axis = -towards_camera
        y_axis = -forward - np.dot(-forward, z_axis) * z_axis
        y_axis /= np.linalg.norm(y_axis)
        x_axis = np.cross(y_axis, z_axis)
        c, s = math.cos(roll), math.sin(roll)
        x_axis, y_axis = c * x_axis + s * y_axis, -s * x_axis + c * y_axis
        rotation = np.stack([x_axis, y_axis, z_axis])
        width, height = image_size
        focal = (width / 2) / math.tan(math.radians(hfov_deg) / 2)
        matrix = np.array([[focal, 0.0, width / 2 + principal_offset[0]],
                           [0.0, focal, height / 2 + principal_offset[1]],
                           [0.0, 0.0, 1.0]])
        return cls(image_size, matrix, np.asarray(dist_coeffs, dtype=np.float64), rotation,
                   -rotation @ centre)

    @property
    def centre(self) -> FloatArray:
        return np.asarray(-self.rotation.T @ self.translation, dtype=np.float64)

    def project(self, points_mm: FloatArray) -> FloatArray:
        """Table points (N x 2, mm) -> distorted image pixels (N x 2)."""
        pts = np.asarray(points_mm, dtype=np.float64).reshape(-1, 2)
        world = np.hstack([pts, np.zeros((len(pts), 1))])
        rvec, _ = cv2.Rodrigues(self.rotation)
        pixels, _ = cv2.projectPoints(world, rvec, self.translation, self.camera_matrix,
                                      self.dist_coeffs)
        return np.asarray(pixels.reshape(-1, 2), dtype=np.float64)

    @cached_property
    def homography(self) -> FloatArray:
        """Table mm -> undistorted image pixels."""
        extrinsic = np.column_stack([self.rotation[:, 0], self.rotation[:, 1],
                                     self.translation])
        h = self.camera_matrix @ extrinsic
        return np.asarray(h / h[2, 2], dtype=np.float64)

    @cached_property
    def image_to_table(self) -> FloatArray:
        """Undistorted image pixels -> table mm (the calibration file's ``image_to_table``)."""
        inverse = np.linalg.inv(self.homography)
        return np.asarray(inverse / inverse[2, 2], dtype=np.float64)

    def pixels_to_table(self, pixels: FloatArray) -> FloatArray:
        """Distorted image pixels (N x 2) -> table mm (N x 2); NaN where the ray misses."""
        pts = np.asarray(pixels, dtype=np.float64).reshape(-1, 1, 2)
        criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 40, 1e-10)
        normal = cv2.undistortPointsIter(pts, self.camera_matrix, self.dist_coeffs, None, None,
                                         criteria).reshape(-1, 2)
        rays = np.hstack([normal, np.ones((len(normal), 1))]) @ self.rotation  # R^T d
        centre = self.centre
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = -centre[2] / rays[:, 2]
        table = centre[:2] + scale[:, None] * rays[:, :2]
        table[~(scale > 0)] = np.nan
        return np.asarray(table, dtype=np.float64)

    def table_map(self, step_px: int = 4) -> FloatArray:
        """Table mm of every image pixel centre (H x W x 2), computed once per camera.

        The inverse lens model is solved on a grid every ``step_px`` pixels and
        interpolated bilinearly in between: the map is smooth, so this costs ~0.01 px.
        """
        if "map" not in self._cache:
            width, height = self.image_size
            nx, ny = width // step_px + 2, height // step_px + 2
            xs, ys = np.linspace(0, width - 1, nx), np.linspace(0, height - 1, ny)
            u, v = np.meshgrid(xs, ys)
            coarse = self.pixels_to_table(np.stack([u.ravel(), v.ravel()], axis=1))
            coarse = coarse.reshape(ny, nx, 2).astype(np.float32)
            fx = (np.arange(width, dtype=np.float32) * (nx - 1) / (width - 1))
            fy = (np.arange(height, dtype=np.float32) * (ny - 1) / (height - 1))
            grid_x, grid_y = np.meshgrid(fx, fy)
            fine = cv2.remap(coarse, grid_x, grid_y, cv2.INTER_LINEAR,
                             borderMode=cv2.BORDER_REPLICATE)
            self._cache["map"] = np.asarray(fine, dtype=np.float64)
        return self._cache["map"]

    def visible_bounds(self, margin_mm: float = 20.0) -> tuple[float, float, float, float]:
        """(x_min, y_min, x_max, y_max) of the table area the image sees: the image of the
        image border, where every ray of the border meets the table."""
        width, height = self.image_size
        xs, ys = np.linspace(0, width - 1, 64), np.linspace(0, height - 1, 36)
        border = np.concatenate([
            np.stack([xs, np.zeros_like(xs)], 1), np.stack([xs, np.full_like(xs, height - 1)], 1),
            np.stack([np.zeros_like(ys), ys], 1), np.stack([np.full_like(ys, width - 1), ys], 1),
        ])
        table = self.pixels_to_table(border)
        finite = table[np.isfinite(table[:, 0])]
        x_min, y_min = finite.min(axis=0) - margin_mm
        x_max, y_max = finite.max(axis=0) + margin_mm
        return float(x_min), float(y_min), float(x_max), float(y_max)

    def render(self, canvas: TableCanvas, outside: tuple[int, int, int] = (40, 40, 40)) -> Image:
        """What the camera sees of a top-down table canvas (bilinear, pre-blurred to avoid
        aliasing where the canvas is finer than the image)."""
        table = self.table_map()
        cols = (table[..., 0] - canvas.x0) * canvas.px_per_mm
        rows = (canvas.y_top - table[..., 1]) * canvas.px_per_mm
        cols = np.nan_to_num(cols, nan=-10.0).astype(np.float32)
        rows = np.nan_to_num(rows, nan=-10.0).astype(np.float32)
        image = cv2.remap(canvas.image, cols, rows, cv2.INTER_LINEAR,
                          borderMode=cv2.BORDER_CONSTANT, borderValue=outside)
        return np.asarray(image, dtype=np.uint8)

    def mm_per_pixel_at(self, point_mm: tuple[float, float]) -> float:
        """Approximate size of one image pixel on the table near ``point_mm``."""
        x, y = point_mm
        pixels = self.project(np.array([[x, y], [x + 10.0, y], [x, y + 10.0]]))
        spans = np.linalg.norm(pixels[1:] - pixels[0], axis=1)
        return float(10.0 / max(spans.mean(), 1e-9))


def random_camera(
    rng: np.random.Generator,
    *,
    target: tuple[float, float] = (0.0, 0.0),
    view_mm: tuple[float, float] = (700.0, 480.0),
    image_size: tuple[int, int] = (1280, 720),
    max_tilt_deg: float = 45.0,
    distortion: bool = True,
) -> Camera:
    """A plausible webcam pose: overhead or angled up to ``max_tilt_deg``, framing an area
    about ``view_mm`` around ``target``."""
    hfov = float(rng.uniform(55, 78))
    tilt = float(rng.uniform(0, max_tilt_deg))
    width, height = image_size
    # Distance so that the view's width fills the image width at the target.
    focal = (width / 2) / math.tan(math.radians(hfov) / 2)
    fill = float(rng.uniform(0.95, 1.25))
    distance = focal * view_mm[0] * fill / width
    distance = max(distance, focal * view_mm[1] * fill / height)
    dist = (float(rng.uniform(-0.22, 0.05)), float(rng.uniform(-0.02, 0.08)), 0.0, 0.0, 0.0) \
        if distortion else (0.0,) * 5
    return Camera.looking_at(
        target, distance, tilt_deg=tilt, yaw_deg=float(rng.uniform(-15, 15)),
        roll_deg=float(rng.uniform(-4, 4)), hfov_deg=hfov, image_size=image_size,
        dist_coeffs=dist,
        principal_offset=(float(rng.normal(0, 6)), float(rng.normal(0, 6))),
    )
