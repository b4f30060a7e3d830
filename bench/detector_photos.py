"""Benchmark: a trained OBB card detector (ultralytics weights) on the real photos.

    pip install -e '.[train]'   # ultralytics; this benchmark is for trained candidates
    python bench/detector_photos.py --weights /tmp/card_detector_runs/card_detector/weights/best.pt

Same matching as bench/real_photos.py (a labelled card is found when a detection's
axis-aligned box overlaps its box with IoU >= 0.5, one detection per label); detection
only, no identity. Prints recall and precision per split at the given confidence.
"""

from __future__ import annotations

import argparse
import collections
import csv
import json
import os
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "edje-cards"


def _iou(a: list[float], b: list[float]) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", type=Path, required=True)
    parser.add_argument("--imgsz", type=int, default=480)
    parser.add_argument("--conf", type=float, default=0.25)
    parser.add_argument("--root", type=Path, default=ROOT)
    args = parser.parse_args()
    os.environ.setdefault("YOLO_OFFLINE", "1")
    from ultralytics import YOLO  # training-only dependency

    model = YOLO(str(args.weights))
    for split in ("test", "train"):
        labels: dict[str, list[list[float]]] = collections.defaultdict(list)
        with (args.root / f"{split}_labels.csv").open() as handle:
            for row in csv.DictReader(handle):
                labels[row["filename"]].append(
                    [float(row[k]) for k in ("xmin", "ymin", "xmax", "ymax")])
        found = missed = false_pos = 0
        seconds = 0.0
        for name, boxes in sorted(labels.items()):
            started = time.perf_counter()
            result = model.predict(str(args.root / split / name), imgsz=args.imgsz,
                                   conf=args.conf, device="cpu", verbose=False)[0]
            seconds += time.perf_counter() - started
            polygons = result.obb.xyxyxyxy.cpu().numpy() if result.obb is not None else []
            detected = [[float(p[:, 0].min()), float(p[:, 1].min()), float(p[:, 0].max()),
                         float(p[:, 1].max())] for p in np.asarray(polygons)]
            used: set[int] = set()
            for box in boxes:
                scored = [(_iou(box, d), i) for i, d in enumerate(detected) if i not in used]
                best_iou, best = max(scored, default=(0.0, -1))
                if best_iou >= 0.5:
                    used.add(best)
                    found += 1
                else:
                    missed += 1
            false_pos += len(detected) - len(used)
        print(json.dumps({
            "split": split, "labelled_cards": found + missed,
            "recall_pct": round(100 * found / max(found + missed, 1), 1),
            "precision_pct": round(100 * found / max(found + false_pos, 1), 1),
            "ms_per_image": round(1000 * seconds / max(len(labels), 1), 1),
        }))


if __name__ == "__main__":
    main()
