"""From one camera frame to a calibration: markers -> lens and plane -> board -> checks.

Nothing here writes files; ``calibrate_frame`` returns a validated ``Calibration`` and a
preview image, or raises ``CalibrationError`` with the reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from referee.calibration.detect import MarkerDetection, detect_sheets, sharpness
from referee.calibration.errors import CalibrationError
from referee.calibration.layouts import (
    CardTableLayout,
    GridBoardLayout,
    PiecepackLayout,
)
from referee.calibration.locate import LocatedBoard, locate_grid, locate_piecepack
from referee.calibration.model import (
    BoardRecord,
    Calibration,
    Frame,
    LineRecord,
    MarkerRecord,
    matrix3,
)
from referee.calibration.preview import render_preview
from referee.calibration.rectify import PlaneMap
from referee.calibration.sheet import DEFAULT_DESIGN, SheetDesign
from referee.calibration.solve import MAX_SHEET_RESIDUAL_PX, Lens, solve_plane

FloatArray = npt.NDArray[np.float64]
Image = npt.NDArray[np.uint8]
AnyLayout = CardTableLayout | PiecepackLayout | GridBoardLayout

DEFAULT_MAX_ERROR_MM: Final = 1.0
MIN_MARKERS: Final = 4
MIN_CORNERS: Final = 12
#: A sheet showing less than this share of its corners is partly covered: refused.
MIN_SHEET_SHARE: Final = 2 / 3
#: Sheets whose own planes differ by more than this are not lying on one table.
MAX_SHEET_TILT_DEG: Final = 4.0
#: Below this Laplacian variance a frame without markers is called blurred.
BLUR_SHARPNESS: Final = 60.0


@dataclass(frozen=True)
class CalibrationOptions:
    game: str | None = None
    layout: AnyLayout | None = None
    lens: Lens | None = None  # a lens calibrated before: kept fixed
    plane: Calibration | None = None  # a plane calibrated before (camera not moved)
    max_error_mm: float = DEFAULT_MAX_ERROR_MM
    board_correction: tuple[float, float, float] = (0.0, 0.0, 0.0)  # dx, dy mm, turn deg
    design: SheetDesign = DEFAULT_DESIGN
    source: str = ""


@dataclass(frozen=True)
class CalibrationResult:
    calibration: Calibration
    preview: Image
    notes: tuple[str, ...]


def check_frame(image: object) -> Image:
    if not isinstance(image, np.ndarray) or image.ndim not in (2, 3) or image.size == 0:
        raise CalibrationError("the source is not an image")
    return np.asarray(image, dtype=np.uint8)


def plane_from_markers(detection: MarkerDetection, image_size: tuple[int, int],
                       options: CalibrationOptions, needs_origin_sheet: bool,
                       ) -> tuple[PlaneMap, float, float, int, tuple[MarkerRecord, ...],
                                  list[str]]:
    """Lens and plane from the sheets; refuses too few, covered or tilted sheets."""
    notes: list[str] = []
    if detection.marker_count < MIN_MARKERS or detection.corner_count < MIN_CORNERS:
        raise CalibrationError(
            f"too few markers: found {detection.marker_count} markers and "
            f"{detection.corner_count} chessboard corners (need {MIN_MARKERS} markers and "
            f"{MIN_CORNERS} corners); lay a printed marker sheet flat in view")
    design = options.design
    total = (design.squares_x - 1) * (design.squares_y - 1)
    for view in detection.sheets:
        if view.count < MIN_SHEET_SHARE * total:
            raise CalibrationError(
                f"marker sheet {view.sheet + 1} is partly covered or out of view ({view.count} "
                f"of {total} corners seen); uncover it or move it fully into view")
    sheets = [v.sheet for v in detection.sheets]
    if needs_origin_sheet and 0 not in sheets:
        raise CalibrationError("marker sheet 1 (it sets the table origin) is not in view")
    reference = 0 if 0 in sheets else min(sheets)
    estimate = options.lens is None and len(detection.sheets) >= 2
    if options.lens is None and not estimate:
        notes.append("one sheet only: no lens correction (spread 3-4 sheets over the area "
                     "for millimetre accuracy at the edges)")
    width, height = image_size
    solution = solve_plane(detection.sheets, (width, height), reference=reference,
                           lens=options.lens, estimate_lens=estimate)
    for placement in solution.placements:
        if placement.tilt_deg > MAX_SHEET_TILT_DEG:
            raise CalibrationError(
                f"markers not coplanar: sheet {placement.sheet + 1} is tilted "
                f"{placement.tilt_deg:.0f} degrees from sheet {solution.placements[0].sheet + 1}"
                " (is it flat on the table?)")
        if placement.residual_px > MAX_SHEET_RESIDUAL_PX:
            raise CalibrationError(
                f"markers not coplanar: sheet {placement.sheet + 1} is "
                f"{placement.residual_px:.1f} px off the table plane the others share "
                "(is it flat?)")
    if solution.error_mm > options.max_error_mm:
        raise CalibrationError(f"reprojection error {solution.error_mm:.2f} mm is above the "
                               f"limit of {options.max_error_mm:.2f} mm")
    plane = PlaneMap(solution.lens, solution.image_to_frame, (width, height))
    markers = []
    by_sheet = {p.sheet: p for p in solution.placements}
    for view in detection.sheets:
        placement = by_sheet[view.sheet]
        local = design.marker_corners(view.sheet)
        for marker_id in sorted(view.markers):
            pts = placement.to_frame(local[marker_id])
            markers.append(MarkerRecord(id=marker_id, corners_mm=tuple(
                (float(x), float(y)) for x, y in pts)))
    return (plane, solution.error_mm, solution.rms_px, solution.corner_count,
            tuple(markers), notes)


def _board_record(board: LocatedBoard, correction: tuple[float, float, float]) -> BoardRecord:
    pose = board.pose
    kind = "piecepack" if board.kind == "piecepack" else "grid"
    return BoardRecord(
        kind=kind,
        pose_in_table=(pose.x, pose.y, math.degrees(pose.angle_rad)),
        pitch_mm=board.pitch_mm,
        tiles_per_side=board.tiles_per_side,
        lines=tuple(LineRecord(index=ln.index, y_start=ln.y_start, y_end=ln.y_end,
                               x_end=ln.x_end, residual_mm=ln.residual_mm)
                    for ln in board.lines),
        residual_mm=board.residual_mm,
        corrected_by=correction,
        features_mm=tuple((float(x), float(y)) for x, y in board.features_mm),
    )


def calibrate_frame(image: Image, options: CalibrationOptions) -> CalibrationResult:
    """Calibrate from one frame: markers if any (else ``options.plane``), then the board."""
    image = check_frame(image)
    layout = options.layout
    detection = detect_sheets(image, options.design)
    notes: list[str] = []
    height, width = image.shape[:2]
    if detection.marker_count == 0 and options.plane is not None:
        earlier = options.plane
        if tuple(earlier.image_size) != (width, height):
            raise CalibrationError(f"the earlier calibration is for {earlier.image_size[0]}x"
                                   f"{earlier.image_size[1]} images, this one is "
                                   f"{width}x{height}")
        if earlier.board is not None:
            raise CalibrationError("the earlier calibration is in a board frame; give a "
                                   "table calibration made with the marker sheets")
        plane, error_mm, rms_px = earlier.plane, earlier.error_mm, earlier.rms_px
        corners, markers = earlier.corner_count, earlier.markers
        notes.append("no markers in view: reusing the earlier table calibration")
    elif detection.marker_count == 0:
        sharp = sharpness(image)
        if sharp < BLUR_SHARPNESS:
            raise CalibrationError(f"no markers found and the frame is blurred (sharpness "
                                   f"{sharp:.0f}, want {BLUR_SHARPNESS:.0f}+); focus the camera "
                                   "or hold it still")
        raise CalibrationError("no markers found; lay the printed marker sheets flat in view "
                               "(referee markers prints them)")
    else:
        plane, error_mm, rms_px, corners, markers, more = plane_from_markers(
            detection, (width, height), options, needs_origin_sheet=not isinstance(
                layout, PiecepackLayout | GridBoardLayout))
        notes += more
    frame: Frame = "table"
    board_record = None
    if isinstance(layout, PiecepackLayout | GridBoardLayout):
        located = (locate_piecepack(image, plane, layout) if isinstance(layout, PiecepackLayout)
                   else locate_grid(image, plane, layout))
        dx, dy, turn = options.board_correction
        if options.board_correction != (0.0, 0.0, 0.0):
            located = _corrected(located, dx, dy, math.radians(turn))
        board_record = _board_record(located, options.board_correction)
        frame = "piecepack" if isinstance(layout, PiecepackLayout) else "grid"
        to_board = located.pose.table_to_board()
        plane = plane.then(to_board)
        markers = tuple(_moved_marker(m, to_board) for m in markers)
        if isinstance(layout, PiecepackLayout) and located.tiles_per_side != \
                layout.tiles_per_side:
            notes.append(f"found {located.tiles_per_side} tiles per side (Short Shove: "
                         f"--set tiles_per_side={located.tiles_per_side})")
    lens = plane.lens
    calibration = Calibration(
        game=options.game, frame=frame, image_size=(width, height),
        image_to_table=matrix3(plane.image_to_table),
        camera_matrix=matrix3(lens.camera_matrix) if lens else None,
        dist_coeffs=tuple(float(v) for v in lens.dist_coeffs) if lens else None,
        error_mm=error_mm, rms_px=rms_px, corner_count=corners, markers=markers,
        board=board_record, source=options.source,
    )
    return CalibrationResult(calibration, render_preview(image, calibration, layout),
                             tuple(notes))


def _corrected(board: LocatedBoard, dx: float, dy: float, turn: float) -> LocatedBoard:
    """The user's correction: the board frame moved by (dx, dy) mm and turned ``turn`` rad,
    in its own frame; measured lines are re-expressed in the moved frame."""
    pose = board.pose.moved(dx, dy, turn)
    old_to_new = pose.table_to_board() @ board.pose.board_to_table()
    lines = []
    for ln in board.lines:
        ends = np.array([[0.0, ln.y_start, 1.0], [ln.x_end, ln.y_end, 1.0]]) @ old_to_new.T
        slope = (ends[1, 1] - ends[0, 1]) / (ends[1, 0] - ends[0, 0])
        y0 = ends[0, 1] - slope * ends[0, 0]
        lines.append(type(ln)(ln.index, float(y0), float(y0 + slope * ln.x_end), ln.x_end,
                              ln.residual_mm))
    feats = np.column_stack([board.features_mm, np.ones(len(board.features_mm))]) @ old_to_new.T
    return LocatedBoard(board.kind, pose, board.pitch_mm, tuple(lines), board.tiles_per_side,
                        board.residual_mm, feats[:, :2])


def _moved_marker(marker: MarkerRecord, to_board: FloatArray) -> MarkerRecord:
    pts = np.column_stack([np.array(marker.corners_mm), np.ones(4)]) @ to_board.T
    return MarkerRecord(id=marker.id, corners_mm=tuple(
        (float(x), float(y)) for x, y in pts[:, :2]))
