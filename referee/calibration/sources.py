"""Reading calibration frames from an image file, a video file or a camera index."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from referee.calibration.errors import CalibrationError

Image = npt.NDArray[np.uint8]
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"})


def is_camera_index(source: str) -> bool:
    """Whether ``source`` names a camera (0, 1, ...) rather than a file."""
    return source.isascii() and source.isdigit()


def read_frames(source: str, max_frames: int = 30) -> Iterator[Image]:
    """Frames of ``source``: an image file (one frame), a video file, or a camera index."""
    if is_camera_index(source):
        capture = cv2.VideoCapture(int(source))
        if not capture.isOpened():
            raise CalibrationError(f"camera {source} cannot be opened")
    else:
        path = Path(source)
        if not path.is_file():
            raise CalibrationError(f"{source}: no such file")
        image = cv2.imread(str(path), cv2.IMREAD_COLOR) if cv2.haveImageReader(str(path)) \
            else None
        if image is not None:
            yield np.asarray(image, dtype=np.uint8)
            return
        if path.suffix.lower() in IMAGE_SUFFIXES:
            raise CalibrationError(f"{source} is not an image or a video OpenCV can read")
        capture = cv2.VideoCapture(str(path))
        if not capture.isOpened():
            raise CalibrationError(f"{source} is not an image or a video OpenCV can read")
    try:
        count = 0
        while count < max_frames:
            ok, frame = capture.read()
            if not ok or frame is None:
                break
            count += 1
            yield np.asarray(frame, dtype=np.uint8)
        if count == 0:
            raise CalibrationError(f"{source} is not an image or a video OpenCV can read")
    finally:
        capture.release()
