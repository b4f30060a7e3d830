"""Locating the Shove boards on a calibrated plane, correcting them, and checking drift."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from referee.calibration.drift import DriftChecker
from referee.calibration.errors import CalibrationError
from referee.calibration.layouts import (
    GAME_LAYOUTS,
    CardTableLayout,
    GridBoardLayout,
    PiecepackLayout,
    layout_for_game,
    load_layout,
)
from referee.calibration.manual import four_point_calibration
from referee.calibration.pipeline import CalibrationOptions, calibrate_frame
from referee.calibration.solve import Lens
from synth.boards import grid_scene, piecepack_scene, sheet_scene
from synth.camera import random_camera


def _line_errors(board, truth) -> list[float]:
    x, y, angle = board.pose_in_table
    c, s = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    errors = []
    for line in board.lines:
        ends = np.array([[0.0, line.y_start], [line.x_end, line.y_end]]) @ \
            np.array([[c, -s], [s, c]]).T + (x, y)
        a, b = truth[line.index]
        normal = np.array([-(b - a)[1], (b - a)[0]]) / np.linalg.norm(b - a)
        errors.append(float(np.abs((ends - a) @ normal).max()))
    return errors


@pytest.mark.parametrize("tiles", [9, 7])
def test_piecepack_lines_are_found_within_a_millimetre(sheets_view, tiles):
    rng = np.random.default_rng(tiles)
    layout = PiecepackLayout(gap_mm=0.8, tiles_per_side=tiles)
    canvas, drawn = piecepack_scene(rng, layout, px_per_mm=2.5)
    image = sheets_view.camera.render(canvas)
    cal = calibrate_frame(image, CalibrationOptions(
        game="shove-piecepack", layout=layout, plane=sheets_view.calibration)).calibration
    assert cal.frame == "piecepack" and cal.board is not None
    assert cal.board.tiles_per_side == tiles
    assert [line.index for line in cal.board.lines] == list(range(1, tiles))
    assert max(_line_errors(cal.board, drawn.lines_mm)) < 1.0
    assert cal.board.pitch_mm == pytest.approx(layout.pitch_mm, abs=0.3)
    # In the board frame, line k lies at y = k * pitch.
    for line in cal.board.lines:
        assert line.y_start == pytest.approx(line.index * cal.board.pitch_mm, abs=1.0)


def test_board_offset_corrects_the_located_frame(sheets_view):
    rng = np.random.default_rng(4)
    layout = PiecepackLayout(gap_mm=0.8)
    canvas, _ = piecepack_scene(rng, layout, px_per_mm=2.5)
    image = sheets_view.camera.render(canvas)
    options = CalibrationOptions(layout=layout, plane=sheets_view.calibration)
    plain = calibrate_frame(image, options).calibration
    moved = calibrate_frame(image, CalibrationOptions(
        layout=layout, plane=sheets_view.calibration, board_correction=(0.0, 5.0, 0.0),
    )).calibration
    assert moved.board is not None and plain.board is not None
    assert moved.board.lines[0].y_start == pytest.approx(plain.board.lines[0].y_start - 5.0,
                                                         abs=0.01)
    point = np.array([[640.0, 360.0]])
    delta = moved.plane.to_table(point) - plain.plane.to_table(point)
    assert delta[0, 1] == pytest.approx(-5.0, abs=0.01)


def test_grid_board_is_found_from_its_lines(sheets_view):
    rng = np.random.default_rng(5)
    layout = GridBoardLayout()
    canvas, drawn = grid_scene(rng, layout, px_per_mm=2.5)
    image = sheets_view.camera.render(canvas)
    cal = calibrate_frame(image, CalibrationOptions(
        game="shove", layout=layout, plane=sheets_view.calibration)).calibration
    assert cal.frame == "grid" and cal.board is not None
    # Every grid corner maps to (col * 30, row * 30) in the board frame.
    pixels = sheets_view.camera.project(drawn.corners_mm.reshape(-1, 2))
    board_mm = cal.plane.to_table(pixels)
    rows, cols = np.meshgrid(np.arange(layout.rows + 1), np.arange(layout.cols + 1),
                             indexing="ij")
    expected = np.column_stack([cols.ravel() * 30.0, rows.ravel() * 30.0])
    assert np.abs(board_mm - expected).max() < 1.0


def test_no_board_in_view_is_refused(sheets_view):
    with pytest.raises(CalibrationError, match=r"no board|piecepack board not found"):
        calibrate_frame(sheets_view.image, CalibrationOptions(layout=PiecepackLayout()))


def test_drift_is_noticed_and_solved_again(sheets_view):
    checker = DriftChecker(sheets_view.calibration, interval_s=3.0)
    first = checker.update(0.0, sheets_view.image)
    assert first is not None and first.status == "steady"
    assert checker.update(1.0, sheets_view.image) is None  # not due yet
    # The camera is knocked: same lens, new pose.
    rng = np.random.default_rng(11)
    knocked = random_camera(rng, target=(330.0, 180.0))
    moved_camera = type(knocked)(knocked.image_size, sheets_view.camera.camera_matrix,
                                 sheets_view.camera.dist_coeffs, knocked.rotation,
                                 knocked.translation)
    image = moved_camera.render(sheets_view.scene.canvas)
    report = checker.update(4.0, image)
    assert report is not None and report.status == "resolved"
    assert report.shift_mm is not None and report.shift_mm > 2.0
    corners = np.array([[100.0, 100.0], [500.0, 300.0]])
    mapped = report.calibration.plane.to_table(moved_camera.project(corners))
    assert np.abs(mapped - corners).max() < 1.0
    # Markers gone: rulings pause, and say so.
    blank = np.full_like(image, 60)
    paused = checker.update(8.0, blank)
    assert paused is not None and paused.status == "paused" and "paused" in paused.message
    assert checker.paused


def test_four_clicked_points_give_the_rectangle_frame(sheets_view):
    camera = sheets_view.camera
    rectangle = np.array([[0.0, 0.0], [600.0, 0.0], [600.0, 400.0], [0.0, 400.0]])
    clicks = [tuple(p) for p in camera.project(rectangle)]
    lens = Lens(camera.camera_matrix, camera.dist_coeffs)
    cal = four_point_calibration(clicks, 600.0, 400.0, (1280, 720), lens=lens)
    inside = np.array([[150.0, 100.0], [450.0, 320.0]])
    assert np.abs(cal.plane.to_table(camera.project(inside)) - inside).max() < 0.05
    assert 0 < cal.error_mm < 2.0
    with pytest.raises(CalibrationError, match="in order"):
        four_point_calibration([clicks[0], clicks[2], clicks[1], clicks[3]], 600, 400,
                               (1280, 720))
    with pytest.raises(CalibrationError, match="four points"):
        four_point_calibration(clicks[:3], 600, 400, (1280, 720))


def test_every_game_has_a_layout_and_card_seats_for_two_to_six(tmp_path):
    for game in GAME_LAYOUTS:
        layout_for_game(game)
    table = layout_for_game("push-out-the-pig")
    assert isinstance(table, CardTableLayout)
    for players in range(2, 7):
        assert len(table.seats_for(players)) == players
    with pytest.raises(CalibrationError, match="7 players"):
        table.seats_for(7)
    short = load_layout(Path(__file__).parents[2] / "calibration" / "piecepack-short.json")
    assert isinstance(short, PiecepackLayout) and short.lines == 6
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "grid", "rows": 0}')
    with pytest.raises(CalibrationError, match="rows"):
        load_layout(bad)


def test_a_single_sheet_gives_no_lens_and_says_so():
    rng = np.random.default_rng(8)
    scene = sheet_scene(rng, count=1, px_per_mm=2.5)
    camera = random_camera(rng, target=(100.0, 120.0), view_mm=(400.0, 300.0),
                           distortion=False)
    result = calibrate_frame(camera.render(scene.canvas), CalibrationOptions())
    assert result.calibration.camera_matrix is None
    assert any("one sheet only" in note for note in result.notes)
    inside = np.array([[20.0, 20.0], [140.0, 200.0]])
    mapped = result.calibration.plane.to_table(camera.project(inside))
    assert np.abs(mapped - inside).max() < 1.0


def test_board_drift_is_found_from_the_board_lines(sheets_view):
    rng = np.random.default_rng(6)
    layout = PiecepackLayout(gap_mm=0.8)
    canvas, _ = piecepack_scene(rng, layout, px_per_mm=2.5)
    image = sheets_view.camera.render(canvas)
    cal = calibrate_frame(image, CalibrationOptions(
        layout=layout, plane=sheets_view.calibration)).calibration
    checker = DriftChecker(cal, layout=layout)
    assert checker.check(image).status == "steady"
    knocked = random_camera(np.random.default_rng(11), target=(310.0, 205.0))
    moved = type(knocked)(knocked.image_size, sheets_view.camera.camera_matrix,
                          sheets_view.camera.dist_coeffs, knocked.rotation, knocked.translation)
    report = checker.check(moved.render(canvas))
    assert report.status == "resolved"
    # The board frame seen through the new camera matches the one seen through the old.
    board_points = np.array([[20.0, 60.0], [180.0, 300.0]])
    before = cal.plane.to_pixels(board_points)
    table = sheets_view.calibration.plane.to_table(before)
    after = report.calibration.plane.to_table(moved.project(table))
    assert np.abs(after - board_points).max() < 1.0
