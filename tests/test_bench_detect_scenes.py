"""The rendered-frame benchmark's options."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import detect_scenes


def test_a_frame_size_is_read_as_width_by_height() -> None:
    assert detect_scenes._size("640x360") == (640, 360)
    assert detect_scenes._size("3840X2160") == (3840, 2160)
    for bad in ("1280", "wide", "1280x", "32x32"):
        with pytest.raises(argparse.ArgumentTypeError):
            detect_scenes._size(bad)


def test_a_card_s_width_is_its_shortest_side() -> None:
    corners = np.array([[0.0, 0.0], [63.0, 0.0], [63.0, 88.0], [0.0, 88.0]])
    assert min(detect_scenes._sides(corners)) == pytest.approx(63.0)
