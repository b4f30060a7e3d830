"""The one error type calibration raises: its message is a sentence for the user."""

from __future__ import annotations


class CalibrationError(ValueError):
    """A calibration that cannot be made or trusted; ``str(error)`` says why, in one line."""
