"""Solving the lens and the table plane from sheets seen in one image.

All sheets lie on one plane. The model: a pinhole camera (one focal length, principal point)
with radial distortion k1, k2, k3, a camera pose in the table frame, and for each sheet but
the reference one its place on the table (x, y, turn). Corners are projected through it and
the pixel residuals minimised together (Levenberg-Marquardt), so sheets spread over the view
pin the distortion down where a single sheet could not.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from referee.calibration.detect import SheetView
from referee.calibration.errors import CalibrationError

FloatArray = npt.NDArray[np.float64]

#: A sheet whose corners sit further than this from the common plane is not lying flat.
MAX_SHEET_RESIDUAL_PX: Final = 1.5
_UNDISTORT_CRITERIA: Final = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 60, 1e-10)


@dataclass(frozen=True)
class Lens:
    camera_matrix: FloatArray  # 3 x 3
    dist_coeffs: FloatArray  # k1, k2, p1, p2, k3

    def undistort(self, pixels: FloatArray) -> FloatArray:
        """Distorted image px (N x 2) -> undistorted px (same camera matrix)."""
        pts = np.asarray(pixels, dtype=np.float64).reshape(-1, 1, 2)
        if len(pts) == 0:
            return np.zeros((0, 2))
        out = cv2.undistortPointsIter(pts, self.camera_matrix, self.dist_coeffs,
                                      None, self.camera_matrix,  # type: ignore[call-overload]
                                      _UNDISTORT_CRITERIA)
        return np.asarray(out, dtype=np.float64).reshape(-1, 2)

    def distort(self, undistorted: FloatArray) -> FloatArray:
        """Undistorted px (N x 2) -> distorted px."""
        pts = np.asarray(undistorted, dtype=np.float64).reshape(-1, 2)
        k = self.camera_matrix
        x, y = (pts[:, 0] - k[0, 2]) / k[0, 0], (pts[:, 1] - k[1, 2]) / k[1, 1]
        d = np.asarray(self.dist_coeffs, dtype=np.float64).ravel()
        if len(d) in (4, 5):
            # OpenCV's radial and tangential model as ``projectPoints`` computes it, in
            # numpy: the same numbers, many times sooner for thousands of points
            k1, k2, p1, p2 = d[:4]
            k3 = d[4] if len(d) == 5 else 0.0
            r2 = x * x + y * y
            radial = 1 + r2 * (k1 + r2 * (k2 + r2 * k3))
            xd = x * radial + 2 * p1 * x * y + p2 * (r2 + 2 * x * x)
            yd = y * radial + p1 * (r2 + 2 * y * y) + 2 * p2 * x * y
            return np.column_stack([k[0, 0] * xd + k[0, 2],
                                    k[1, 1] * yd + k[1, 2]])
        normal = np.column_stack([x, y, np.ones(len(pts))])
        out, _ = cv2.projectPoints(normal, np.zeros(3), np.zeros(3), k, d)
        return np.asarray(out, dtype=np.float64).reshape(-1, 2)


@dataclass(frozen=True)
class SheetPlacement:
    """Where a sheet lies in the solved frame: frame = rotation(turn) @ sheet + (x, y)."""

    sheet: int
    x: float
    y: float
    turn_rad: float
    residual_px: float
    tilt_deg: float = 0.0  # the sheet's own plane against the reference sheet's, alone

    def to_frame(self, sheet_points: FloatArray) -> FloatArray:
        c, s = math.cos(self.turn_rad), math.sin(self.turn_rad)
        pts = np.asarray(sheet_points, dtype=np.float64).reshape(-1, 2)
        return np.column_stack([c * pts[:, 0] - s * pts[:, 1] + self.x,
                                s * pts[:, 0] + c * pts[:, 1] + self.y])


@dataclass(frozen=True)
class PlaneSolution:
    """The lens (or None), the homography undistorted px -> frame mm, sheet placements, and
    the fit's errors: pixel RMS and millimetre RMS on the table."""

    lens: Lens | None
    image_to_frame: FloatArray
    placements: tuple[SheetPlacement, ...]
    rms_px: float
    error_mm: float
    corner_count: int


