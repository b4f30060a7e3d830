"""Boards and marker sheets drawn onto a top-down ``TableCanvas``, with their ground truth.

Each ``draw_*`` function paints onto ``canvas.image`` in place and returns the exact table
millimetres of what it drew, for benchmarks and tests (and the scene renderer) to compare
against.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from referee.calibration.layouts import GridBoardLayout, PiecepackLayout
from referee.calibration.sheet import DEFAULT_DESIGN, SheetDesign, render_page
from synth.camera import TableCanvas

FloatArray = npt.NDArray[np.float64]


def _rotation(angle_deg: float) -> FloatArray:
    a = math.radians(angle_deg)
    return np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])


def _to_table(origin_mm: tuple[float, float], angle_deg: float, local: FloatArray) -> FloatArray:
    pts = np.asarray(local, dtype=np.float64).reshape(-1, 2)
    return np.asarray(pts @ _rotation(angle_deg).T + np.asarray(origin_mm), dtype=np.float64)


def _paint_affine(canvas: TableCanvas, source: npt.NDArray[np.uint8],
                  source_to_canvas: FloatArray) -> None:
    """Paint ``source`` (grey or BGR) through a 2 x 3 affine map onto the canvas."""
    height, width = canvas.image.shape[:2]
    src = source if source.ndim == 3 else cv2.cvtColor(source, cv2.COLOR_GRAY2BGR)
    warped = cv2.warpAffine(src, source_to_canvas, (width, height), flags=cv2.INTER_LINEAR)
    mask = cv2.warpAffine(np.full(src.shape[:2], 255, np.uint8), source_to_canvas,
                          (width, height), flags=cv2.INTER_LINEAR)
    alpha = (mask.astype(np.float32) / 255.0)[..., None]
    blended = canvas.image.astype(np.float32) * (1 - alpha) + warped.astype(np.float32) * alpha
    canvas.image[...] = np.clip(blended + 0.5, 0, 255).astype(np.uint8)


@dataclass(frozen=True)
class DrawnSheet:
    """Ground truth of a drawn sheet: table mm of its ChArUco corners and marker corners."""

    sheet: int
    corners_mm: FloatArray  # by ChArUco corner id
    markers_mm: dict[int, FloatArray]
    origin_mm: tuple[float, float]
    angle_deg: float


def draw_marker_sheet(canvas: TableCanvas, sheet: int, origin_mm: tuple[float, float],
                      angle_deg: float, *, design: SheetDesign = DEFAULT_DESIGN,
                      paper: str = "a4") -> DrawnSheet:
    """Lay printed sheet number ``sheet`` (0-based) on the table: its sheet frame's origin (the
    pattern's lower-left corner) at ``origin_mm``, its x axis turned ``angle_deg`` from the
    table's x axis."""
    dpi = canvas.px_per_mm * 25.4 * 1.5
    page = render_page(design, sheet, "letter" if paper == "letter" else "a4", dpi)
    left, top, board_w, _ = page.pattern_box
    k = board_w / design.width_mm  # page px per sheet mm, exactly as drawn
    # page px -> sheet mm: x = (col - left) / k, y = H - (row - top) / k (pixel centres at +0.5)
    page_to_sheet = np.array([[1 / k, 0, -(left - 0.5) / k],
                              [0, -1 / k, design.height_mm + (top - 0.5) / k],
                              [0, 0, 1]])
    rot = _rotation(angle_deg)
    sheet_to_table = np.eye(3)
    sheet_to_table[:2, :2] = rot
    sheet_to_table[:2, 2] = origin_mm
    s = canvas.px_per_mm
    table_to_canvas = np.array([[s, 0, -canvas.x0 * s], [0, -s, canvas.y_top * s], [0, 0, 1]])
    total = table_to_canvas @ sheet_to_table @ page_to_sheet
    _paint_affine(canvas, page.image, total[:2])
    corners = _to_table(origin_mm, angle_deg, design.corner_points)
    markers = {i: _to_table(origin_mm, angle_deg, pts)
               for i, pts in design.marker_corners(sheet).items()}
    return DrawnSheet(sheet, corners, markers, origin_mm, angle_deg)


def _board_to_canvas(canvas: TableCanvas, origin_mm: tuple[float, float],
                     angle_deg: float) -> FloatArray:
    """3 x 3: board-frame mm -> canvas pixel (column, row)."""
    s = canvas.px_per_mm
    table_to_canvas = np.array([[s, 0, -canvas.x0 * s], [0, -s, canvas.y_top * s], [0, 0, 1]])
    board_to_table = np.eye(3)
    board_to_table[:2, :2] = _rotation(angle_deg)
    board_to_table[:2, 2] = origin_mm
    return table_to_canvas @ board_to_table


