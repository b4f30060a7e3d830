"""Each bundled sample clip: its ground-truth observations give its recorded rulings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.adjudication import adjudicate_lines

FOOTAGE = Path(__file__).resolve().parents[1] / "sample_footage"
GAMES = ["shove-piggy-shove", "shove-piecepack", "push-out-the-pig", "shove", "slapstick"]


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.mark.parametrize("game", GAMES)
def test_sample_clip_observations_give_the_recorded_rulings(game: str) -> None:
    clip = FOOTAGE / game
    assert (clip / "video.mp4").stat().st_size < 4_000_000  # a few MB at most
    observations = (clip / "observations.jsonl").read_text(encoding="utf-8").splitlines()
    rulings = [r.to_json() for r in adjudicate_lines(observations, game=None, players=None,
                                                     settings={})]
    assert rulings == _lines(clip / "rulings.jsonl")
    assert _lines(clip / "observations.jsonl")[0]["game"] == game


@pytest.mark.parametrize("game", GAMES)
def test_sample_clip_has_its_calibration(game: str) -> None:
    calibration = json.loads((FOOTAGE / game / "calibration.json").read_text(encoding="utf-8"))
    assert {"version", "image_size", "image_to_table", "camera_matrix", "dist_coeffs",
            "error_mm"} <= set(calibration)
    assert calibration["image_size"] == [960, 540]
