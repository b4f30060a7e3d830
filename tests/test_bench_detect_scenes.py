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


def test_face_down_cards_are_counted_apart_by_how_much_shows() -> None:
    def row(truth: str, visible: float, found: bool) -> dict[str, object]:
        return {"scene": 0, "deck": "d", "truth": truth, "visible": visible,
                "width_px": 90.0, "found": found, "iou": "", "read": ""}

    rows = [row("back", 1.0, True), row("back", 1.0, True), row("back", 0.99, False),
            row("back", 0.98, True), row("back", 0.4, False), row("back", 0.39, True),
            row("7H", 1.0, False)]
    assert detect_scenes.face_down(rows) == {
        "fully_visible": {"cards": 3, "found_pct": 66.7},  # 0.98 is not fully visible
        "at_least_40pct_visible": {"cards": 5, "found_pct": 60.0},  # 0.39 is too little
    }
    # rows read back from the CSV say found as text: "False" is not found
    text = [{**r, "found": str(r["found"]), "visible": str(r["visible"])} for r in rows]
    assert detect_scenes.face_down(text) == detect_scenes.face_down(rows)
    # none lying face down: no share to give, and no division by nothing
    assert detect_scenes.face_down([row("7H", 1.0, True)])["fully_visible"] == {
        "cards": 0, "found_pct": 0.0}


def test_found_cards_read_unsure_or_as_another_card_are_counted_apart() -> None:
    def row(truth: str, read: str, found: bool = True) -> dict[str, object]:
        return {"scene": 0, "deck": "d", "truth": truth, "visible": 1.0, "width_px": 90.0,
                "found": found, "iou": "", "read": read}

    rows = [row("7H", "7H"), row("7H", "??"), row("9D", "JK"), row("JK", "JK"),
            row("8S", "8C"), row("8S", "", found=False), row("back", "??")]
    assert detect_scenes.misread(rows) == {"unsure_pct": 33.3, "wrong_pct": 33.3,
                                           "false_jokers": 1}
    text = [{**r, "found": str(r["found"])} for r in rows]  # as read back from the CSV
    assert detect_scenes.misread(text) == detect_scenes.misread(rows)
    assert detect_scenes.misread([]) == {"unsure_pct": 0.0, "wrong_pct": 0.0,
                                         "false_jokers": 0}
