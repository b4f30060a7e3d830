"""The printable marker sheets: ChArUco boards at true scale, one id range per sheet.

Sheet frame: millimetres, origin at the lower-left corner of the chequered pattern as the
page is read, x to the right, y up the page. Every sheet has the same pattern size, so a
sheet is known by its index (its markers' ids tell which).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Final, Literal

import cv2
import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
Image = npt.NDArray[np.uint8]
Paper = Literal["a4", "letter"]

#: Paper sizes in millimetres (width, height), portrait.
PAPERS: Final[dict[str, tuple[float, float]]] = {"a4": (210.0, 297.0), "letter": (215.9, 279.4)}
MM_PER_INCH: Final = 25.4
RULER_MM: Final = 100


@dataclass(frozen=True)
class SheetDesign:
    """The ChArUco pattern printed on every sheet (sizes in mm)."""

    squares_x: int = 5
    squares_y: int = 7
    square_mm: float = 32.0
    marker_mm: float = 24.0
    dictionary: str = "DICT_4X4_250"

    @property
    def markers_per_sheet(self) -> int:
        return (self.squares_x * self.squares_y) // 2

    @property
    def width_mm(self) -> float:
        return self.squares_x * self.square_mm

    @property
    def height_mm(self) -> float:
        return self.squares_y * self.square_mm

    @property
    def max_sheets(self) -> int:
        size = int(self.dictionary.rsplit("_", 1)[1])
        return size // self.markers_per_sheet

    @cached_property
    def aruco_dictionary(self) -> cv2.aruco.Dictionary:
        return cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, self.dictionary))

    def first_id(self, sheet: int) -> int:
        return sheet * self.markers_per_sheet

    def sheet_of(self, marker_id: int) -> int:
        return marker_id // self.markers_per_sheet

    def board(self, sheet: int) -> cv2.aruco.CharucoBoard:
        first = self.first_id(sheet)
        ids = np.arange(first, first + self.markers_per_sheet, dtype=np.int32)
        return cv2.aruco.CharucoBoard((self.squares_x, self.squares_y), self.square_mm,
                                      self.marker_mm, self.aruco_dictionary, ids)

    def to_sheet_frame(self, board_points: FloatArray) -> FloatArray:
        """OpenCV board coordinates (origin top-left, y down) -> sheet frame (y up)."""
        pts = np.asarray(board_points, dtype=np.float64).reshape(-1, 3)[:, :2]
        return np.stack([pts[:, 0], self.height_mm - pts[:, 1]], axis=1)

    @cached_property
    def corner_points(self) -> FloatArray:
        """Sheet-frame mm of every inner chessboard corner, indexed by ChArUco corner id."""
        return self.to_sheet_frame(np.asarray(self.board(0).getChessboardCorners()))

    def marker_corners(self, sheet: int) -> dict[int, FloatArray]:
        """Sheet-frame mm of each marker's four corners, by marker id."""
        board = self.board(sheet)
        ids = np.asarray(board.getIds()).ravel()
        return {int(i): self.to_sheet_frame(np.asarray(pts))
                for i, pts in zip(ids, board.getObjPoints(), strict=True)}


DEFAULT_DESIGN: Final = SheetDesign()


def mm_to_px(mm: float, dpi: float) -> int:
    return round(mm * dpi / MM_PER_INCH)


@dataclass(frozen=True)
class Page:
    """A rendered page and where its pattern lies: ``pattern_box`` = (left, top, w, h) px."""

    image: Image
    dpi: float
    pattern_box: tuple[int, int, int, int]


def render_page(design: SheetDesign, sheet: int, paper: Paper, dpi: float = 300,
                sheets_total: int = 1) -> Page:
    """One printable page (grey, white paper) at ``dpi``, pattern centred, with a ruler."""
    page_w, page_h = PAPERS[paper]
    width, height = mm_to_px(page_w, dpi), mm_to_px(page_h, dpi)
    page = np.full((height, width), 255, np.uint8)
    square_px = design.square_mm * dpi / MM_PER_INCH
    board_w = round(design.squares_x * square_px)
    board_h = round(design.squares_y * square_px)
    pattern = design.board(sheet).generateImage((board_w, board_h), marginSize=0, borderBits=1)
    left = (width - board_w) // 2
    top = mm_to_px(22.0, dpi)
    page[top:top + board_h, left:left + board_w] = pattern

    def text(line: str, row_mm: float, scale: float = 1.0) -> None:
        cv2.putText(page, line, (mm_to_px(12.0, dpi), mm_to_px(row_mm, dpi)),
                    cv2.FONT_HERSHEY_SIMPLEX, scale * dpi / 300, 0, max(1, round(dpi / 150)),
                    cv2.LINE_AA)

    text(f"Tabletop Referee marker sheet {sheet + 1} of {sheets_total}"
         f"  ({paper.upper()}, ids {design.first_id(sheet)}-"
         f"{design.first_id(sheet) + design.markers_per_sheet - 1})", 12.0)
    text("Print at 100% (no 'fit to page'). Lay flat, this title away from you.", 17.5,
         0.8)
    below = (top + board_h) * MM_PER_INCH / dpi
    text(f"Check: each chequer square must measure {design.square_mm:.1f} mm and the ruler "
         f"{RULER_MM} mm.", below + 9.0, 0.8)
    # The ruler: a 100 mm bar with millimetre ticks, longer every 5 and 10 mm.
    x0 = (width - mm_to_px(RULER_MM, dpi)) // 2
    base = mm_to_px(below + 24.0, dpi)
    cv2.line(page, (x0, base), (x0 + mm_to_px(RULER_MM, dpi), base), 0, max(1, round(dpi / 150)))
    for mm in range(RULER_MM + 1):
        tick = 6.0 if mm % 10 == 0 else 4.0 if mm % 5 == 0 else 2.5
        x = x0 + mm_to_px(mm, dpi)
        cv2.line(page, (x, base), (x, base - mm_to_px(tick, dpi)), 0, max(1, round(dpi / 300)))
        if mm % 10 == 0:
            cv2.putText(page, str(mm // 10), (x - mm_to_px(1.0, dpi), base + mm_to_px(4.0, dpi)),
                        cv2.FONT_HERSHEY_SIMPLEX, 0.6 * dpi / 300, 0, max(1, round(dpi / 300)),
                        cv2.LINE_AA)
    text("cm", below + 28.0, 0.6)
    return Page(page, dpi, (left, top, board_w, board_h))
