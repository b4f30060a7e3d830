"""Board layouts, one per game, read from the JSON data files in the repository's
``calibration/`` folder (or any path the user gives). Sizes in millimetres."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from referee.calibration.errors import CalibrationError

#: The repository's layout folder (an editable install finds it beside the package).
LAYOUT_DIR: Final = Path(__file__).resolve().parents[2] / "calibration"

Point = tuple[float, float]
Square = tuple[int, int]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Seat(_Frozen):
    """Where a player sits: a point on the table edge and the direction they face (deg)."""

    x: float
    y: float
    facing_deg: float


class CardTableLayout(_Frozen):
    """The card-table area: x in [0, width], y in [0, depth], seats by player count."""

    kind: Literal["card_table"] = "card_table"
    width_mm: float = Field(gt=0)
    depth_mm: float = Field(gt=0)
    seats: dict[str, tuple[Seat, ...]]

    def seats_for(self, players: int) -> tuple[Seat, ...]:
        try:
            return self.seats[str(players)]
        except KeyError:
            raise CalibrationError(f"the card-table layout has no seating for {players} "
                                   "players") from None


class PiecepackLayout(_Frozen):
    """The Shove piecepack board: side columns of tiles, a row of tiles across the top."""

    kind: Literal["piecepack"] = "piecepack"
    tile_mm: float = Field(50.8, gt=0)
    gap_mm: float = Field(1.0, ge=0, le=10)
    tiles_per_side: int = Field(9, ge=3, le=9)
    tiles_across: int = Field(6, ge=3)

    @property
    def pitch_mm(self) -> float:
        return self.tile_mm + self.gap_mm

    @property
    def lines(self) -> int:
        return self.tiles_per_side - 1

    @property
    def inner_width_mm(self) -> float:
        return (self.tiles_across - 2) * self.pitch_mm

    def tile_cells(self) -> list[tuple[int, int]]:
        """(column, row) of every tile; column -1 is the left side, row 0 the front."""
        right = self.tiles_across - 2
        cells = [(c, r) for r in range(self.tiles_per_side) for c in (-1, right)]
        cells += [(c, self.tiles_per_side) for c in range(-1, right + 1)]
        return cells


class GridBoardLayout(_Frozen):
    """The Shove grid board: ``rows`` x ``cols`` squares; row 0 (red's side) at the front."""

    kind: Literal["grid"] = "grid"
    rows: int = Field(9, ge=2)
    cols: int = Field(7, ge=2)
    square_mm: float = Field(30.0, gt=0)
    line_mm: float = Field(1.5, gt=0)
    victory: Square = (0, 3)
    wall_edges: tuple[Literal["left", "right", "top", "bottom"], ...] = ("left", "right")
    walls: tuple[tuple[Square, Square], ...] = ()

    @property
    def width_mm(self) -> float:
        return self.cols * self.square_mm

    @property
    def height_mm(self) -> float:
        return self.rows * self.square_mm


Layout = Annotated[CardTableLayout | PiecepackLayout | GridBoardLayout,
                   Field(discriminator="kind")]
_LAYOUT: Final[TypeAdapter[CardTableLayout | PiecepackLayout | GridBoardLayout]] = \
    TypeAdapter(Layout)

#: The layout file for each game (in ``LAYOUT_DIR``).
GAME_LAYOUTS: Final = {
    "shove-piggy-shove": "card-table.json",
    "push-out-the-pig": "card-table.json",
    "slapstick": "card-table.json",
    "shove-piecepack": "piecepack.json",
    "shove": "grid-board.json",
}


def load_layout(path: Path) -> CardTableLayout | PiecepackLayout | GridBoardLayout:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return _LAYOUT.validate_python(data)
    except OSError as error:
        raise CalibrationError(f"cannot read layout {path}: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise CalibrationError(f"layout {path} is not JSON: {error.msg}") from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise CalibrationError(f"layout {path}: {where}: {first['msg']}") from None


def layout_for_game(game: str) -> CardTableLayout | PiecepackLayout | GridBoardLayout:
    if game not in GAME_LAYOUTS:
        raise CalibrationError(f"unknown game {game!r}")
    return load_layout(LAYOUT_DIR / GAME_LAYOUTS[game])
