"""Calibrating from rendered views with exact ground truth, and the calibration file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from referee.calibration.detect import MarkerDetection, SheetView, detect_sheets
from referee.calibration.errors import CalibrationError
from referee.calibration.model import load_calibration, save_calibration
from referee.calibration.pipeline import CalibrationOptions, plane_from_markers


def test_table_plane_is_within_a_millimetre_over_the_area(sheets_view):
    cal = sheets_view.calibration
    gx, gy = np.meshgrid(np.linspace(0, 600, 25), np.linspace(0, 400, 17))
    grid = np.column_stack([gx.ravel(), gy.ravel()])
    pixels = sheets_view.camera.project(grid)
    seen = (pixels[:, 0] >= 0) & (pixels[:, 0] < 1280) & (pixels[:, 1] >= 0) & \
        (pixels[:, 1] < 720)
    assert seen.mean() > 0.9
    error = np.linalg.norm(cal.plane.to_table(pixels[seen]) - grid[seen], axis=1)
    assert np.sqrt(np.mean(error ** 2)) < 1.0
    assert cal.frame == "table"
    assert cal.camera_matrix is not None and cal.dist_coeffs is not None
    assert 0 < cal.error_mm < 1.0


def test_without_lens_correction_the_edges_are_off_by_millimetres(sheets_view):
    """Why the lens is estimated: a plain homography from the same corners is much worse."""
    detection = detect_sheets(sheets_view.image)
    options = CalibrationOptions(max_error_mm=100.0)
    views = [v for v in detection.sheets if v.sheet == 0]
    plane, *_ = plane_from_markers(MarkerDetection(tuple(views), 17), (1280, 720), options,
                                   True)
    assert plane.lens is None
    gx, gy = np.meshgrid(np.linspace(0, 600, 13), np.linspace(0, 400, 9))
    grid = np.column_stack([gx.ravel(), gy.ravel()])
    pixels = sheets_view.camera.project(grid)
    error = np.linalg.norm(plane.to_table(pixels) - grid, axis=1)
    assert np.nanmax(error) > 2.0


def test_calibration_file_round_trips_with_the_contract_fields(sheets_view, tmp_path):
    path = tmp_path / "table.json"
    save_calibration(sheets_view.calibration, path)
    data = json.loads(path.read_text())
    for field in ("version", "image_size", "image_to_table", "camera_matrix", "dist_coeffs",
                  "error_mm"):
        assert field in data
    assert data["version"] == 1 and data["image_size"] == [1280, 720]
    assert np.array(data["image_to_table"]).shape == (3, 3)
    assert len(data["markers"]) >= 40
    assert load_calibration(path) == sheets_view.calibration


def test_a_corrupt_calibration_file_is_refused(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"version": 2}')
    with pytest.raises(CalibrationError, match="not valid"):
        load_calibration(path)


SAMPLE_CALIBRATION = Path(__file__).resolve().parents[2] / "sample_footage" / "shove" / \
    "calibration.json"


@pytest.mark.parametrize(("damage", "needle"), [
    (lambda d: d["image_to_table"][0].__setitem__(0, float("nan")), "finite"),
    (lambda d: d["image_to_table"][1].__setitem__(2, float("inf")), "finite"),
    (lambda d: d.__setitem__("image_to_table", [[0, 0, 0], [0, 0, 0], [0, 0, 0]]), "singular"),
    (lambda d: d.__setitem__("image_to_table", [[1, 2, 3], [2, 4, 6], [0, 0, 1]]), "singular"),
    (lambda d: d.__setitem__("image_size", [0, 720]), "positive"),
    (lambda d: d.update(camera_matrix=[[0, 0, 640], [0, 0, 360], [0, 0, 1]],
                        dist_coeffs=[0, 0, 0, 0, 0]), "focal"),
    (lambda d: d.update(camera_matrix=[[900, 0, 640], [0, 900, 360], [0, 0, 1]],
                        dist_coeffs=[0.1, 0.01]), "4, 5, 8, 12 or 14"),
    (lambda d: d.__setitem__("card_mm", [89, 57]), "card_mm must be a card's width then"),
    (lambda d: d.__setitem__("card_mm", [0, 88]), "card_mm must be"),
    (lambda d: d.__setitem__("card_mm", [63]), "card_mm"),
])
def test_a_calibration_that_cannot_map_the_table_is_refused(tmp_path, damage, needle):
    data = json.loads(SAMPLE_CALIBRATION.read_text())
    load_calibration(SAMPLE_CALIBRATION)  # the undamaged file loads
    damage(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))  # NaN and Infinity as Python's json writes them
    with pytest.raises(CalibrationError, match=needle):
        load_calibration(path)


def test_a_calibration_names_its_cards_size_or_they_are_standard_cards(tmp_path):
    data = json.loads(SAMPLE_CALIBRATION.read_text())
    assert "card_mm" not in data  # written before calibrations named it
    assert load_calibration(SAMPLE_CALIBRATION).card_mm == (63.0, 88.0)
    path = tmp_path / "bridge.json"
    path.write_text(json.dumps({**data, "card_mm": [57, 89]}))
    bridge = load_calibration(path)
    assert bridge.card_mm == (57.0, 89.0)
    save_calibration(bridge, tmp_path / "again.json")
    assert json.loads((tmp_path / "again.json").read_text())["card_mm"] == [57.0, 89.0]


def test_a_calibration_that_is_not_text_is_refused(tmp_path):
    path = tmp_path / "bad.json"
    path.write_bytes(b"\xff\xfe\x00binary\x80\x81")
    with pytest.raises(CalibrationError, match="not a JSON text file"):
        load_calibration(path)


def _lifted_views(camera, tilt_deg: float) -> MarkerDetection:
    """Projected corners of two sheets, the second propped up ``tilt_deg`` about its front
    edge (as on a book)."""
    import cv2

    from referee.calibration.sheet import DEFAULT_DESIGN

    views = []
    rvec, _ = cv2.Rodrigues(camera.rotation)
    tilt = np.radians(tilt_deg)
    for sheet, (dx, dy, t) in enumerate(((0.0, 0.0, 0.0), (420.0, 150.0, tilt))):
        local = DEFAULT_DESIGN.corner_points
        world = np.column_stack([local[:, 0] + dx, local[:, 1] * np.cos(t) + dy,
                                 local[:, 1] * np.sin(t)])
        px, _ = cv2.projectPoints(world, rvec, camera.translation, camera.camera_matrix,
                                  camera.dist_coeffs)
        ids = np.arange(len(local), dtype=np.int32)
        views.append(SheetView(sheet, ids, px.reshape(-1, 2), local, {}))
    return MarkerDetection(tuple(views), 34)


def test_a_sheet_off_the_plane_is_refused(sheets_view):
    options = CalibrationOptions()
    flat = plane_from_markers(_lifted_views(sheets_view.camera, 0.0), (1280, 720), options,
                              True)
    assert flat[1] < 0.1
    with pytest.raises(CalibrationError, match="not coplanar"):
        plane_from_markers(_lifted_views(sheets_view.camera, 12.0), (1280, 720), options, True)


@pytest.mark.parametrize("count", [4, 5, 8])
def test_the_lens_distorts_points_as_opencv_projects_them(count: int) -> None:
    import cv2

    from referee.calibration.solve import Lens

    rng = np.random.default_rng(count)
    matrix = np.array([[900.0, 0.0, 650.0], [0.0, 905.0, 355.0], [0.0, 0.0, 1.0]])
    coeffs = rng.uniform(-0.2, 0.2, count) * np.array([1, 1, 0.05, 0.05, 1, 1, 1, 1])[:count]
    points = rng.uniform([-100, -100], [1380, 820], (500, 2))
    normal = np.column_stack([(points - matrix[:2, 2]) / np.diag(matrix)[:2], np.ones(500)])
    expected, _ = cv2.projectPoints(normal, np.zeros(3), np.zeros(3), matrix, coeffs)
    lens = Lens(matrix, coeffs)
    assert np.abs(lens.distort(points) - expected.reshape(-1, 2)).max() < 1e-6
