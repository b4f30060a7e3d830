"""The footage benchmark's outline measure: how far a placed card's corners lie off."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import replay


def _placed(card: str, t: float, dx: float) -> dict[str, object]:
    corners = [[0.0 + dx, 0.0], [63.0 + dx, 0.0], [63.0 + dx, 88.0], [0.0 + dx, 88.0]]
    return {"type": "card_placed", "card": card, "t": t, "corners": corners}


def test_outline_errors_pair_the_same_card_at_the_same_time_however_far_off() -> None:
    truth = [_placed("7H", 1.0, 0.0), _placed("7H", 5.0, 0.0), _placed("QS", 9.0, 0.0),
             {"type": "card_removed", "card": "7H", "t": 10.0}]
    ours = [_placed("7H", 1.2, 2.5), _placed("7H", 5.1, 9.0),  # 9 mm off: no match
            _placed("QC", 9.0, 0.0)]  # another card: not paired
    assert replay.outline_errors(truth, ours) == pytest.approx([2.5, 9.0])
    matched, _, _ = replay.score_observations(truth, ours)
    assert matched == 1
