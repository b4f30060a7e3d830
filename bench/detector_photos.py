"""Benchmark: a trained OBB card detector (ultralytics weights) on the real photos.

    pip install -e '.[train]'   # ultralytics; this benchmark is for trained candidates
    python bench/detector_photos.py --weights /tmp/card_detector_runs/card_detector/weights/best.pt

Same matching as bench/real_photos.py (a labelled card is found when a detection's
axis-aligned box overlaps its box with IoU >= 0.5, one detection per label); detection
only, no identity. Prints recall and precision per split at the given confidence.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
from real_photos import ROOT, box_of, load_labels, match  # the same labels and matching


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
        labels = load_labels(args.root, split)
        found = missed = false_pos = 0
        seconds = 0.0
        for name, boxes in sorted(labels.items()):
            started = time.perf_counter()
            result = model.predict(str(args.root / split / name), imgsz=args.imgsz,
                                   conf=args.conf, device="cpu", verbose=False)[0]
            seconds += time.perf_counter() - started
            polygons = result.obb.xyxyxyxy.cpu().numpy() if result.obb is not None else []
            detected = [box_of(p) for p in np.asarray(polygons)]
            matches = match([box for _, box in boxes], detected)
            hits = sum(best is not None for best, _ in matches)
            found += hits
            missed += len(boxes) - hits
            false_pos += len(detected) - hits
        print(json.dumps({
            "split": split, "labelled_cards": found + missed,
            "recall_pct": round(100 * found / max(found + missed, 1), 1),
            "precision_pct": round(100 * found / max(found + false_pos, 1), 1),
            "ms_per_image": round(1000 * seconds / max(len(labels), 1), 1),
        }))


if __name__ == "__main__":
    main()
