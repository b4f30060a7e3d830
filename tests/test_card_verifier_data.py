"""The card verifier's data: outlines sorted by the ground truth, and the balanced set."""

from __future__ import annotations

import os
from pathlib import Path

import cv2
import numpy as np
import pytest
from shapely.geometry import Polygon

from training.card_verifier_data import (
    BACK_DESIGNS,
    CARD_ASPECT,
    CUT_ASPECT_JITTER,
    CUT_TILT,
    _best_iou,
    back_faces,
    back_scene,
    balance,
    card_shaped_quad,
    mine,
    printed_faces,
    printed_scene,
)


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


def test_parts_cut_from_printed_matter_are_card_shaped_and_lie_in_the_picture() -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        size = (int(rng.integers(120, 480)), int(rng.integers(120, 480)))
        quad = card_shaped_quad(rng, size)
        assert quad.shape == (4, 2)
        assert (quad >= 0).all() and (quad[:, 0] <= size[0]).all() and (quad[:, 1] <= size[1]).all()
        shape = Polygon(quad)
        assert shape.is_valid and shape.convex_hull.area == pytest.approx(shape.area)
        sides = np.linalg.norm(quad - np.roll(quad, -1, axis=0), axis=1)
        short, long = (sides[0] + sides[2]) / 2, (sides[1] + sides[3]) / 2
        slack = CUT_ASPECT_JITTER + 3 * CUT_TILT
        assert CARD_ASPECT * (1 - slack) <= short / long <= CARD_ASPECT * (1 + slack)


def test_printed_faces_are_not_card_faces_with_something_printed_on_them(
        tmp_path: Path) -> None:
    assert printed_faces(tmp_path, "train", 6, seed=2) == 6
    faces = sorted((tmp_path / "train" / "not_card").glob("*.png"))
    assert len(faces) == 6
    images = [cv2.imread(str(face)) for face in faces]
    assert all(image.shape == (64, 64, 3) for image in images)
    assert all(float(image.std()) > 3.0 for image in images)  # not one flat colour
    assert len({image.tobytes() for image in images}) == 6
    printed_faces(tmp_path / "again", "train", 6, seed=2)  # a seed makes the same faces
    again = sorted((tmp_path / "again" / "train" / "not_card").glob("*.png"))
    assert [face.read_bytes() for face in again] == [face.read_bytes() for face in faces]


def test_printed_matter_is_outlined_on_the_piece_whole_or_in_a_part() -> None:
    rng = np.random.default_rng(11)
    shares = []
    for _ in range(16):
        image, quad, (x0, y0, x1, y1) = printed_scene(rng)
        assert image.shape[0] > y1 and image.shape[1] > x1  # the table shows round it
        slack = 0.1 * min(x1 - x0, y1 - y0)  # a whole piece's corners are a little off
        assert (quad[:, 0] >= x0 - slack).all() and (quad[:, 0] <= x1 + slack).all()
        assert (quad[:, 1] >= y0 - slack).all() and (quad[:, 1] <= y1 + slack).all()
        shares.append(Polygon(quad).area / ((x1 - x0) * (y1 - y0)))
    assert max(shares) > 0.85 and min(shares) < 0.6  # the whole piece, and a part of it



def test_printed_matter_is_seen_under_the_renderers_photometry(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from training import card_verifier_data

    given: list[np.ndarray] = []

    def photometry(image: np.ndarray, p: object, rng: np.random.Generator) -> np.ndarray:
        given.append(np.asarray(255 - image, np.uint8))  # a change the test can tell
        return given[-1]

    monkeypatch.setattr(card_verifier_data.effects, "apply", photometry)
    image, _quad, _piece = printed_scene(np.random.default_rng(5))
    assert len(given) == 1 and image is given[0]  # once, and what it gave is returned


def test_backs_are_card_faces_of_designs_set_apart_for_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from training import card_verifier_data

    assert not set(BACK_DESIGNS["train"]) & set(BACK_DESIGNS["val"])
    assert min(BACK_DESIGNS["train"]) >= 96  # the procedural designs the models train on
    drawn: list[str] = []
    art = card_verifier_data.card_art

    def recorded(deck: str, code: str) -> np.ndarray:
        drawn.append(f"{deck} {code}")
        return art(deck, code)

    monkeypatch.setattr(card_verifier_data, "card_art", recorded)
    assert back_faces(tmp_path, "val", 4, seed=3) == 4
    assert all(d.endswith(" back") and int(d[5:8]) in BACK_DESIGNS["val"] for d in drawn)
    faces = sorted((tmp_path / "val" / "card").glob("*.png"))
    images = [cv2.imread(str(face)) for face in faces]
    assert len(images) == 4 and all(image.shape == (64, 64, 3) for image in images)
    assert len({image.tobytes() for image in images}) == 4
    back_faces(tmp_path / "again", "val", 4, seed=3)  # a seed makes the same faces
    again = sorted((tmp_path / "again" / "val" / "card").glob("*.png"))
    assert [face.read_bytes() for face in again] == [face.read_bytes() for face in faces]


def test_a_back_is_outlined_loosely_where_it_lies(monkeypatch: pytest.MonkeyPatch) -> None:
    from training import card_verifier_data

    # a black table and no photometry: the card is what is not black
    monkeypatch.setattr(card_verifier_data, "table_surface",
                        lambda rng, size, px: np.zeros((size[1], size[0], 3), np.uint8))
    monkeypatch.setattr(card_verifier_data.effects, "apply", lambda image, p, rng: image)
    rng = np.random.default_rng(8)
    for _ in range(6):
        image, quad = back_scene(rng, BACK_DESIGNS["train"])
        card = cv2.findNonZero((image.max(axis=2) > 0).astype(np.uint8))
        true = Polygon(cv2.boxPoints(cv2.minAreaRect(card)))
        drawn = Polygon(quad)
        iou = true.intersection(drawn).area / true.union(drawn).area
        assert 0.75 < iou < 0.97  # on the card, a few pixels off (a detector's loose box)