def _fill_polygon(canvas: TableCanvas, to_canvas: FloatArray, corners: FloatArray,
                  colour: tuple[int, int, int]) -> None:
    pts = np.column_stack([corners, np.ones(len(corners))]) @ to_canvas.T
    shift = 4  # sub-pixel vertices: 1/16 px
    poly = np.round(pts[:, :2] * (1 << shift)).astype(np.int32)
    cv2.fillPoly(canvas.image, [poly], colour, cv2.LINE_AA, shift)


def _rect(x0: float, y0: float, x1: float, y1: float) -> FloatArray:
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float64)


@dataclass(frozen=True)
class DrawnPiecepack:
    """Ground truth of a drawn piecepack board: the board frame's place on the table and each
    line (seam k between side tiles) as two table points, at board x = 0 and x = inner width."""

    origin_mm: tuple[float, float]
    angle_deg: float
    pitch_mm: float
    lines_mm: dict[int, FloatArray]  # k -> 2 x 2


def draw_piecepack_board(canvas: TableCanvas, layout: PiecepackLayout, rng: np.random.Generator,
                         *, origin_mm: tuple[float, float] = (0.0, 0.0),
                         angle_deg: float = 0.0, jitter_mm: float = 0.2) -> DrawnPiecepack:
    """Face-down tiles (quarter-cross backs) in the Shove layout, board frame placed at
    ``origin_mm`` turned ``angle_deg``; each tile is nudged by up to ``jitter_mm``."""
    to_canvas = _board_to_canvas(canvas, origin_mm, angle_deg)
    p, t = layout.pitch_mm, layout.tile_mm
    wood = tuple(int(v) for v in rng.integers(150, 215, 3))
    wood = (wood[0] - 30, wood[1] - 5, wood[2] + 20)
    edge = tuple(max(0, v - 70) for v in wood)
    ink = tuple(int(v) for v in rng.integers(20, 90, 3))
    offsets: dict[tuple[int, int], FloatArray] = {}
    for col, row in layout.tile_cells():
        nudge = rng.uniform(-jitter_mm, jitter_mm, 2)
        offsets[(col, row)] = nudge
        x0 = col * p + (p - t) / 2 + nudge[0]
        y0 = row * p + (p - t) / 2 + nudge[1]
        _fill_polygon(canvas, to_canvas, _rect(x0, y0, x0 + t, y0 + t), edge)  # bevel
        _fill_polygon(canvas, to_canvas, _rect(x0 + 0.6, y0 + 0.6, x0 + t - 0.6, y0 + t - 0.6),
                      wood)
        half, w = t / 2, 0.9  # the quarter cross, inset from the edges
        _fill_polygon(canvas, to_canvas, _rect(x0 + half - w, y0 + 4, x0 + half + w, y0 + t - 4),
                      ink)
        _fill_polygon(canvas, to_canvas, _rect(x0 + 4, y0 + half - w, x0 + t - 4, y0 + half + w),
                      ink)
    board_to_table = np.eye(3)
    board_to_table[:2, :2] = _rotation(angle_deg)
    board_to_table[:2, 2] = origin_mm
    lines = {}
    width = layout.inner_width_mm
    for k in range(1, layout.lines + 1):
        # The seam's centre line: halfway between the tiles either side, in each column.
        left = (offsets[(-1, k - 1)][1] + offsets[(-1, k)][1]) / 2
        right_col = layout.tiles_across - 2
        right = (offsets[(right_col, k - 1)][1] + offsets[(right_col, k)][1]) / 2
        ends = np.array([[0.0, k * p + left, 1.0], [width, k * p + right, 1.0]])
        lines[k] = (ends @ board_to_table.T)[:, :2]
    return DrawnPiecepack(origin_mm, angle_deg, p, lines)


@dataclass(frozen=True)
class DrawnGrid:
    """Ground truth of a drawn grid board: its frame on the table and its grid corners."""

    origin_mm: tuple[float, float]
    angle_deg: float
    corners_mm: FloatArray  # (rows + 1) x (cols + 1) x 2, table mm


