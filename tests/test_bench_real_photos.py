"""The real-photo benchmark: its matching (labels box what shows of a card), and the photos or
labels it cannot read."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import matching
import real_photos


def test_a_card_mostly_under_another_is_labelled_by_a_strip() -> None:
    # edje IMG_2677: a ten showing an 83 px strip beside the nine lying over it.
    nine, ten = [159.0, 112.0, 345.0, 366.0], [80.0, 114.0, 163.0, 357.0]
    apart = [400.0, 112.0, 483.0, 357.0]  # as narrow, but overlapping no label
    assert real_photos.strips([nine, ten, apart]) == [False, True, False]


def test_a_strip_is_found_inside_a_whole_outline_that_no_label_took() -> None:
    nine, ten = [159.0, 112.0, 345.0, 366.0], [80.0, 114.0, 163.0, 357.0]
    whole_ten = [78.0, 110.0, 266.0, 362.0]  # IoU with the strip 0.42: no match
    detected = [[160.0, 110.0, 344.0, 368.0], whole_ten]
    matches = real_photos.match([nine, ten], detected)
    assert [best for best, _ in matches] == [0, None]
    assert real_photos.covered_matches([nine, ten], detected, matches) == [None, 1]
    # The nine's own outline cannot count for the ten as well.
    assert real_photos.covered_matches([nine, ten], detected[:1],
                                       real_photos.match([nine, ten], detected[:1])) \
        == [None, None]


def test_pairs_are_taken_best_first_so_a_covered_card_cannot_claim_the_top_card() -> None:
    # A card half under another, listed first: the top card's outline overlaps it with IoU
    # 0.6 and its own card with 0.95. Taken in turn, the covered card took it and the top
    # card counted as missed.
    ious = {(0, 0): 0.6, (1, 0): 0.95, (0, 1): 0.1, (1, 1): 0.0}
    assert matching.best_first(2, 2, lambda k, i: ious[k, i]) == {1: 0}
    ious[0, 1] = 0.55  # the covered card's own outline
    assert matching.best_first(2, 2, lambda k, i: ious[k, i]) == {1: 0, 0: 1}


def test_an_outline_beyond_the_picture_is_matched_by_the_part_the_picture_shows() -> None:
    # edje train IMG_2615: a queen cut by the picture's left edge, outlined whole; the
    # label boxes what shows.
    label = [0.0, 42.0, 97.0, 236.0]
    whole = [-111.0, 25.0, 96.0, 245.0]
    assert real_photos.match([label], [whole])[0][0] is None  # IoU 0.41
    inside = real_photos.in_picture(whole, 378, 504)
    assert inside == [0.0, 25.0, 96.0, 245.0]
    assert real_photos.match([label], [inside])[0][0] == 0
    assert real_photos.in_picture([10.0, 20.0, 400.0, 600.0], 378, 504) == [
        10.0, 20.0, 378.0, 504.0]


def test_a_strip_is_found_by_the_box_of_what_shows_of_its_card() -> None:
    # a card half under another: labelled by the strip that shows, outlined whole
    strip = [0.0, 0.0, 40.0, 140.0]
    whole = [0.0, 0.0, 100.0, 140.0]
    assert real_photos.match([strip], [whole])[0][0] is None  # IoU 0.4
    visible = [[[0.0, 0.0], [42.0, 0.0], [42.0, 140.0], [0.0, 140.0]]]
    shown = real_photos.shown_box(visible, whole)
    assert shown == [0.0, 0.0, 42.0, 140.0]
    found, iou = real_photos.match([strip], [whole], [shown])[0]
    assert found == 0 and iou == pytest.approx(40 / 42)
    # nothing said to show: the outline's box
    assert real_photos.shown_box([], whole) == whole


BENCH = Path(__file__).resolve().parents[1] / "bench" / "real_photos.py"


def _bench(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The benchmark run on the photos under ``root`` (more ``args`` after ``--root``)."""
    return subprocess.run([sys.executable, str(BENCH), "--root", str(root), *args],
                          capture_output=True, text=True, check=False)


def _labels(root: Path, rows: list[str]) -> None:
    (root / "test").mkdir(parents=True)
    (root / "test_labels.csv").write_text(
        "filename,width,height,class,xmin,ymin,xmax,ymax\n" + "".join(f"{r}\n" for r in rows))


