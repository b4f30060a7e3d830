"""Calibration: camera pixels <-> table millimetres, from printed marker sheets and the
game boards themselves (see the README section "Calibrating the table")."""

from referee.calibration.errors import CalibrationError

__all__ = ["CalibrationError"]
