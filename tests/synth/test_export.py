"""The training-set export: YOLO-OBB labels and classification crops, reproducible."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from synth.export import export


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


def _codes() -> list[str]:
    return [r + s for r in "A23456789TJQK" for s in "SHDC"]
