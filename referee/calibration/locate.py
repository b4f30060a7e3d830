"""Finding a game board on the calibrated table plane, from the board's own features.

Both boards are found the same way: a coarse outline in a top-down warp (the largest bright
region of about the right size), then the board's straight lines measured precisely by
sampling the camera image across each one and fitting the dark dip's centre. The board frame
is then fitted to those lines; the lines themselves are kept, as measured.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from referee.calibration.errors import CalibrationError
from referee.calibration.layouts import GridBoardLayout, PiecepackLayout
from referee.calibration.rectify import PlaneMap, top_down

FloatArray = npt.NDArray[np.float64]
Image = npt.NDArray[np.uint8]

WARP_PX_PER_MM: Final = 1.0
PROFILE_STEP_MM: Final = 0.2
#: A located board whose lines stray further than this from the fitted frame is refused.
MAX_LINE_RESIDUAL_MM: Final = 1.5


@dataclass(frozen=True)
class BoardPose:
    """Board frame in the table frame: table = R(angle) @ board + origin."""

    x: float
    y: float
    angle_rad: float

    def board_to_table(self) -> FloatArray:
        c, s = math.cos(self.angle_rad), math.sin(self.angle_rad)
        return np.array([[c, -s, self.x], [s, c, self.y], [0.0, 0.0, 1.0]])

    def table_to_board(self) -> FloatArray:
        return np.asarray(np.linalg.inv(self.board_to_table()), dtype=np.float64)

    def to_table(self, board_mm: FloatArray) -> FloatArray:
        pts = np.asarray(board_mm, dtype=np.float64).reshape(-1, 2)
        m = self.board_to_table()
        return np.asarray(pts @ m[:2, :2].T + m[:2, 2], dtype=np.float64)

    def moved(self, dx: float, dy: float, dangle_rad: float) -> BoardPose:
        """This pose corrected by an offset and a turn given in the board's own frame."""
        shift = self.to_table(np.array([[dx, dy]]))[0]
        return BoardPose(float(shift[0]), float(shift[1]), self.angle_rad + dangle_rad)


@dataclass(frozen=True)
class LocatedLine:
    """A measured board line in the board frame: y at x = 0 and at x = ``x_end``."""

    index: int
    y_start: float
    y_end: float
    x_end: float
    residual_mm: float


@dataclass(frozen=True)
class LocatedBoard:
    kind: str
    pose: BoardPose
    pitch_mm: float
    lines: tuple[LocatedLine, ...]
    tiles_per_side: int | None
    residual_mm: float
    features_mm: FloatArray  # board-frame points measured on the lines (for drift checks)


def _outline(image: Image, plane: PlaneMap, expected: tuple[float, float],
             ) -> tuple[FloatArray, FloatArray, tuple[float, float]]:
    """Centre (mm), long-axis unit vector and (long, short) size of the largest bright
    region whose size is near ``expected`` = (long, short) mm."""
    bounds = plane.visible_bounds()
    warped, seen = top_down(image, plane, bounds, WARP_PX_PER_MM)
    grey = cv2.cvtColor(warped, cv2.COLOR_BGR2GRAY) if warped.ndim == 3 else warped
    grey = cv2.GaussianBlur(grey, (0, 0), 1.0)
    values = grey[seen]
    if values.size < 100:
        raise CalibrationError("the calibrated view shows too little of the table")
    threshold, _ = cv2.threshold(values.reshape(-1, 1), 0, 255,
                                 cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    mask = ((grey > threshold) & seen).astype(np.uint8)
    close = max(3, int(8 * WARP_PX_PER_MM) | 1)
    mask = np.asarray(cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((close, close), np.uint8)),
                      dtype=np.uint8)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    s = WARP_PX_PER_MM
    best = None
    for contour in sorted(contours, key=cv2.contourArea, reverse=True)[:5]:
        pts = contour.reshape(-1, 2).astype(np.float64)
        mm = np.column_stack([bounds[0] + pts[:, 0] / s, bounds[3] - pts[:, 1] / s])
        (cx, cy), (w, h), angle = cv2.minAreaRect(mm.astype(np.float32))
        long, short = max(w, h), min(w, h)
        if abs(short / expected[1] - 1) < 0.2 and 0.45 < long / expected[0] < 1.2:
            theta = math.radians(angle) + (0 if w >= h else math.pi / 2)
            best = (np.array([cx, cy]), np.array([math.cos(theta), math.sin(theta)]),
                    (float(long), float(short)))
            break
    if best is None:
        raise CalibrationError(
            f"no board of about {expected[1]:.0f} x {expected[0]:.0f} mm found on the table")
    return best


