"""Coins and tokens in one image (`referee detect` with a board calibration)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

from referee.calibration.model import load_calibration
from referee.detection.pieces import coins_in, tokens_in

SAMPLES = Path(__file__).resolve().parents[2] / "sample_footage"


def _frame(game: str, t: float) -> np.ndarray:
    capture = cv2.VideoCapture(str(SAMPLES / game / "video.mp4"))
    capture.set(cv2.CAP_PROP_POS_FRAMES, round(t * capture.get(cv2.CAP_PROP_FPS)))
    ok, frame = capture.read()
    capture.release()
    assert ok
    return np.asarray(frame, np.uint8)


def _truth(game: str) -> list[dict[str, object]]:
    lines = (SAMPLES / game / "observations.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_the_shove_board_s_tokens_are_read_from_one_picture() -> None:
    calibration = load_calibration(SAMPLES / "shove" / "calibration.json")
    tokens = tokens_in(_frame("shove", 0.3), calibration)
    squares = {(t["colour"], tuple(t["square"])) for t in tokens}
    assert squares == {("red", (2, 1)), ("red", (2, 3)), ("red", (2, 5)), ("blue", (8, 0)),
                       ("blue", (8, 2)), ("blue", (8, 4)), ("blue", (8, 6))}
    assert coins_in(_frame("shove", 0.3), calibration) == []  # no piecepack board here


def test_coins_at_rest_are_found_where_they_lie() -> None:
    game = "shove-piecepack"
    calibration = load_calibration(SAMPLES / game / "calibration.json")
    truth = _truth(game)
    fifth = [o for o in truth if o.get("type") == "coin_stopped"][4]  # the first turn's last
    t = float(fifth["t"]) + 0.4  # type: ignore[arg-type]
    on_board = {}
    for item in truth:
        if float(item.get("t", 0)) > t:  # type: ignore[arg-type]
            break
        if item.get("type") == "coin_stopped":
            on_board[item["id"]] = item["center"]
        elif item.get("type") == "coin_removed":
            on_board.pop(item["id"], None)
    found = coins_in(_frame(game, t), calibration)
    assert len(found) == len(on_board) >= 4
    for centre in on_board.values():
        nearest = min(np.hypot(*(np.subtract(c["center"], centre))) for c in found)
        assert nearest < 3.0, (centre, found)
    assert tokens_in(_frame(game, t), calibration) == []


def test_detect_reports_the_tokens_with_a_grid_calibration(tmp_path: Path) -> None:
    import subprocess
    import sys

    image = tmp_path / "board.png"
    cv2.imwrite(str(image), _frame("shove", 0.3))
    done = subprocess.run([sys.executable, "-m", "referee", "detect", str(image), "--json",
                           "--calibration", str(SAMPLES / "shove" / "calibration.json")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert len(result["tokens"]) == 7 and result["coins"] == []
