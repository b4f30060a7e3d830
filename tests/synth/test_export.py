"""The training-set export: YOLO-OBB labels and classification crops, reproducible."""

from __future__ import annotations

import itertools
from pathlib import Path

import cv2
import numpy as np
import pytest

from synth.export import export, suit_label


def test_export_writes_obb_labels_and_index_crops(tmp_path: Path) -> None:
    totals = export(tmp_path / "a", 6, seed=5, workers=1, progress=False)
    assert totals["images"] == 6
    images = sorted((tmp_path / "a" / "detect-obb" / "images").rglob("*.jpg"))
    labels = sorted((tmp_path / "a" / "detect-obb" / "labels").rglob("*.txt"))
    assert len(images) == len(labels) == 6
    rows = [line.split() for p in labels for line in p.read_text().splitlines()]
    assert len(rows) == totals["cards"] > 0
    for row in rows:
        assert row[0] == "0" and len(row) == 9
        assert all(0.0 <= float(v) <= 1.0 for v in row[1:])
    crops = list((tmp_path / "a" / "classify").rglob("*.png"))
    assert len(crops) == totals["crops"] > 0
    classes = {p.parent.name for p in crops}
    assert "other" in classes and classes <= {*_codes(), "JK", "back", "other"}
    assert cv2.imread(str(crops[0])).shape == (64, 64, 3)
    assert "names:\n  0: card" in (tmp_path / "a" / "detect-obb" / "data.yaml").read_text()


def test_export_is_deterministic_from_its_seed(tmp_path: Path) -> None:
    export(tmp_path / "a", 3, seed=9, workers=1, progress=False)
    export(tmp_path / "b", 3, seed=9, workers=2, progress=False)
    for label in sorted((tmp_path / "a" / "detect-obb" / "labels").rglob("*.txt")):
        twin = tmp_path / "b" / label.relative_to(tmp_path / "a")
        assert label.read_text() == twin.read_text()
    first = sorted((tmp_path / "a" / "detect-obb" / "images").rglob("*.jpg"))[0]
    twin = tmp_path / "b" / first.relative_to(tmp_path / "a")
    assert np.array_equal(cv2.imread(str(first)), cv2.imread(str(twin)))


def test_export_writes_whole_faces_of_uncovered_cards(tmp_path: Path) -> None:
    export(tmp_path / "a", 4, seed=5, workers=1, progress=False)
    totals = export(tmp_path / "f", 4, seed=5, workers=1, progress=False, faces_only=True)
    faces = list((tmp_path / "f" / "faces").rglob("*.png"))
    assert len(faces) == totals["crops"] > 4  # several uncovered cards per image
    assert not list((tmp_path / "f" / "classify").rglob("*.png"))  # faces only
    assert cv2.imread(str(faces[0])).shape == (64, 64, 3)
    assert {p.parent.name for p in faces} <= {*_codes(), "JK", "back"}
    # An ordinary export writes faces too, beside the index crops, with table as "other".
    assert {p.parent.name for p in (tmp_path / "a" / "faces").rglob("*.png")} >= {"other"}
    # Each face's two end bands, in its suit's folder (none for a back or joker).
    bands = list((tmp_path / "f" / "suits").rglob("*.png"))
    assert len(bands) == 2 * len(faces)
    suit_of = {face.stem: suit_label(face.parent.name) for face in faces}
    assert all(suit_of[band.stem.rsplit("_", 1)[0]] == band.parent.name for band in bands)
    assert [suit_label(c) for c in ("AS", "TD", "KH", "2C", "JK", "back")] == \
        ["S", "D", "H", "C", "none", "none"]


def _codes() -> list[str]:
    return [r + s for r in "A23456789TJQK" for s in "SHDC"]


def test_a_wider_uncovered_view_shows_smaller_cards() -> None:
    from synth.random_scenes import random_scene

    def card_width(view_mm: tuple[float, float]) -> float:
        renderer, scene, _ = random_scene(np.random.default_rng(3), "train", uncovered=True,
                                          uncovered_view_mm=view_mm)
        _, truth = renderer.render(scene)
        widths = [min(np.linalg.norm(np.diff(np.array(o.corners_px), axis=0), axis=1))
                  for o in truth.objects if o.kind == "card"]
        return float(np.median(widths))

    assert card_width((900.0, 901.0)) < 0.6 * card_width((450.0, 451.0))


