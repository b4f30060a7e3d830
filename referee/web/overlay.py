"""Drawing on camera frames: tracked outlines and identities, bed lines or the grid."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import cv2
import numpy as np

from referee.calibration.model import Calibration
from referee.pipeline.events import TrackedObject
from referee.web.protocol import Image

COLOURS: Final = {"card": (80, 220, 255), "coin": (255, 200, 60), "token": (120, 255, 120)}
GRID_ROWS, GRID_COLS = 9, 7


def board_lines_mm(calibration: Calibration | None) -> list[tuple[tuple[float, float],
                                                                  tuple[float, float]]]:
    """Segments (table mm) to draw for the board: piecepack bed lines or the grid."""
    if calibration is None or calibration.board is None:
        return []
    board = calibration.board
    if board.kind == "piecepack":
        return [((0.0, line.y_start), (line.x_end, line.y_end)) for line in board.lines]
    p = board.pitch_mm
    rows = [((0.0, r * p), (GRID_COLS * p, r * p)) for r in range(GRID_ROWS + 1)]
    cols = [((c * p, 0.0), (c * p, GRID_ROWS * p)) for c in range(GRID_COLS + 1)]
    return rows + cols


def draw(image: Image, objects: Sequence[TrackedObject], calibration: Calibration | None,
         highlight: str | None = None) -> Image:
    out = image.copy()
    if calibration is not None:
        plane = calibration.plane
        for a, b in board_lines_mm(calibration):
            pts = np.linspace(a, b, 12)
            px = plane.to_pixels(pts).round().astype(np.int32)
            cv2.polylines(out, [px.reshape(-1, 1, 2)], False, (60, 60, 240), 1, cv2.LINE_AA)
    for obj in objects:
        if len(obj.outline_px) < 3:
            continue
        poly = np.asarray(obj.outline_px, dtype=np.float64).round().astype(np.int32)
        colour = (40, 40, 255) if obj.uid == highlight else COLOURS.get(obj.kind, (255, 255, 255))
        cv2.polylines(out, [poly.reshape(-1, 1, 2)], True, colour, 2, cv2.LINE_AA)
        if obj.kind == "token":
            continue
        x, y = poly.mean(axis=0)
        text = obj.label
        (w, h), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.5, 1)
        org = (int(x - w / 2), int(y + h / 2))
        cv2.rectangle(out, (org[0] - 3, org[1] - h - 3), (org[0] + w + 3, org[1] + 4),
                      (30, 30, 30), -1)
        cv2.putText(out, text, org, cv2.FONT_HERSHEY_SIMPLEX, 0.5, colour, 1, cv2.LINE_AA)
    return out


def jpeg(image: Image, quality: int = 80) -> bytes:
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError("JPEG encoding failed")
    return bytes(data.tobytes())