def _dip(profile: FloatArray, positions: FloatArray) -> float | None:
    """Sub-sample centre of the darkest dip in a profile, or None if there is no clear one."""
    if np.isnan(profile).any():
        return None
    smooth = cv2.GaussianBlur(profile.reshape(1, -1), (0, 0), 2.0).ravel()
    i = int(np.argmin(smooth))
    if i == 0 or i == len(smooth) - 1:
        return None
    depth = float(np.median(smooth) - smooth[i])
    if depth < 6.0:
        return None
    a, b, c = smooth[i - 1], smooth[i], smooth[i + 1]
    denominator = a - 2 * b + c
    shift = 0.5 * (a - c) / denominator if denominator > 0 else 0.0
    step = positions[1] - positions[0]
    return float(positions[i] + np.clip(shift, -1, 1) * step)


def _measure_lines(image: Image, plane: PlaneMap, pose: BoardPose, targets: list[float],
                   across: list[float], window: float, transpose: bool = False,
                   ) -> dict[int, list[tuple[float, float]]]:
    """For each target coordinate (board y, or x if ``transpose``), the dip positions found
    on profiles at each ``across`` coordinate: {target index: [(across, along)]}."""
    found: dict[int, list[tuple[float, float]]] = {}
    offsets = np.arange(-window, window + 1e-9, PROFILE_STEP_MM)
    for index, target in enumerate(targets):
        for a in across:
            along = target + offsets
            board = (np.column_stack([along, np.full_like(along, a)]) if transpose
                     else np.column_stack([np.full_like(along, a), along]))
            profile = plane.sample(image, pose.to_table(board))
            centre = _dip(profile, along)
            if centre is not None:
                found.setdefault(index, []).append((a, centre))
    return found


def _fit_family(found: dict[int, list[tuple[float, float]]], numbers: list[int],
                ) -> tuple[float, float, float, FloatArray]:
    """Least squares along = offset + slope * across + number * pitch over all points of a
    family of parallel, evenly spaced lines; returns offset, slope, pitch, residuals."""
    rows, rhs = [], []
    for index, points in found.items():
        for a, along in points:
            rows.append([1.0, a, float(numbers[index])])
            rhs.append(along)
    if len(rows) < 6:
        raise CalibrationError("too few board lines could be measured")
    matrix, target = np.array(rows), np.array(rhs)
    solution, *_ = np.linalg.lstsq(matrix, target, rcond=None)
    residuals = target - matrix @ solution
    return float(solution[0]), float(solution[1]), float(solution[2]), residuals


def _line_fits(found: dict[int, list[tuple[float, float]]], numbers: list[int],
               pitch: float, x_end: float) -> tuple[LocatedLine, ...]:
    """Each line fitted on its own (points already in the fitted frame), tilted where it has
    points across most of the width, else level."""
    lines = []
    for index, points in sorted(found.items()):
        k = numbers[index]
        pts = np.array(points)
        along = pts[:, 1]
        if np.ptp(pts[:, 0]) > 0.5 * x_end:
            b, a = np.polyfit(pts[:, 0], along, 1)
        else:
            b, a = 0.0, float(np.mean(along))
        model = k * pitch
        residual = float(np.sqrt(np.mean((along - model) ** 2)))
        lines.append(LocatedLine(k, float(a), float(a + b * x_end), x_end, residual))
    return tuple(lines)