def test_merging_exports_again_replaces_an_earlier_merge(tmp_path: Path) -> None:
    from training.card_index import merged

    def source(name: str, label: str) -> Path:
        crop = tmp_path / name / "classify" / "train" / label / "train_000001_card1_0.png"
        crop.parent.mkdir(parents=True)
        crop.write_bytes(name.encode())
        return crop.parents[2]

    out = tmp_path / "merged"
    merged([source("a", "2C"), source("b", "3C")], out)
    merged([source("c", "4C"), source("d", "5C")], out)
    crops = sorted(out.rglob("*.png"))
    # The same file names as the first merge's: each must now be the new source's crop.
    assert [(p.parent.name, p.read_bytes()) for p in crops] == [("4C", b"c"), ("5C", b"d")]


def test_faces_are_merged_without_the_table_patches(tmp_path: Path) -> None:
    from training.card_index import NOT_FACES, merged

    for split, label in (("train", "2C"), ("train", "other"), ("val", "back"), ("val", "other")):
        crop = tmp_path / "cards" / "faces" / split / label / "x.png"
        crop.parent.mkdir(parents=True)
        crop.write_bytes(b"png")
    out = merged([tmp_path / "cards" / "faces"], tmp_path / "merged", NOT_FACES)
    assert sorted(p.relative_to(out).parent.as_posix() for p in out.rglob("*.png")) == [
        "train/2C", "val/back"]


def test_covered_kinds_add_stacks_and_things_lying_on_cards() -> None:
    from synth.random_scenes import random_scene

    def count(covered: bool) -> tuple[int, int]:
        rng = np.random.default_rng(11)
        things_on_cards = stacks = 0
        for _ in range(40):
            _, scene, _ = random_scene(rng, "train", covered_kinds=covered)
            cards = [o for o in scene.objects if o.kind == "card"]
            over = [i for i, o in enumerate(scene.objects) if o.uid.startswith("over")]
            if over:
                things_on_cards += 1
                # Drawn after (so above) every card.
                assert min(over) > scene.objects.index(cards[-1])
            angles = [o.angle_deg for o in cards]
            gaps = [float(np.hypot(a.center[0] - b.center[0], a.center[1] - b.center[1]))
                    for a, b in itertools.pairwise(cards)]
            stacks += len(cards) >= 2 and np.ptp(angles) < 20 and max(gaps) < 22
        return things_on_cards, stacks

    plain, covered = count(False), count(True)
    assert plain[0] == 0 and covered[0] >= 5
    assert covered[1] >= plain[1] + 4


def test_an_overlapping_row_covers_part_of_each_card_and_leaves_an_index_showing() -> None:
    from shapely.ops import unary_union

    from synth.random_scenes import _overlapping_row
    from synth.scene import card

    rng = np.random.default_rng(3)
    for _ in range(100):
        row = _overlapping_row(rng, int(rng.integers(2, 6)))
        cards = [card(f"c{i}", "2C", "proc:00", (x, y), a) for i, (x, y, a) in enumerate(row)]
        for i, below in enumerate(cards[:-1]):
            above = unary_union([c.outline() for c in cards[i + 1:]])
            assert cards[i + 1].outline().intersection(below.outline()).area > 0
            assert any(region.difference(above).area > 0.8 * region.area
                       for region in below.index_regions())


def test_overlapping_rows_come_in_close_ups(monkeypatch: pytest.MonkeyPatch) -> None:
    import synth.random_scenes as scenes

    def count(overlapping: bool) -> int:
        laid: list[list[tuple[float, float, float]]] = []
        real = scenes._overlapping_row
        monkeypatch.setattr(scenes, "_overlapping_row",
                            lambda rng, n: laid.append(real(rng, n)) or laid[-1])
        views: list[float] = []
        real_camera = scenes.random_camera
        monkeypatch.setattr(scenes, "random_camera", lambda *a, **k: views.append(
            k["view_mm"][0]) or real_camera(*a, **k))
        rng = np.random.default_rng(5)
        for _ in range(60):
            before = len(laid)
            _, scene, _ = scenes.random_scene(rng, "train", overlapping_rows=overlapping)
            if len(laid) == before:
                continue
            # The scene's cards lie as laid, and it is a close-up: its camera frames
            # 110-330 mm of table (a webcam's view, 420-800 mm). The camera's distance
            # does not tell them apart: a close-up's can reach 420 mm.
            cards = [o for o in scene.objects if o.kind == "card"]
            assert np.allclose([c.center for c in cards], [(x, y) for x, y, _ in laid[-1]])
            assert 110 <= views[-1] <= 330
        return len(laid)

    assert count(False) == 0
    assert count(True) >= 5