def test_labels_whose_best_outline_lies_near_the_finding_iou_are_counted() -> None:
    # within 0.05 of 0.5 either way: found or missed by a few pixels of outline
    assert real_photos.near_threshold([0.0, 0.449, 0.45, 0.5, 0.55, 0.551, 0.97]) == 3
    assert real_photos.near_threshold([0.46, 0.54]) == 2
    assert real_photos.near_threshold([]) == 0


def test_a_photo_that_cannot_be_read_counts_its_cards_as_missed(tmp_path: Path) -> None:
    _labels(tmp_path, ["table.png,640,480,king,100,100,190,226",
                       "broken.jpg,640,480,ace,10,10,100,136",
                       "broken.jpg,640,480,nine,200,10,290,136"])
    cv2.imwrite(str(tmp_path / "test" / "table.png"), np.full((480, 640, 3), 60, np.uint8))
    (tmp_path / "test" / "broken.jpg").write_text("not a photo")
    done = _bench(tmp_path, "--csv", str(tmp_path / "out.csv"))
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["labelled_cards"] == 3 and figures["unreadable_images"] == 1
    assert figures["recall_pct"] == 0.0 and figures["labels_near_iou_threshold"] == 0
    assert "test/broken.jpg cannot be read" in done.stderr
    rows = (tmp_path / "out.csv").read_text().splitlines()
    assert len(rows) == 1 + 3 and sum(r.startswith("broken.jpg,") for r in rows) == 2


def test_a_folder_without_labels_is_one_error_line(tmp_path: Path) -> None:
    done = _bench(tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].endswith(
        "test_labels.csv: no such file (--root: a folder with test_labels.csv and the photos "
        "in test/)")
    assert "Traceback" not in done.stderr


def test_a_class_that_names_no_rank_is_one_error_line(tmp_path: Path) -> None:
    _labels(tmp_path, ["a.png,640,480,joker,100,100,190,226"])
    done = _bench(tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "classes joker are no rank" in done.stderr.strip().splitlines()[-1]


def test_photos_resized_are_measured_against_their_labels_resized(tmp_path: Path) -> None:
    from synth import effects
    from synth.camera import Camera
    from synth.scene import Renderer, Scene, card

    camera = Camera.looking_at((0.0, 0.0), 300.0, tilt_deg=15.0, image_size=(960, 540))
    scene = Scene((card("a", "7C", "aisleriot:anglo_poker", (0.0, 0.0), 20.0),))
    clean = effects.Photometry.random(np.random.default_rng(0), clean=True)
    image, truth = Renderer(camera, np.random.default_rng(1), clean).render(scene)
    (x0, y0), (x1, y1) = np.array(truth.objects[0].corners_px).min(axis=0), \
        np.array(truth.objects[0].corners_px).max(axis=0)
    _labels(tmp_path, [f"seven.png,960,540,seven,{x0:.0f},{y0:.0f},{x1:.0f},{y1:.0f}"])
    cv2.imwrite(str(tmp_path / "test" / "seven.png"), image)
    for scale in ("1", "0.5"):
        done = _bench(tmp_path, "--scale", scale)
        assert done.returncode == 0, done.stderr
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        assert figures["scale"] == float(scale)
        assert (figures["recall_pct"], figures["rank_accuracy_of_found_pct"]) == (100.0, 100.0)
        assert figures["labels_near_iou_threshold"] == 0
    # A label box half the card's area, inside it: found or missed by a few pixels.
    (cx, cy), (w, h) = ((x0 + x1) / 2, (y0 + y1) / 2), (x1 - x0, y1 - y0)
    half = 0.5 ** 0.5 / 2
    (tmp_path / "test_labels.csv").write_text(
        "filename,width,height,class,xmin,ymin,xmax,ymax\n"
        f"seven.png,960,540,seven,{cx - w * half:.0f},{cy - h * half:.0f},"
        f"{cx + w * half:.0f},{cy + h * half:.0f}\n")
    done = _bench(tmp_path, "--csv", str(tmp_path / "near.csv"))
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["labels_near_iou_threshold"] == 1
    done = _bench(tmp_path, "--scale", "0")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "'0': give a factor from 0.1 to 8" in done.stderr.strip().splitlines()[-1]
