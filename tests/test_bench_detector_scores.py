"""The detector-score benchmark: which box finds a label, which lies on none, and the table."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import detector_scores


def test_each_label_takes_the_best_score_of_the_boxes_that_find_it() -> None:
    king, ace = [100.0, 100.0, 200.0, 240.0], [400.0, 100.0, 500.0, 240.0]
    boxes = [([102.0, 98.0, 203.0, 241.0], 0.4),   # the king, well
             ([100.0, 100.0, 200.0, 240.0], 0.9),   # the king, better scored
             ([400.0, 100.0, 500.0, 170.0], 0.8),   # half the ace: IoU 0.5
             ([400.0, 100.0, 500.0, 160.0], 0.95),  # less than half: no find
             ([700.0, 100.0, 800.0, 240.0], 0.3)]   # on no label
    found, stray = detector_scores.scores_of([king, ace], boxes)
    assert found == [0.9, 0.8]
    assert stray == [0.3]  # the box on part of the ace overlaps it, so lies on a label


def test_a_strip_label_is_left_out_and_an_unfound_label_scores_nothing() -> None:
    nine, ten = [159.0, 112.0, 345.0, 366.0], [80.0, 114.0, 163.0, 357.0]  # ten: a strip
    found, stray = detector_scores.scores_of([nine, ten], [])
    assert found == [0.0] and stray == []


def test_the_table_counts_labels_found_and_stray_boxes_at_each_threshold() -> None:
    rows = detector_scores.table([0.9, 0.3, 0.0, 0.12], [0.5, 0.06])
    by = {row["threshold"]: row for row in rows}
    assert by[0.05] == {"threshold": 0.05, "labels_found_pct": 75.0, "boxes_on_no_label": 2}
    assert by[0.25] == {"threshold": 0.25, "labels_found_pct": 50.0, "boxes_on_no_label": 1}
    assert by[0.5] == {"threshold": 0.5, "labels_found_pct": 25.0, "boxes_on_no_label": 1}
    assert [row["threshold"] for row in rows] == list(detector_scores.THRESHOLDS)


def test_a_box_on_a_strip_lies_on_a_label_and_a_score_at_a_threshold_counts() -> None:
    nine, ten = [159.0, 112.0, 345.0, 366.0], [80.0, 114.0, 163.0, 357.0]  # ten: a strip
    found, stray = detector_scores.scores_of([nine, ten], [([80.0, 114.0, 163.0, 357.0], 0.7)])
    assert found == [0.0] and stray == []  # the strip's own box: no find, and not stray
    rows = detector_scores.table([0.25], [0.25])
    assert rows[4] == {"threshold": 0.25, "labels_found_pct": 100.0, "boxes_on_no_label": 1}
    assert rows[5]["labels_found_pct"] == 0.0 and rows[5]["boxes_on_no_label"] == 0
