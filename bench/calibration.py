"""Calibration accuracy on rendered views with exact ground truth.

For each random camera (0-45 degrees tilt, lens distortion on, 1280 x 720): calibrate from
four marker sheets spread over the table, and report the table-plane error over a grid of
points covering the 600 x 400 mm area (those the camera sees); then, with the camera
unmoved, lay the piecepack board instead, locate it, and report how far each located bed line
lies from the true seam, at both ends of the playing width.

    python bench/calibration.py [--poses 20] [--seed 1]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from referee.calibration.layouts import PiecepackLayout
from referee.calibration.pipeline import CalibrationOptions, calibrate_frame
from synth.boards import AREA, piecepack_scene, sheet_scene
from synth.camera import random_camera


def line_error(calibration_lines, pose_to_table, truth) -> float:  # type: ignore[no-untyped-def]
    worst = 0.0
    for line in calibration_lines:
        ends = pose_to_table(np.array([[0.0, line.y_start], [line.x_end, line.y_end]]))
        a, b = truth[line.index]
        direction = (b - a) / np.linalg.norm(b - a)
        normal = np.array([-direction[1], direction[0]])
        worst = max(worst, float(np.abs((ends - a) @ normal).max()))
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--poses", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    gx, gy = np.meshgrid(np.linspace(0, AREA[0], 61), np.linspace(0, AREA[1], 41))
    grid = np.column_stack([gx.ravel(), gy.ravel()])
    table_rms, line_max, seconds = [], [], []
    print("pose  tilt  k1     seen   table RMS  table max  lines max  lens f err  time")
    for pose in range(args.poses):
        camera = random_camera(rng, target=(300.0, 200.0))
        scene = sheet_scene(rng)
        image = camera.render(scene.canvas)
        start = time.perf_counter()
        result = calibrate_frame(image, CalibrationOptions())
        seconds.append(time.perf_counter() - start)
        cal = result.calibration
        pixels = camera.project(grid)
        width, height = camera.image_size
        seen = ((pixels[:, 0] >= 0) & (pixels[:, 0] < width) & (pixels[:, 1] >= 0)
                & (pixels[:, 1] < height))
        mapped = cal.plane.to_table(pixels[seen])
        error = np.linalg.norm(mapped - grid[seen], axis=1)
        rms = float(np.sqrt(np.mean(error ** 2)))
        table_rms.append(rms)
        # The board, camera unmoved: reuse the table calibration (no markers in view).
        layout = PiecepackLayout(gap_mm=float(rng.uniform(0.3, 1.5)),
                                 tiles_per_side=int(rng.choice([9, 9, 7])))
        canvas, drawn = piecepack_scene(rng, layout)
        board_image = camera.render(canvas)
        board = calibrate_frame(board_image, CalibrationOptions(
            game="shove-piecepack", layout=layout, plane=cal)).calibration
        assert board.board is not None
        x, y, angle = board.board.pose_in_table
        c, s = np.cos(np.radians(angle)), np.sin(np.radians(angle))

        def to_table(points: np.ndarray, c: float = c, s: float = s, x: float = x,
                     y: float = y) -> np.ndarray:
            return points @ np.array([[c, -s], [s, c]]).T + np.array([x, y])

        worst_line = line_error(board.board.lines, to_table, drawn.lines_mm)
        line_max.append(worst_line)
        tilt = float(np.degrees(np.arccos(abs(camera.rotation[2, 2]))))
        f_err = (cal.camera_matrix[0][0] - camera.camera_matrix[0, 0]) if cal.camera_matrix \
            else float("nan")
        print(f"{pose:4d}  {tilt:4.1f}  {camera.dist_coeffs[0]:+.3f}  {seen.mean():5.0%}  "
              f"{rms:9.3f}  {error.max():9.3f}  {worst_line:9.3f}  {f_err:+9.1f}  "
              f"{seconds[-1]:4.2f}s")
    print(f"table-plane error over {AREA[0]:.0f} x {AREA[1]:.0f} mm: RMS mean "
          f"{np.mean(table_rms):.3f} mm, worst pose {np.max(table_rms):.3f} mm (target <= 1)")
    print(f"piecepack bed lines: worst line end {np.max(line_max):.3f} mm, mean of per-pose "
          f"worst {np.mean(line_max):.3f} mm (target <= 1)")
    print(f"calibration time per frame: median {np.median(seconds):.2f} s")


if __name__ == "__main__":
    main()