def _refined(pose: BoardPose, offset: float, slope: float) -> BoardPose:
    """The pose after a measured offset (along board y) and slope (dy/dx)."""
    return pose.moved(0.0, offset, math.atan(slope))


def locate_piecepack(image: Image, plane: PlaneMap, layout: PiecepackLayout) -> LocatedBoard:
    """The Shove piecepack board: outline -> orientation (the open end is the front) ->
    seams measured in both side columns -> frame fitted to the seams and inner edges."""
    p = layout.pitch_mm
    across_n = layout.tiles_across
    centre, axis, (long, short) = _outline(
        image, plane, ((layout.tiles_per_side + 1) * p, across_n * p))
    pitch0 = short / across_n
    tiles = int(np.clip(round(long / pitch0) - 1, 3, 9))
    # The closed end (the row across the top) is bright in the middle; the front is open.
    ends = np.array([centre + axis * (long / 2 - pitch0 / 2),
                     centre - axis * (long / 2 - pitch0 / 2)])
    brightness = plane.sample(image, ends)
    up = axis if brightness[0] > brightness[1] else -axis
    right = np.array([up[1], -up[0]])
    front_left = centre - up * long / 2 - right * short / 2
    origin = front_left + right * pitch0
    pose = BoardPose(float(origin[0]), float(origin[1]), math.atan2(right[1], right[0]))
    # Seams: profiles along y in each side column, clear of the tile's centre cross line.
    inner = (across_n - 2) * pitch0
    across = [x for c in (-pitch0 / 2, inner + pitch0 / 2) for x in
              (c - 17, c - 11, c - 5, c + 5, c + 11, c + 17)]
    numbers = list(range(1, tiles))
    found = _measure_lines(image, plane, pose, [k * pitch0 for k in numbers], across,
                           0.3 * pitch0)
    if len(found) < max(2, len(numbers) - 1):
        raise CalibrationError(f"piecepack board not found clearly: only {len(found)} of "
                               f"{len(numbers)} lines could be measured")
    offset, slope, pitch, residuals = _fit_family(found, numbers)
    pose = _refined(pose, offset, slope)
    # x: centre the playing width between the inner edges of the side columns.
    x_shift = _edge_shift(_inner_edges(image, plane, pose, pitch, tiles, inner),
                          (across_n - 2) * pitch)
    pose = pose.moved(x_shift, 0.0, 0.0)
    corrected = {i: [(a - x_shift, along - offset - slope * a) for a, along in pts]
                 for i, pts in found.items()}
    lines = _line_fits(corrected, numbers, pitch, (across_n - 2) * pitch)
    residual = float(np.sqrt(np.mean(residuals ** 2)))
    worst = max(line.residual_mm for line in lines)
    if worst > MAX_LINE_RESIDUAL_MM:
        raise CalibrationError(f"piecepack board: a line is {worst:.1f} mm off the fitted "
                               "board (tiles out of line?)")
    features = np.array([pt for pts in corrected.values() for pt in pts])
    return LocatedBoard("piecepack", pose, pitch, lines, tiles, residual, features)


def _edge_shift(edge_x: tuple[float, float] | None, width: float) -> float:
    """How far to move x = 0 so the playing width sits centred between the inner edges."""
    return 0.0 if edge_x is None else (edge_x[0] + edge_x[1] - width) / 2


