"""Benchmark: the card detector's own scores on the real photos, before anything reads a box.

    python bench/detector_scores.py --split test [--detector FILE]

``referee detect`` keeps, reads and verifies the detector's boxes by rules whose thresholds
were chosen with the shipped detector; a detector trained afresh scores real cards on a
scale of its own, so its figures in ``bench/real_photos.py`` mix what it sees with how well
those thresholds suit it. This prints what the detector alone gives, at every score
threshold in ``THRESHOLDS``: the share of labelled cards (those not labelled by the strip
that shows of them, ``real_photos.strips``, which a whole outline cannot match) that a box
scored at least that much finds (its axis-aligned box, within the picture, has IoU at least
0.5 with the label, as in ``real_photos``; here one box may find several labels), and how
many boxes scored at least that much overlap no label (IoU under ``NO_LABEL_IOU`` with every
one). The boxes are ``CardDetector.find``'s at its lowest threshold, moved onto the card's
edges as ``referee detect`` moves them, without the mirrored pass.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2
import numpy as np
from real_photos import ROOT, _iou, box_of, in_picture, load_labels, strips

from referee.detection.learned import DEFAULT_DETECTOR, CardDetector

THRESHOLDS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)
#: A label is found by a box whose IoU with it is at least MATCH_IOU (as in real_photos); a
#: box overlapping every label less than NO_LABEL_IOU is on no labelled card.
MATCH_IOU, NO_LABEL_IOU = 0.5, 0.3


def scores_of(labels: list[list[float]], boxes: list[tuple[list[float], float]]
              ) -> tuple[list[float], list[float]]:
    """For each label not a strip, the best score of a box that finds it (0 when none);
    and the scores of the boxes on no label."""
    is_strip = strips(labels)
    found = [max((score for box, score in boxes if _iou(label, box) >= MATCH_IOU), default=0.0)
             for label, strip in zip(labels, is_strip, strict=True) if not strip]
    stray = [score for box, score in boxes
             if all(_iou(label, box) < NO_LABEL_IOU for label in labels)]
    return found, stray


def table(found: list[float], stray: list[float]) -> list[dict[str, float]]:
    """Per threshold: the labels found (%) and the boxes on no label."""
    return [{"threshold": t,
             "labels_found_pct": round(100 * float(np.mean([s >= t for s in found])), 1)
             if found else 0.0,
             "boxes_on_no_label": sum(s >= t for s in stray)} for t in THRESHOLDS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="test", choices=["train", "test"])
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--detector", type=Path, default=DEFAULT_DETECTOR)
    args = parser.parse_args()
    detector = CardDetector(args.detector)
    found: list[float] = []
    stray: list[float] = []
    for name, labelled in sorted(load_labels(args.root, args.split).items()):
        image = cv2.imread(str(args.root / args.split / name))
        if image is None:
            raise SystemExit(f"cannot read {args.root / args.split / name}")
        height, width = image.shape[:2]
        # a card the frame cuts is outlined whole and labelled by what the picture shows
        boxes = [(in_picture(box_of(np.asarray(o.corners, np.float64)), width, height),
                  float(o.score)) for o in detector.find(image, min(THRESHOLDS))]
        more_found, more_stray = scores_of([box for _, box in labelled], boxes)
        found += more_found
        stray += more_stray
    print(json.dumps({"split": args.split, "detector": str(args.detector),
                      "runtime": detector.runtime,
                      "labels_not_strips": len(found), "by_threshold": table(found, stray)}))


if __name__ == "__main__":
    main()