def levenberg_marquardt(residuals: Callable[[FloatArray], FloatArray], start: FloatArray,
                        *, iterations: int = 60, step: float = 1e-6) -> FloatArray:
    """Minimise ||residuals(p)||^2 from ``start`` (numerical Jacobian, adaptive damping)."""
    params = np.asarray(start, dtype=np.float64).copy()
    current = residuals(params)
    cost = float(current @ current)
    damping = 1e-3
    for _ in range(iterations):
        jac = np.empty((len(current), len(params)))
        for j in range(len(params)):
            delta = step * max(1.0, abs(params[j]))
            probe = params.copy()
            probe[j] += delta
            jac[:, j] = (residuals(probe) - current) / delta
        normal = jac.T @ jac
        gradient = jac.T @ current
        improved = False
        while damping < 1e10:
            lhs = normal + damping * np.diag(np.diag(normal) + 1e-12)
            try:
                update = np.linalg.solve(lhs, -gradient)
            except np.linalg.LinAlgError:
                damping *= 10
                continue
            trial = params + update
            trial_res = residuals(trial)
            trial_cost = float(trial_res @ trial_res)
            if np.isfinite(trial_cost) and trial_cost < cost:
                converged = cost - trial_cost < 1e-10 * cost
                params, current, cost = trial, trial_res, trial_cost
                damping = max(damping / 10, 1e-12)
                improved = True
                break
            damping *= 10
        if not improved or converged:
            break
    return params


def _frame_pose(rvec: FloatArray, tvec: FloatArray) -> FloatArray:
    rotation, _ = cv2.Rodrigues(rvec)
    pose = np.eye(4)
    pose[:3, :3] = rotation
    pose[:3, 3] = np.asarray(tvec).ravel()
    return pose


def _initial_lens(views: Sequence[SheetView], image_size: tuple[int, int],
                  ) -> tuple[FloatArray, FloatArray, list[FloatArray]]:
    """Per-sheet calibrateCamera (principal point fixed at the centre) as a starting point:
    camera matrix, distortion and each sheet's pose (sheet -> camera, 4 x 4)."""
    width, height = image_size
    start = np.array([[0.9 * width, 0, width / 2], [0, 0.9 * width, height / 2], [0, 0, 1]])
    objects = [np.column_stack([v.sheet_points, np.zeros(v.count)]).astype(np.float32)
               for v in views]
    images = [v.image_points.astype(np.float32) for v in views]
    flags = (cv2.CALIB_USE_INTRINSIC_GUESS | cv2.CALIB_FIX_ASPECT_RATIO
             | cv2.CALIB_ZERO_TANGENT_DIST | cv2.CALIB_FIX_K3 | cv2.CALIB_FIX_PRINCIPAL_POINT)
    _, matrix, dist, rvecs, tvecs = cv2.calibrateCamera(objects, images, image_size, start,
                                                        np.zeros(5), flags=flags)
    poses = [_frame_pose(np.asarray(r, np.float64), np.asarray(t, np.float64))
             for r, t in zip(rvecs, tvecs, strict=True)]
    return np.asarray(matrix, np.float64), np.asarray(dist, np.float64).ravel(), poses