def test_export_cuts_index_corners_as_asked_and_records_the_cut(tmp_path: Path) -> None:
    import json

    export(tmp_path / "a", 2, seed=5, workers=1, progress=False)
    export(tmp_path / "b", 2, seed=5, workers=1, progress=False, index_mm=(26.0, 40.0))
    assert json.loads((tmp_path / "a" / "export.json").read_text())["index_mm"] == [26.0, 32.0]
    assert json.loads((tmp_path / "b" / "export.json").read_text())["index_mm"] == [26.0, 40.0]
    crops = sorted(p.relative_to(tmp_path / "a")
                   for p in (tmp_path / "a" / "classify").rglob("*.png"))
    assert crops == sorted(p.relative_to(tmp_path / "b")
                           for p in (tmp_path / "b" / "classify").rglob("*.png"))
    # The same cards, cut taller: each crop is still 64 x 64, but shows more of the card.
    card = next(c for c in crops if "other" not in c.parts)
    short, tall = (cv2.imread(str(tmp_path / side / card)) for side in "ab")
    assert short.shape == tall.shape == (64, 64, 3)
    assert not np.array_equal(short, tall)


def test_joker_scenes_show_the_joker_and_otherwise_the_same_scene() -> None:
    """``joker=True`` (``export --jokers``, for the suit model's ``none`` of jokers): every
    scene shows its design's joker, in place of one of the cards it would show."""
    from synth.random_scenes import random_scene

    changed = 0
    for seed in range(12):
        _, plain, deck = random_scene(np.random.default_rng(seed), "train", uncovered=True)
        _, joker, joker_deck = random_scene(np.random.default_rng(seed), "train",
                                            uncovered=True, joker=True)
        labels = [o.label for o in plain.objects if o.kind == "card"]
        joker_labels = [o.label for o in joker.objects if o.kind == "card"]
        assert joker_deck == deck and len(joker_labels) == len(labels)
        differ = [(a, b) for a, b in zip(labels, joker_labels, strict=True) if a != b]
        # One card became the joker (labelled "back" when it lies face down, as 8% do).
        assert differ in ([], [(differ[0][0] if differ else "", "JK")])
        assert "JK" in joker_labels or "back" in joker_labels
        changed += bool(differ)
    assert changed >= 6  # most scenes had no joker of their own


def test_back_scenes_turn_more_cards_face_down_and_are_otherwise_the_same_scene() -> None:
    """``backs=True`` (``export --backs``, backs for the index model to learn): about a
    quarter of the cards that would lie face up lie face down, where they would lie."""
    from synth.random_scenes import random_scene

    cards = backs = plain_backs = 0
    for seed in range(30):
        _, plain, deck = random_scene(np.random.default_rng(seed), "train")
        _, more, more_deck = random_scene(np.random.default_rng(seed), "train", backs=True)
        a = [o for o in plain.objects if o.kind == "card"]
        b = [o for o in more.objects if o.kind == "card"]
        assert more_deck == deck and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert x.center == y.center and x.angle_deg == y.angle_deg
            assert y.label in (x.label, "back")
        cards += len(a)
        backs += sum(o.label == "back" for o in b)
        plain_backs += sum(o.label == "back" for o in a)
    assert plain_backs / cards < 0.15 and 0.2 < backs / cards < 0.45


def test_export_with_backs_writes_more_back_crops_and_says_so(tmp_path: Path) -> None:
    """``export(backs=True)`` reaches the scenes (``--backs``): more index crops of backs
    than the same seed's plain export, and ``export.json`` records it."""
    import json

    export(tmp_path / "a", 6, seed=7, workers=1, progress=False)
    export(tmp_path / "b", 6, seed=7, workers=1, progress=False, backs=True)
    plain, more = (len(list((tmp_path / side / "classify").rglob("back/*.png")))
                   for side in "ab")
    assert more >= plain + 4
    assert json.loads((tmp_path / "b" / "export.json").read_text())["backs"] is True
    assert json.loads((tmp_path / "a" / "export.json").read_text())["backs"] is False
