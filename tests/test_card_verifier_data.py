"""The card verifier's data: outlines sorted by the ground truth, and the balanced set."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from training.card_verifier_data import _best_iou, balance, mine


def _faces(folder: Path, count: int) -> None:
    folder.mkdir(parents=True)
    for k in range(count):
        (folder / f"f{k}.png").write_bytes(b"png")


def test_the_balanced_set_keeps_every_not_card_and_at_most_the_ratio_of_cards(
        tmp_path: Path) -> None:
    mined = tmp_path / "mined"
    _faces(mined / "train" / "card", 50)
    _faces(mined / "train" / "not_card", 4)
    _faces(mined / "val" / "card", 3)
    _faces(mined / "val" / "not_card", 2)
    made = balance(mined, tmp_path / "set", 10.0, seed=0)
    assert made == {"train": {"card": 40, "not_card": 4}, "val": {"card": 3, "not_card": 2}}
    kept = sorted((tmp_path / "set" / "train" / "card").glob("*.png"))
    assert len(kept) == 40
    assert os.path.samefile(kept[0], mined / "train" / "card" / kept[0].name)  # linked


def test_an_outline_is_scored_by_its_best_overlap_with_a_true_card() -> None:
    card = np.array([[0, 0], [63, 0], [63, 88], [0, 88]], float)
    truths = [card, card + 500]
    assert _best_iou(card, truths) == pytest.approx(1.0)
    half = card.copy()
    half[2:, 1] = 44
    assert _best_iou(half, truths) == pytest.approx(0.5)
    assert _best_iou(card + 200, truths) == 0.0


def test_mining_writes_faces_under_their_labels_and_records_what_it_made(
        tmp_path: Path) -> None:
    made = mine(tmp_path, "val", scenes=2, seed=3, truth_per_scene=1)
    found = {label: len(list((tmp_path / "val" / label).glob("*.png")))
             for label in ("card", "not_card")}
    assert found == {"card": made["card"], "not_card": made["not_card"]}
    assert made["card"] >= 2  # one true card a scene at least
