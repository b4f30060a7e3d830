"""The rectified top-down preview: the calibrated frame warped flat with a millimetre grid,
the board lines found, and the figures a user checks."""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from referee.calibration.layouts import CardTableLayout, GridBoardLayout, PiecepackLayout
from referee.calibration.model import Calibration
from referee.calibration.rectify import top_down

Image = npt.NDArray[np.uint8]
MAX_PREVIEW_PX: Final = 1400
MARGIN_MM: Final = 40.0


def _bounds(calibration: Calibration,
            layout: CardTableLayout | PiecepackLayout | GridBoardLayout | None,
            ) -> tuple[float, float, float, float]:
    visible = calibration.plane.visible_bounds(limit_mm=1500)
    board = calibration.board
    if board is not None and board.kind == "piecepack" and isinstance(layout, PiecepackLayout):
        p, n = board.pitch_mm, board.tiles_per_side or layout.tiles_per_side
        wanted = (-p, 0.0, (layout.tiles_across - 1) * p, (n + 1) * p)
    elif board is not None and isinstance(layout, GridBoardLayout):
        wanted = (0.0, 0.0, layout.cols * board.pitch_mm, layout.rows * board.pitch_mm)
    elif isinstance(layout, CardTableLayout):
        wanted = (0.0, 0.0, layout.width_mm, layout.depth_mm)
    else:
        return visible
    m = MARGIN_MM
    return (max(wanted[0] - m, visible[0]), max(wanted[1] - m, visible[1]),
            min(wanted[2] + m, visible[2]), min(wanted[3] + m, visible[3]))


def render_preview(image: Image, calibration: Calibration,
                   layout: CardTableLayout | PiecepackLayout | GridBoardLayout | None) -> Image:
    x_min, y_min, x_max, y_max = _bounds(calibration, layout)
    scale = min(3.0, MAX_PREVIEW_PX / max(x_max - x_min, y_max - y_min, 1.0))
    colour = image if image.ndim == 3 else np.asarray(cv2.cvtColor(image, cv2.COLOR_GRAY2BGR),
                                                      dtype=np.uint8)
    warped, seen = top_down(colour, calibration.plane, (x_min, y_min, x_max, y_max), scale)
    out = warped.copy()
    out[~seen] = (40, 40, 40)
    height, width = out.shape[:2]

    def col(x: float) -> int:
        return round((x - x_min) * scale)

    def row(y: float) -> int:
        return round((y_max - y) * scale)

    overlay = out.copy()
    for step, shade, thick in ((10, (200, 200, 200), 1), (50, (255, 255, 255), 1)):
        for x in np.arange(np.ceil(x_min / step) * step, x_max, step):
            cv2.line(overlay, (col(x), 0), (col(x), height - 1), shade, thick)
        for y in np.arange(np.ceil(y_min / step) * step, y_max, step):
            cv2.line(overlay, (0, row(y)), (width - 1, row(y)), shade, thick)
    out = np.asarray(cv2.addWeighted(overlay, 0.35, out, 0.65, 0), dtype=np.uint8)
    font = cv2.FONT_HERSHEY_SIMPLEX
    for x in np.arange(np.ceil(x_min / 100) * 100, x_max, 100):
        cv2.putText(out, str(round(x)), (col(x) + 2, height - 6), font, 0.45, (255, 255, 255), 1,
                    cv2.LINE_AA)
    for y in np.arange(np.ceil(y_min / 100) * 100, y_max, 100):
        cv2.putText(out, str(round(y)), (4, row(y) - 3), font, 0.45, (255, 255, 255), 1,
                    cv2.LINE_AA)
    # The frame's origin and axes.
    origin = (col(0), row(0))
    cv2.arrowedLine(out, origin, (col(50), row(0)), (0, 0, 255), 2, cv2.LINE_AA, tipLength=0.2)
    cv2.arrowedLine(out, origin, (col(0), row(50)), (0, 200, 0), 2, cv2.LINE_AA, tipLength=0.2)
    board = calibration.board
    if board is not None:
        for line in board.lines:
            a = (col(0.0), row(line.y_start))
            b = (col(line.x_end), row(line.y_end))
            cv2.line(out, a, b, (0, 0, 255), 1, cv2.LINE_AA)
            cv2.putText(out, str(line.index), (b[0] + 4, b[1] + 4), font, 0.5, (0, 0, 255), 1,
                        cv2.LINE_AA)
    if isinstance(layout, CardTableLayout) and board is None:
        cv2.rectangle(out, (col(0), row(layout.depth_mm)), (col(layout.width_mm), row(0)),
                      (0, 200, 255), 1, cv2.LINE_AA)
    lens = "lens corrected" if calibration.camera_matrix is not None else "no lens correction"
    header = (f"{calibration.frame} frame, error {calibration.error_mm:.2f} mm RMS, {lens}; "
              f"grid 10 mm, bold 50 mm")
    cv2.rectangle(out, (0, 0), (width, 22), (0, 0, 0), -1)
    cv2.putText(out, header, (6, 16), font, 0.5, (255, 255, 255), 1, cv2.LINE_AA)
    return np.asarray(out, dtype=np.uint8)
