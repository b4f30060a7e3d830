"""Noticing that the camera moved: every few seconds, look for the calibration's markers (or
its board's lines) where the calibration says they are; if they have moved, solve again from
them, or pause rulings and say why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

import cv2
import numpy as np
import numpy.typing as npt

from referee.calibration.errors import CalibrationError
from referee.calibration.layouts import GridBoardLayout, PiecepackLayout
from referee.calibration.locate import locate_grid, locate_piecepack
from referee.calibration.model import Calibration, matrix3
from referee.calibration.sheet import DEFAULT_DESIGN, SheetDesign

FloatArray = npt.NDArray[np.float64]
Image = npt.NDArray[np.uint8]

DEFAULT_INTERVAL_S: Final = 3.0
#: Features further than this from where the calibration puts them mean the camera moved.
MOVED_MM: Final = 2.0
MIN_MARKERS_TO_RESOLVE: Final = 4

Status = Literal["steady", "resolved", "paused"]


@dataclass(frozen=True)
class DriftReport:
    status: Status
    shift_mm: float | None  # median displacement of the features found, on the table
    calibration: Calibration  # the calibration to use from now on
    message: str
    reason: str = ""  # why rulings pause, in a few words (status "paused")


def _marker_shift(frame: Image, calibration: Calibration, design: SheetDesign,
                  ) -> tuple[float | None, FloatArray, FloatArray]:
    """Median distance (mm) between where the stored markers are and where the current
    calibration maps them now; plus matched undistorted px and stored mm for a re-solve."""
    known = {m.id: np.array(m.corners_mm) for m in calibration.markers}
    if not known:
        return None, np.zeros((0, 2)), np.zeros((0, 2))
    detector = cv2.aruco.ArucoDetector(design.aruco_dictionary, cv2.aruco.DetectorParameters())
    corners, ids, _ = detector.detectMarkers(
        frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY))
    if ids is None:
        return None, np.zeros((0, 2)), np.zeros((0, 2))
    pixels, table = [], []
    for marker_corners, marker_id in zip(corners, np.asarray(ids).ravel(), strict=True):
        if int(marker_id) in known:
            pixels.append(np.asarray(marker_corners, np.float64).reshape(4, 2))
            table.append(known[int(marker_id)])
    if not pixels:
        return None, np.zeros((0, 2)), np.zeros((0, 2))
    px, mm = np.vstack(pixels), np.vstack(table)
    now = calibration.plane.to_table(px)
    shift = float(np.median(np.linalg.norm(now - mm, axis=1)))
    lens = calibration.lens
    return shift, (lens.undistort(px) if lens else px), mm


class DriftChecker:
    """Feed it frames with their time; it checks every ``interval_s`` seconds."""

    def __init__(self, calibration: Calibration, *,
                 layout: PiecepackLayout | GridBoardLayout | None = None,
                 interval_s: float = DEFAULT_INTERVAL_S,
                 design: SheetDesign = DEFAULT_DESIGN) -> None:
        self.calibration = calibration
        self.layout = layout
        self.interval_s = interval_s
        self.design = design
        self._last: float | None = None
        self.paused = False

    def update(self, t: float, frame: Image) -> DriftReport | None:
        """A report when a check is due (None otherwise)."""
        if self._last is not None and t - self._last < self.interval_s and not self.paused:
            return None
        self._last = t
        report = self.check(frame)
        self.calibration = report.calibration
        self.paused = report.status == "paused"
        return report

    def check(self, frame: Image) -> DriftReport:
        cal = self.calibration
        shift, undistorted, mm = _marker_shift(frame, cal, self.design)
        if shift is not None and shift <= MOVED_MM:
            return DriftReport("steady", shift, cal, "camera steady")
        if shift is not None and len(mm) >= 4 * MIN_MARKERS_TO_RESOLVE:
            homography, _ = cv2.findHomography(undistorted, mm, cv2.RANSAC, 3.0)
            if homography is not None:
                mapped = cv2.perspectiveTransform(undistorted.reshape(-1, 1, 2), homography)
                error = float(np.sqrt(np.mean(np.sum((mapped.reshape(-1, 2) - mm) ** 2, 1))))
                new = cal.model_copy(update={"image_to_table": matrix3(homography / homography[
                    2, 2]), "error_mm": error})
                return DriftReport("resolved", shift, new, f"camera moved {shift:.1f} mm; "
                                   f"solved again from {len(mm) // 4} markers "
                                   f"({error:.2f} mm)")
        if cal.board is not None and self.layout is not None:
            return self._check_board(frame, shift)
        reason = ("the calibration markers are out of view" if shift is None
                  else f"camera moved {shift:.1f} mm and too few markers are in view")
        return DriftReport("paused", shift, cal, f"rulings paused: {reason}; calibrate again",
                           reason)

    def _check_board(self, frame: Image, marker_shift: float | None) -> DriftReport:
        """Find the board again through the current calibration: a small move shows as the
        board frame having shifted, and is absorbed into the calibration."""
        cal = self.calibration
        layout = self.layout
        try:
            located = (locate_piecepack(frame, cal.plane, layout)
                       if isinstance(layout, PiecepackLayout)
                       else locate_grid(frame, cal.plane, layout))  # type: ignore[arg-type]
        except CalibrationError as error:
            reason = f"the board cannot be found ({error})"
            return DriftReport("paused", marker_shift, cal, f"rulings paused: {reason}", reason)
        corners = np.array([[0.0, 0.0], [200.0, 0.0], [0.0, 200.0], [200.0, 200.0]])
        shift = float(np.max(np.linalg.norm(located.pose.to_table(corners) - corners, axis=1)))
        if shift <= MOVED_MM:
            return DriftReport("steady", shift, cal, "camera steady (board in place)")
        to_board = located.pose.table_to_board()
        new = cal.model_copy(update={"image_to_table": matrix3(
            to_board @ np.array(cal.image_to_table))})
        return DriftReport("resolved", shift, new,
                           f"camera moved {shift:.1f} mm; board found again")
