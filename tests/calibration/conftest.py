"""Rendered calibration scenes shared by the calibration tests (rendered once per session)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from referee.calibration.model import Calibration
from referee.calibration.pipeline import CalibrationOptions, calibrate_frame
from synth.boards import SheetScene, sheet_scene
from synth.camera import Camera, random_camera


@dataclass(frozen=True)
class Rendered:
    camera: Camera
    scene: SheetScene
    image: np.ndarray
    calibration: Calibration


@pytest.fixture(scope="session")
def sheets_view() -> Rendered:
    rng = np.random.default_rng(11)
    camera = random_camera(rng, target=(300.0, 200.0))
    scene = sheet_scene(rng, px_per_mm=2.5)
    image = camera.render(scene.canvas)
    calibration = calibrate_frame(image, CalibrationOptions()).calibration
    return Rendered(camera, scene, image, calibration)
