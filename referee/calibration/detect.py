"""Finding the printed marker sheets in a camera image (pixels as the camera gives them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from referee.calibration.sheet import DEFAULT_DESIGN, SheetDesign

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int32]
Image = npt.NDArray[np.uint8]

#: A sheet needs this many ChArUco corners to take part in a solve.
MIN_SHEET_CORNERS: Final = 6


@dataclass(frozen=True)
class SheetView:
    """One sheet as seen: its chessboard corners (distorted image px) with their sheet-frame
    mm, and its markers' corners (image px) by id."""

    sheet: int
    corner_ids: IntArray
    image_points: FloatArray  # N x 2 px
    sheet_points: FloatArray  # N x 2 mm
    markers: dict[int, FloatArray]  # id -> 4 x 2 px

    @property
    def count(self) -> int:
        return len(self.corner_ids)


@dataclass(frozen=True)
class MarkerDetection:
    """Everything found in one image."""

    sheets: tuple[SheetView, ...]
    marker_count: int

    @property
    def corner_count(self) -> int:
        return sum(view.count for view in self.sheets)


def to_grey(image: Image) -> Image:
    if image.ndim == 2:
        return image
    return np.asarray(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), dtype=np.uint8)


def sharpness(image: Image) -> float:
    """Variance of the Laplacian of the grey image: low for a blurred frame."""
    return float(cv2.Laplacian(to_grey(image), cv2.CV_64F).var())


def _aruco_parameters() -> cv2.aruco.DetectorParameters:
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    params.adaptiveThreshWinSizeMax = 53
    return params


def detect_sheets(image: Image, design: SheetDesign = DEFAULT_DESIGN) -> MarkerDetection:
    """Detect every marker, then each sheet's ChArUco corners (sub-pixel)."""
    grey = to_grey(image)
    detector = cv2.aruco.ArucoDetector(design.aruco_dictionary, _aruco_parameters())
    corners, ids, _ = detector.detectMarkers(grey)
    if ids is None or len(ids) == 0:
        return MarkerDetection((), 0)
    flat_ids = np.asarray(ids).ravel()
    by_sheet: dict[int, list[int]] = {}
    for index, marker_id in enumerate(flat_ids):
        by_sheet.setdefault(design.sheet_of(int(marker_id)), []).append(index)
    views = []
    charuco_params = cv2.aruco.CharucoParameters()
    for sheet, indices in sorted(by_sheet.items()):
        if sheet >= design.max_sheets or len(indices) < 2:
            continue
        sheet_corners = tuple(corners[i] for i in indices)
        sheet_ids = flat_ids[indices].reshape(-1, 1).astype(np.int32)
        charuco = cv2.aruco.CharucoDetector(design.board(sheet), charuco_params)
        ch_corners, ch_ids, _, _ = charuco.detectBoard(grey, markerCorners=sheet_corners,
                                                       markerIds=sheet_ids)
        if ch_ids is None or len(ch_ids) < MIN_SHEET_CORNERS:
            continue
        corner_ids = np.asarray(ch_ids, dtype=np.int32).ravel()
        views.append(SheetView(
            sheet=sheet,
            corner_ids=corner_ids,
            image_points=np.asarray(ch_corners, dtype=np.float64).reshape(-1, 2),
            sheet_points=design.corner_points[corner_ids],
            markers={int(flat_ids[i]): np.asarray(corners[i], np.float64).reshape(4, 2)
                     for i in indices},
        ))
    return MarkerDetection(tuple(views), len(flat_ids))
