"""`referee markers` and `referee calibrate` end to end, and their refusals (exit status 2)."""

from __future__ import annotations

import json
import re

import cv2
import numpy as np
import pytest

from referee.calibration.layouts import GridBoardLayout
from referee.cli import main
from synth.boards import grid_scene
from synth.camera import random_camera


def run(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out = capsys.readouterr()
    return exit_info.value.code, out.out, out.err


def test_markers_writes_true_scale_pdf_and_png(tmp_path, capsys):
    for paper, (w_pt, h_pt) in (("a4", (595.3, 841.9)), ("letter", (612.0, 792.0))):
        code, out, _ = run(["markers", "--paper", paper, "--out", str(tmp_path), "--sheets",
                            "2", "--dpi", "150"], capsys)
        assert code == 0 and "32.0 mm" in out
        pdf = (tmp_path / f"markers-{paper}.pdf").read_bytes()
        boxes = re.findall(rb"/MediaBox \[ 0 0 ([\d.]+) ([\d.]+) \]", pdf)
        assert len(boxes) == 2
        assert abs(float(boxes[0][0]) - w_pt) < 1.0 and abs(float(boxes[0][1]) - h_pt) < 1.0
        from PIL import Image

        with Image.open(tmp_path / f"markers-{paper}-1.png") as png:
            assert round(png.info["dpi"][0]) == 150
            assert abs(png.size[0] / 150 * 25.4 - w_pt / 72 * 25.4) < 0.5


def test_calibrate_writes_the_file_and_preview(sheets_view, tmp_path, capsys):
    source = tmp_path / "view.png"
    cv2.imwrite(str(source), sheets_view.image)
    out = tmp_path / "table.json"
    code, stdout, err = run(["calibrate", str(source), "--out", str(out), "--game",
                             "slapstick"], capsys)
    assert code == 0, err
    assert "error" in stdout and "mm RMS" in stdout
    data = json.loads(out.read_text())
    assert data["game"] == "slapstick" and data["frame"] == "table"
    preview = cv2.imread(str(tmp_path / "table.preview.png"))
    assert preview is not None and preview.shape[1] > 500


def test_calibrate_writes_the_cards_size_it_is_told_and_refuses_no_card_s(sheets_view,
                                                                         tmp_path, capsys):
    source = tmp_path / "view.png"
    cv2.imwrite(str(source), sheets_view.image)
    out = tmp_path / "table.json"
    code, stdout, err = run(["calibrate", str(source), "--out", str(out),
                             "--card-size", "57x89"], capsys)
    assert code == 0, err
    assert "cards 57 x 89 mm" in stdout
    assert json.loads(out.read_text())["card_mm"] == [57.0, 89.0]
    # calibrated again on the table's calibration (a board's): the same cards
    board = tmp_path / "board.json"
    code, stdout, err = run(["calibrate", str(source), "--out", str(board), "--plane",
                             str(out)], capsys)
    assert code == 0, err
    assert json.loads(board.read_text())["card_mm"] == [57.0, 89.0]
    code, stdout, _ = run(["calibrate", str(source), "--out", str(out)], capsys)
    assert code == 0 and "cards" not in stdout
    assert json.loads(out.read_text())["card_mm"] == [63.0, 88.0]
    for size, needle in (("89x57", "width then its length"), ("0x88", "30-150"),
                         ("big", "--card-size: 'big' is no card size")):
        other = tmp_path / f"{size}.json"
        code, _, err = run(["calibrate", str(source), "--out", str(other), "--card-size",
                            size], capsys)
        assert code == 2 and needle in err and len(err.strip().splitlines()) == 1
        assert not other.exists() and not other.with_suffix(".preview.png").exists()


def test_a_preview_that_cannot_be_written_leaves_no_calibration(sheets_view, tmp_path,
                                                                capsys):
    source = tmp_path / "view.png"
    cv2.imwrite(str(source), sheets_view.image)
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    err = _refused(tmp_path, capsys, sheets_view.image, "--preview", str(blocked / "p.png"))
    assert "cannot write" in err


def _refused(tmp_path, capsys, image_or_bytes, *extra):
    source = tmp_path / "source.png"
    if isinstance(image_or_bytes, bytes):
        source.write_bytes(image_or_bytes)
    else:
        cv2.imwrite(str(source), image_or_bytes)
    out = tmp_path / "out.json"
    code, _, err = run(["calibrate", str(source), "--out", str(out), *extra], capsys)
    assert code == 2
    assert err.startswith("referee: error: ") and err.count("\n") == 1
    assert "Traceback" not in err
    assert not out.exists() and not (tmp_path / "out.preview.png").exists()
    return err


def test_no_markers_is_refused(tmp_path, capsys):
    rng = np.random.default_rng(3)
    canvas, _ = grid_scene(rng, GridBoardLayout(), px_per_mm=2.0)
    image = random_camera(rng, target=(300.0, 200.0)).render(canvas)
    assert "no markers found" in _refused(tmp_path, capsys, image)


def test_half_the_sheet_covered_is_refused(sheets_view, tmp_path, capsys):
    image = sheets_view.image.copy()
    cal = sheets_view.calibration
    # Cover the back half of sheet 1 (y from 112 to 224 mm of its pattern) with a hand-ish
    # grey patch.
    corners = np.array([[-20, 112], [180, 112], [180, 250], [-20, 250]], dtype=np.float64)
    polygon = cal.plane.to_pixels(corners).astype(np.int32)
    cv2.fillPoly(image, [polygon], (90, 120, 160))
    err = _refused(tmp_path, capsys, image)
    assert "sheet 1 is partly covered" in err


def test_blurred_frame_is_refused(sheets_view, tmp_path, capsys):
    image = cv2.GaussianBlur(sheets_view.image, (0, 0), 6.0)
    assert "blurred" in _refused(tmp_path, capsys, image)


def test_non_image_file_is_refused(tmp_path, capsys):
    err = _refused(tmp_path, capsys, b"this is not an image\n")
    assert "not an image or a video" in err


def test_missing_source_and_bad_offset_are_refused(tmp_path, capsys):
    code, _, err = run(["calibrate", str(tmp_path / "nope.png"), "--out",
                        str(tmp_path / "x.json")], capsys)
    assert code == 2 and "no such file" in err
    code, _, err = run(["calibrate", "x.png", "--out", str(tmp_path / "x.json"),
                        "--board-offset", "1,2"], capsys)
    assert code == 2 and "--board-offset" in err