def solve_plane(views: Sequence[SheetView], image_size: tuple[int, int], *,
                reference: int, lens: Lens | None = None, estimate_lens: bool = True,
                ) -> PlaneSolution:
    """Jointly fit lens (unless given or not wanted), camera pose and sheet placements; the
    frame is sheet ``reference``'s sheet frame."""
    ordered = sorted(views, key=lambda v: (v.sheet != reference, v.sheet))
    if not ordered or ordered[0].sheet != reference:
        raise CalibrationError(f"marker sheet {reference + 1} is not in view")
    matrix, dist, poses = _initial_lens(ordered, image_size)
    if lens is not None:
        matrix, dist = lens.camera_matrix, lens.dist_coeffs
    ref_inverse = np.linalg.inv(poses[0])
    normals = [pose[:3, 2] for pose in poses]
    tilts = [math.degrees(math.acos(float(np.clip(abs(n @ normals[0]), -1.0, 1.0))))
             for n in normals]
    start_sheets: list[float] = []
    for pose in poses[1:]:
        relative = ref_inverse @ pose  # sheet -> reference sheet frame
        start_sheets += [relative[0, 3], relative[1, 3],
                         math.atan2(relative[1, 0], relative[0, 0])]
    rvec0, _ = cv2.Rodrigues(poses[0][:3, :3])
    fit_lens = lens is None and estimate_lens
    intrinsics = [matrix[0, 0], matrix[0, 2], matrix[1, 2], dist[0], dist[1], 0.0] \
        if fit_lens else []
    start = np.array(intrinsics + list(rvec0.ravel()) + list(poses[0][:3, 3]) + start_sheets)
    observed = np.vstack([v.image_points for v in ordered]).ravel()
    fixed_dist = np.zeros(5) if lens is None and not estimate_lens else dist

    def unpack(p: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray,
                                       FloatArray]:
        if fit_lens:
            k = np.array([[p[0], 0, p[1]], [0, p[0], p[2]], [0, 0, 1]])
            d = np.array([p[3], p[4], 0.0, 0.0, p[5]])
            rest = p[6:]
        else:
            k, d, rest = matrix, fixed_dist, p
        frame_points = [ordered[0].sheet_points]
        for i, view in enumerate(ordered[1:]):
            x, y, turn = rest[6 + 3 * i: 9 + 3 * i]
            c, s = math.cos(turn), math.sin(turn)
            pts = view.sheet_points
            frame_points.append(np.column_stack([c * pts[:, 0] - s * pts[:, 1] + x,
                                                 s * pts[:, 0] + c * pts[:, 1] + y]))
        return k, d, rest[:3], rest[3:6], np.vstack(frame_points)

    def residuals(p: FloatArray) -> FloatArray:
        k, d, rvec, tvec, pts = unpack(p)
        world = np.column_stack([pts, np.zeros(len(pts))])
        projected, _ = cv2.projectPoints(world, rvec, tvec, k, d)
        return np.asarray(projected, np.float64).ravel() - observed

    best = levenberg_marquardt(residuals, start)
    k, d, rvec, tvec, frame_points = unpack(best)
    final = residuals(best).reshape(-1, 2)
    solved_lens = Lens(k, d) if lens is not None or fit_lens else None
    rotation, _ = cv2.Rodrigues(rvec)
    homography = k @ np.column_stack([rotation[:, 0], rotation[:, 1], np.asarray(tvec)])
    inverse = np.linalg.inv(homography)
    image_to_frame = np.asarray(inverse / inverse[2, 2], dtype=np.float64)
    # Error on the table: map the observed corners back and compare with where they are.
    undistorted = (solved_lens.undistort(np.vstack([v.image_points for v in ordered]))
                   if solved_lens else np.vstack([v.image_points for v in ordered]))
    mapped = cv2.perspectiveTransform(undistorted.reshape(-1, 1, 2), image_to_frame)
    error_mm = float(np.sqrt(np.mean(np.sum((mapped.reshape(-1, 2) - frame_points) ** 2, 1))))
    placements = []
    offset = 0
    rest = best[6:] if fit_lens else best
    for i, view in enumerate(ordered):
        chunk = final[offset:offset + view.count]
        offset += view.count
        residual = float(np.sqrt(np.mean(np.sum(chunk ** 2, axis=1))))
        x, y, turn = (0.0, 0.0, 0.0) if i == 0 else rest[3 + 3 * i: 6 + 3 * i]
        placements.append(SheetPlacement(view.sheet, float(x), float(y), float(turn), residual,
                                         tilts[i]))
    rms_px = float(np.sqrt(np.mean(np.sum(final ** 2, axis=1))))
    return PlaneSolution(solved_lens, image_to_frame, tuple(placements), rms_px, error_mm,
                         len(frame_points))