def draw_grid_board(canvas: TableCanvas, layout: GridBoardLayout, rng: np.random.Generator,
                    *, origin_mm: tuple[float, float] = (0.0, 0.0),
                    angle_deg: float = 0.0) -> DrawnGrid:
    """The Shove board: a printed grid of ``square_mm`` squares with a margin, a black victory
    square and thick walls, board frame at ``origin_mm`` turned ``angle_deg``."""
    to_canvas = _board_to_canvas(canvas, origin_mm, angle_deg)
    s, w = layout.square_mm, layout.line_mm / 2
    width, height = layout.width_mm, layout.height_mm
    paper = tuple(int(v) for v in rng.integers(200, 245, 3))
    ink = tuple(int(v) for v in rng.integers(10, 60, 3))
    margin = 12.0
    _fill_polygon(canvas, to_canvas, _rect(-margin, -margin, width + margin, height + margin),
                  paper)
    for c in range(layout.cols + 1):
        _fill_polygon(canvas, to_canvas, _rect(c * s - w, -w, c * s + w, height + w), ink)
    for r in range(layout.rows + 1):
        _fill_polygon(canvas, to_canvas, _rect(-w, r * s - w, width + w, r * s + w), ink)
    vr, vc = layout.victory
    _fill_polygon(canvas, to_canvas, _rect(vc * s, vr * s, (vc + 1) * s, (vr + 1) * s), (0, 0, 0))
    wall = (40, 40, 160)
    thick = 3.0
    edges = {"left": _rect(-thick, -w, 0, height + w),
             "right": _rect(width, -w, width + thick, height + w),
             "bottom": _rect(-w, -thick, width + w, 0),
             "top": _rect(-w, height, width + w, height + thick)}
    for name in layout.wall_edges:
        _fill_polygon(canvas, to_canvas, edges[name], wall)
    for (r1, c1), (r2, c2) in layout.walls:
        if r1 == r2:  # side by side: a wall along the column line between them
            x = max(c1, c2) * s
            _fill_polygon(canvas, to_canvas, _rect(x - thick / 2, r1 * s, x + thick / 2,
                                                   (r1 + 1) * s), wall)
        else:
            y = max(r1, r2) * s
            _fill_polygon(canvas, to_canvas, _rect(c1 * s, y - thick / 2, (c1 + 1) * s,
                                                   y + thick / 2), wall)
    gx, gy = np.meshgrid(np.arange(layout.cols + 1) * s, np.arange(layout.rows + 1) * s)
    board = np.stack([gx, gy], axis=-1).reshape(-1, 2)
    table = board @ _rotation(angle_deg).T + np.asarray(origin_mm)
    return DrawnGrid(origin_mm, angle_deg,
                     table.reshape(layout.rows + 1, layout.cols + 1, 2))


def felt_canvas(bounds: tuple[float, float, float, float], rng: np.random.Generator,
                px_per_mm: float = 4.0) -> TableCanvas:
    """A plain table cloth (a dark random colour with a little texture) covering ``bounds``
    = (x_min, y_min, x_max, y_max) mm."""
    x_min, y_min, x_max, y_max = bounds
    width = int((x_max - x_min) * px_per_mm)
    height = int((y_max - y_min) * px_per_mm)
    base = rng.integers(30, 110, 3).astype(np.int16)
    noise = rng.normal(0, 4, (height // 4 + 1, width // 4 + 1, 1))
    noise = cv2.resize(noise.astype(np.float32), (width, height))[..., None]
    image = np.clip(base[None, None, :] + noise, 0, 255).astype(np.uint8)
    return TableCanvas(image, px_per_mm, x_min, y_max)


# Calibration scenes with exact ground truth (tests and bench/calibration.py).

#: The table area the benchmark measures over (mm), and the canvas around it.
AREA = (600.0, 400.0)
CANVAS_BOUNDS = (-500.0, -450.0, 1100.0, 900.0)
#: Four sheets at the corners of the area: (origin of the sheet frame, turn in degrees).
#: Sheet 1 lies square at the front left, so the table frame is its sheet frame; the back
#: two lie sideways so the papers do not cover each other's patterns.
SHEET_PLACES = (((0.0, 0.0), 0.0), ((440.0, 0.0), 1.5), ((0.0, 410.0), -90.0),
                ((600.0, 250.0), 91.0))


@dataclass(frozen=True)
class SheetScene:
    canvas: TableCanvas
    sheets: tuple[DrawnSheet, ...]


def sheet_scene(rng: np.random.Generator, count: int = 4,
                px_per_mm: float = 3.0) -> SheetScene:
    canvas = felt_canvas(CANVAS_BOUNDS, rng, px_per_mm)
    drawn = [draw_marker_sheet(canvas, i, *SHEET_PLACES[i]) for i in reversed(range(count))]
    return SheetScene(canvas, tuple(reversed(drawn)))


def piecepack_scene(rng: np.random.Generator, layout: PiecepackLayout,
                    px_per_mm: float = 3.0) -> tuple[TableCanvas, DrawnPiecepack]:
    """The board lying across the area (its y along the table's x), slightly turned."""
    canvas = felt_canvas(CANVAS_BOUNDS, rng, px_per_mm)
    p = layout.pitch_mm
    length = (layout.tiles_per_side + 1) * p
    drawn = draw_piecepack_board(
        canvas, layout, rng, origin_mm=(300.0 - length / 2, 200.0 + 2 * p),
        angle_deg=float(rng.uniform(-93, -87)))
    return canvas, drawn


def grid_scene(rng: np.random.Generator, layout: GridBoardLayout,
               px_per_mm: float = 3.0) -> tuple[TableCanvas, DrawnGrid]:
    canvas = felt_canvas(CANVAS_BOUNDS, rng, px_per_mm)
    drawn = draw_grid_board(canvas, layout, rng,
                            origin_mm=(300.0 - layout.width_mm / 2, 200 - layout.height_mm / 2),
                            angle_deg=float(rng.uniform(-10, 10)))
    return canvas, drawn