def _inner_edges(image: Image, plane: PlaneMap, pose: BoardPose, pitch: float, tiles: int,
                 inner: float) -> tuple[float, float] | None:
    """Board x of the inner edges of the left and right side columns (steepest fall from
    tile to table), measured on profiles at each tile row's quarter heights."""
    offsets = np.arange(-8.0, 8.0 + 1e-9, PROFILE_STEP_MM)
    edges: list[list[float]] = [[], []]
    for row in range(tiles):
        for y in (row * pitch + pitch * 0.25, row * pitch + pitch * 0.75):
            for side, (x0, sign) in enumerate(((0.0, 1.0), (inner, -1.0))):
                xs = x0 + offsets
                profile = plane.sample(image, pose.to_table(
                    np.column_stack([xs, np.full_like(xs, y)])))
                if np.isnan(profile).any():
                    continue
                smooth = cv2.GaussianBlur(profile.reshape(1, -1), (0, 0), 2.0).ravel()
                slope = np.gradient(smooth) * sign  # tile (bright) -> table (dark): negative
                i = int(np.argmin(slope))
                if 0 < i < len(slope) - 1 and -slope[i] > 2.0:
                    a, b, c = slope[i - 1], slope[i], slope[i + 1]
                    den = a - 2 * b + c
                    shift = 0.5 * (a - c) / den if den > 0 else 0.0
                    edges[side].append(float(xs[i] + np.clip(shift, -1, 1) * PROFILE_STEP_MM))
    if len(edges[0]) < 3 or len(edges[1]) < 3:
        return None
    return float(np.median(edges[0])), float(np.median(edges[1]))


def locate_grid(image: Image, plane: PlaneMap, layout: GridBoardLayout) -> LocatedBoard:
    """The Shove grid board: outline -> which end holds the black victory square (row 0) ->
    interior grid lines measured both ways -> frame fitted to them."""
    s = layout.square_mm
    long_expected = max(layout.rows, layout.cols) * s
    short_expected = min(layout.rows, layout.cols) * s
    centre, axis, _ = _outline(image, plane, (long_expected + 24, short_expected + 24))
    rows_axis = axis if layout.rows >= layout.cols else np.array([-axis[1], axis[0]])
    best: tuple[float, BoardPose] | None = None
    vr, vc = layout.victory
    for up in (rows_axis, -rows_axis):
        right = np.array([up[1], -up[0]])
        origin = centre - up * layout.height_mm / 2 - right * layout.width_mm / 2
        pose = BoardPose(float(origin[0]), float(origin[1]), math.atan2(right[1], right[0]))
        darkness = -float(plane.sample(image, pose.to_table(
            np.array([[(vc + 0.5) * s, (vr + 0.5) * s]])))[0])
        if best is None or darkness > best[0]:
            best = (darkness, pose)
    assert best is not None
    pose = best[1]
    # Rows of lines (constant y) measured on profiles at column centres, and vice versa,
    # avoiding the victory square's row and column.
    row_numbers = list(range(1, layout.rows))
    col_numbers = list(range(1, layout.cols))
    xs = [(c + 0.5) * s for c in range(layout.cols) if c != vc]
    ys = [(r + 0.5) * s for r in range(layout.rows) if r != vr]
    found_y = _measure_lines(image, plane, pose, [r * s for r in row_numbers], xs, 0.3 * s)
    found_x = _measure_lines(image, plane, pose, [c * s for c in col_numbers], ys, 0.3 * s,
                             transpose=True)
    if len(found_y) < len(row_numbers) - 1 or len(found_x) < len(col_numbers) - 1:
        raise CalibrationError("grid board: too few grid lines could be measured")
    y_offset, y_slope, y_pitch, y_res = _fit_family(found_y, row_numbers)
    x_offset, x_slope, x_pitch, x_res = _fit_family(found_x, col_numbers)
    # Rows of lines tilt by atan(y_slope); columns of lines by -atan(x_slope): average them.
    turn = (math.atan(y_slope) - math.atan(x_slope)) / 2
    pose = pose.moved(x_offset, y_offset, turn)
    pitch = (x_pitch + y_pitch) / 2
    corrected = {i: [(a - x_offset, along - y_offset - math.tan(turn) * a) for a, along in pts]
                 for i, pts in found_y.items()}
    lines = _line_fits(corrected, row_numbers, y_pitch, layout.width_mm)
    residual = float(np.sqrt(np.mean(np.concatenate([y_res, x_res]) ** 2)))
    if residual > MAX_LINE_RESIDUAL_MM:
        raise CalibrationError(f"grid board: lines are {residual:.1f} mm off a regular grid")
    features = np.array([pt for pts in corrected.values() for pt in pts])
    return LocatedBoard("grid", pose, pitch, lines, None, residual, features)
