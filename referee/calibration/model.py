"""The calibration file: a versioned, validated JSON document (pydantic), written whole.

Contract fields (``referee calibrate``): ``version``, ``image_size`` [w, h],
``image_to_table`` (3 x 3, undistorted image px -> table mm), ``camera_matrix`` and
``dist_coeffs`` (null without a lens calibration), ``error_mm``. The rest tells the pipeline
which frame the millimetres are in and what was found, for drift checks, and the size of
the cards played there (``card_mm``).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Final, Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from referee.calibration.errors import CalibrationError
from referee.calibration.rectify import PlaneMap
from referee.calibration.solve import Lens
from referee.cards import CARD_MM

FloatArray = npt.NDArray[np.float64]
SCHEMA_VERSION: Final = 1

Point = tuple[float, float]
Row3 = tuple[float, float, float]
Matrix3 = tuple[Row3, Row3, Row3]
Frame = Literal["table", "piecepack", "grid", "rectangle"]
#: The card sizes a calibration may name (mm): from mini cards to tarot.
MIN_CARD_MM: Final = 30.0
MAX_CARD_MM: Final = 150.0


class _Frozen(BaseModel):
    # Every number finite: NaN or Infinity in a calibration is a broken file, not a table.
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class MarkerRecord(_Frozen):
    """A marker's four corners in the calibration frame (mm), for drift checks."""

    id: int
    corners_mm: tuple[Point, Point, Point, Point]


class LineRecord(_Frozen):
    """A measured board line in the board frame: y at x = 0 and at x = ``x_end``."""

    index: int
    y_start: float
    y_end: float
    x_end: float
    residual_mm: float


class BoardRecord(_Frozen):
    """The located board: its frame's pose in the marker (table) frame, the measured pitch
    (tile or square pitch, mm), its lines and the feature points used to find it."""

    kind: Literal["piecepack", "grid"]
    pose_in_table: tuple[float, float, float]  # x mm, y mm, angle degrees
    pitch_mm: float
    tiles_per_side: int | None = None
    lines: tuple[LineRecord, ...]
    residual_mm: float
    corrected_by: tuple[float, float, float] = (0.0, 0.0, 0.0)
    features_mm: tuple[Point, ...] = ()


class Calibration(_Frozen):
    version: Literal[1] = SCHEMA_VERSION
    game: str | None = None
    frame: Frame
    image_size: tuple[int, int]
    image_to_table: Matrix3
    camera_matrix: Matrix3 | None = None
    dist_coeffs: tuple[float, ...] | None = None
    error_mm: float = Field(ge=0)
    rms_px: float | None = None
    corner_count: int = 0
    markers: tuple[MarkerRecord, ...] = ()
    board: BoardRecord | None = None
    source: str = ""
    #: The size of the cards played on this table (width, length, mm): the referee holds a
    #: card to it (``referee calibrate --card-size``).
    card_mm: tuple[float, float] = CARD_MM

    @model_validator(mode="after")
    def _usable(self) -> Calibration:
        if min(self.image_size) < 1:
            raise ValueError("image_size must be two positive numbers of pixels")
        problem = card_size_problem(self.card_mm)
        if problem:
            raise ValueError(f"card_mm {problem}")
        if not _invertible(self.image_to_table):
            raise ValueError("image_to_table does not map the image onto the table "
                             "(a singular matrix)")
        if self.camera_matrix is not None:
            k = np.array(self.camera_matrix, dtype=np.float64)
            if k[0, 0] <= 0 or k[1, 1] <= 0 or not _invertible(self.camera_matrix):
                raise ValueError("camera_matrix is not a camera's (focal lengths must be "
                                 "positive)")
        if self.dist_coeffs is not None and len(self.dist_coeffs) not in DIST_COEFF_COUNTS:
            raise ValueError(f"dist_coeffs has {len(self.dist_coeffs)} numbers; OpenCV takes "
                             "4, 5, 8, 12 or 14")
        return self

    @property
    def lens(self) -> Lens | None:
        if self.camera_matrix is None or self.dist_coeffs is None:
            return None
        return Lens(np.array(self.camera_matrix, dtype=np.float64),
                    np.array(self.dist_coeffs, dtype=np.float64))

    @property
    def plane(self) -> PlaneMap:
        return PlaneMap(self.lens, np.array(self.image_to_table, dtype=np.float64),
                        self.image_size)

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), indent=1) + "\n"


def card_size_problem(card_mm: tuple[float, float]) -> str | None:
    """What is wrong with a card size (width, length, mm), or None."""
    width, length = card_mm
    if not MIN_CARD_MM <= width <= length <= MAX_CARD_MM:  # (False for NaN too)
        return (f"must be a card's width then its length in mm, each {MIN_CARD_MM:g}-"
                f"{MAX_CARD_MM:g} (as 63 x 88), not {width:g} x {length:g}")
    return None


#: How many distortion coefficients OpenCV's camera model takes.
DIST_COEFF_COUNTS: Final = (4, 5, 8, 12, 14)


def _invertible(matrix: Matrix3) -> bool:
    m = np.array(matrix, dtype=np.float64)
    scale = float(np.abs(m).max())
    if scale == 0:
        return False
    return bool(np.linalg.cond(m / scale) < 1e12)


def matrix3(array: FloatArray) -> Matrix3:
    m = np.asarray(array, dtype=np.float64).reshape(3, 3)
    return (tuple(float(v) for v in m[0]), tuple(float(v) for v in m[1]),  # type: ignore[return-value]
            tuple(float(v) for v in m[2]))


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path`` and rename it into place."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(temp, 0o644)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def save_calibration(calibration: Calibration, path: Path) -> None:
    write_atomically(path, calibration.to_json().encode("utf-8"))


def load_calibration(path: Path) -> Calibration:
    try:
        text = Path(path).read_text(encoding="utf-8")
        return Calibration.model_validate_json(text)
    except OSError as error:
        raise CalibrationError(f"cannot read calibration {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise CalibrationError(f"calibration {path} is not valid: not a JSON text file") \
            from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        raise CalibrationError(f"calibration {path} is not valid: "
                               + (f"{where}: {message}" if where else message)) from None
