"""Benchmark: cards in real photographs (shared/realdata/edje-cards), never trained on.

    python bench/real_photos.py --split test --csv models/eval/edje_test.csv

(``--csv`` also writes the detections no label took, beside it: ``edje_test_unmatched.csv``.)

Detection: a labelled card is found when a detected outline's axis-aligned bounding box
overlaps its box with IoU >= 0.5 (one detection per label). The box is taken within the
picture: a card the frame cuts is outlined whole, beyond the picture's edge, and labelled by
the part the picture shows (``recall_unclipped_pct`` and ``precision_unclipped_pct``: the
boxes not so cut). Rank accuracy: of the found
cards, those whose read rank matches the label (the labels give ranks 9-A only, no suits).

The labels box what shows of a card, so a card mostly under another (or out of the picture)
is labelled by a strip (``strip``: narrower than 0.6 of its length, touching or overlapping
another label), while the referee outlines the whole card. Such a card cannot reach IoU 0.5,
so the figures are also given apart: for the other labels, and with a strip found when it
lies at least 80% inside an unused outline's box (``covered_found_pct``). And by what shows
(``recall_shown_pct``, ``precision_shown_pct``, ``rank_accuracy_shown_pct``; ``found_shown``
in the CSV): a label is then found by a detection when its IoU is at least 0.5 with the box
of the outline or with the box of what shows of it (``visible`` in ``referee detect``'s
JSON: the outline less the cards judged to lie on it).

Other photos measure the same way: ``--root DIR`` names a folder holding ``SPLIT_labels.csv``
(``filename,width,height,class,xmin,ymin,xmax,ymax``, classes the ranks' names ``two`` to
``ace``) and the photos in ``SPLIT/``. A photo that cannot be read is named on stderr and its
labelled cards count as missed (``unreadable_images``).

``labels_near_iou_threshold`` counts the fragile labels: those whose best outline's box (the
CSV's ``iou``; not the box of what shows) lies within ``NEAR_IOU`` (0.05) of the IoU that
finds a label, so that an outline a few pixels larger or smaller finds or misses them. It
says how fragile recall is, not how far it can move: a detector of the same function
(rebuilt from its ONNX file) changed 4 test and 14 train labels' found or read, 6 of them
such labels (session 46 in models/README.md).

``--scale F`` measures the same photos resized by F (and their labels with them: INTER_AREA
smaller, bicubic larger), as a camera with more or fewer pixels, or farther off, would see
them. Made larger they are blurred rather than sharp, so that says less than a smaller scale.
"""

from __future__ import annotations

import argparse
import collections
import csv
import json
import sys
import time
from pathlib import Path

import cv2
import finders
import numpy as np
from matching import MIN_IOU, best_first

from referee.detection.detect import detect

ROOT = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "edje-cards"
RANKS = {"two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
         "eight": "8", "nine": "9", "ten": "T", "jack": "J", "queen": "Q", "king": "K",
         "ace": "A"}


def _iou(a: list[float], b: list[float]) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


#: How near ``MIN_IOU`` a label's best IoU lies to count as near it (``near_threshold``).
NEAR_IOU = 0.05


def near_threshold(ious: list[float]) -> int:
    """How many of the labels' best IoUs lie within ``NEAR_IOU`` of ``MIN_IOU``, either side
    (the ends too: the CSV's IoUs have three decimals)."""
    return sum(round(abs(value - MIN_IOU), 3) <= NEAR_IOU for value in ious)


def box_of(corners: np.ndarray) -> list[float]:
    (x0, y0), (x1, y1) = corners.min(axis=0), corners.max(axis=0)
    return [float(x0), float(y0), float(x1), float(y1)]


def in_picture(box: list[float], width: int, height: int) -> list[float]:
    """The part of ``box`` inside a picture ``width`` x ``height``: a card the frame cuts is
    outlined whole, the part beyond the picture too, and labelled by what the picture shows."""
    return [max(0.0, box[0]), max(0.0, box[1]), min(float(width), box[2]),
            min(float(height), box[3])]


def load_labels(root: Path, split: str) -> dict[str, list[tuple[str, list[float]]]]:
    """Labelled boxes per image: (rank class, [xmin, ymin, xmax, ymax])."""
    labels: dict[str, list[tuple[str, list[float]]]] = collections.defaultdict(list)
    with (root / f"{split}_labels.csv").open() as handle:
        for row in csv.DictReader(handle):
            box = [float(row[k]) for k in ("xmin", "ymin", "xmax", "ymax")]
            labels[row["filename"]].append((row["class"], box))
    return labels


def match(boxes: list[list[float]], detected: list[list[float]],
          shown: list[list[float]] | None = None) -> list[tuple[int | None, float]]:
    """For each labelled box, the detection paired with it (``best_first``; else None) and
    the best IoU any detection has with it (with ``shown``, each detection's IoU is the
    better of its box's and of the box of what shows of it)."""
    def iou(box: list[float], i: int) -> float:
        whole = _iou(box, detected[i])
        return whole if shown is None else max(whole, _iou(box, shown[i]))

    pairs = best_first(len(boxes), len(detected), lambda k, i: iou(boxes[k], i))
    return [(pairs.get(k), max((iou(box, i) for i in range(len(detected))), default=0.0))
            for k, box in enumerate(boxes)]


def shown_box(visible: list[list[list[float]]], whole: list[float]) -> list[float]:
    """The box of what shows of a card (``visible``: its polygons; ``whole``: the box of its
    outline within the picture, when nothing is said to show)."""
    points = [point for part in visible for point in part]
    return box_of(np.array(points)) if points else whole


def _area(box: list[float]) -> float:
    return max(0.0, box[2] - box[0]) * max(0.0, box[3] - box[1])


def _inside(box: list[float], outer: list[float]) -> float:
    """The share of ``box`` that lies inside ``outer``."""
    inner = [max(box[0], outer[0]), max(box[1], outer[1]),
             min(box[2], outer[2]), min(box[3], outer[3])]
    return _area(inner) / max(_area(box), 1e-9)


def strips(boxes: list[list[float]]) -> list[bool]:
    """Which labelled boxes are the strip that shows of a card under another: narrower
    than 0.6 of their length, with another label touching or overlapping them (within
    5% of their length)."""
    out = []
    for k, box in enumerate(boxes):
        w, h = box[2] - box[0], box[3] - box[1]
        near = 0.05 * max(w, h)
        grown = [box[0] - near, box[1] - near, box[2] + near, box[3] + near]
        touched = any(_inside(other, grown) > 0 for j, other in enumerate(boxes) if j != k)
        out.append(min(w, h) < 0.6 * max(w, h) and touched)
    return out


def covered_matches(boxes: list[list[float]], detected: list[list[float]],
                    matches: list[tuple[int | None, float]],
                    is_strip: list[bool] | None = None) -> list[int | None]:
    """For the strip labels ``match`` left unfound: the detection, of those no label took,
    whose box the strip lies at least 80% inside, if any (``is_strip``: ``strips(boxes)``,
    when the caller has it already)."""
    used = {best for best, _ in matches if best is not None}
    out: list[int | None] = []
    strip_flags = strips(boxes) if is_strip is None else is_strip
    for box, is_strip_box, (best, _) in zip(boxes, strip_flags, matches, strict=True):
        hit = None
        if is_strip_box and best is None:
            free = [(_inside(box, d), i) for i, d in enumerate(detected) if i not in used]
            share, i = max(free, default=(0.0, -1))
            if share >= 0.8:
                used.add(i)
                hit = i
        out.append(hit)
    return out


UNMATCHED_FIELDS = ["image", "read", "confidence", "xmin", "ymin", "xmax", "ymax",
                    "covers_strip"]


def _unmatched_path(path: Path) -> Path:
    """Beside ``--csv FILE``: FILE's stem + ``_unmatched``, one row per detection no label
    took (``covers_strip``: the whole outline of a card a strip labels)."""
    return path.with_name(f"{path.stem}_unmatched{path.suffix}")


def _scale(text: str) -> float:
    try:
        factor = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is no number") from None
    if not 0.1 <= factor <= 8:
        raise argparse.ArgumentTypeError(f"{text!r}: give a factor from 0.1 to 8")
    return factor


def resized(image: np.ndarray, factor: float) -> np.ndarray:
    """``image`` scaled by ``factor`` (area-averaged smaller, bicubic larger)."""
    method = cv2.INTER_AREA if factor < 1 else cv2.INTER_CUBIC
    return np.asarray(cv2.resize(image, None, fx=factor, fy=factor, interpolation=method))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="test", choices=["train", "test"])
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--csv", type=Path)
    parser.add_argument("--scale", type=_scale, default=1.0,
                        help="resize each photo and its labels by this factor first, 0.1 "
                             "to 8 (default 1: as taken); the CSVs' boxes are then in the "
                             "resized photos' pixels")
    finders.add_arguments(parser)
    args = parser.parse_args()
    if not (args.root / f"{args.split}_labels.csv").is_file():
        parser.error(f"{args.root / f'{args.split}_labels.csv'}: no such file (--root: a folder "
                     f"with {args.split}_labels.csv and the photos in {args.split}/)")
    labels = load_labels(args.root, args.split)
    unknown = sorted({label for boxes in labels.values() for label, _ in boxes} - set(RANKS))
    if unknown:
        parser.error(f"{args.split}_labels.csv: classes {', '.join(unknown)} are no rank "
                     f"(known: {', '.join(RANKS)})")
    identifier, detector, shapes_too = finders.models(args)
    verifier = finders.verifier(args)
    corner_model = finders.corner_model(args)
    found = false_pos = missed = rank_ok = found_unclipped = detections = 0
    found_shown = rank_ok_shown = 0
    strip_total = strip_found = covered_found = 0
    rows: list[dict[str, object]] = []
    unmatched: list[dict[str, object]] = []
    seconds = 0.0
    unreadable = 0
    for name, boxes in sorted(labels.items()):
        boxes = [(label, [v * args.scale for v in box]) for label, box in boxes]
        image = cv2.imread(str(args.root / args.split / name))
        if image is None:
            # (its cards are labelled and not found: they count as missed, not as absent)
            print(f"real_photos: {args.split}/{name} cannot be read: its labelled cards "
                  f"({len(boxes)}) count as missed", file=sys.stderr)
            unreadable += 1
            missed += len(boxes)
            is_strip = strips([box for _, box in boxes])
            strip_total += sum(is_strip)
            rows.extend({"image": name, "label": label, "found": False, "iou": 0.0, "read": "",
                         "strip": strip, "found_shown": False}
                        for (label, _), strip in zip(boxes, is_strip, strict=True))
            continue
        if args.scale != 1.0:
            image = resized(image, args.scale)
        started = time.perf_counter()
        cards = detect(image, identifier, detector, shapes_too, verifier, corner_model).cards
        seconds += time.perf_counter() - started
        height, width = image.shape[:2]
        whole = [box_of(np.array(c.corners)) for c in cards]
        detected = [in_picture(box, width, height) for box in whole]
        label_boxes = [box for _, box in boxes]
        matches = match(label_boxes, detected)
        shown = [shown_box(c.visible, box) for c, box in zip(cards, detected, strict=True)]
        by_shown = match(label_boxes, detected, shown)
        found_shown += sum(b is not None for b, _ in by_shown)
        rank_ok_shown += sum(b is not None and cards[b].card[:1] == RANKS[label]
                             for (label, _), (b, _) in zip(boxes, by_shown, strict=True))
        found_unclipped += sum(b is not None for b, _ in match(label_boxes, whole))
        detections += len(detected)
        is_strip = strips(label_boxes)
        covering = covered_matches(label_boxes, detected, matches, is_strip)
        strip_total += sum(is_strip)
        strip_found += sum(s and b is not None for s, (b, _) in zip(is_strip, matches, strict=True))
        covered_found += sum(c is not None for c in covering)
        taken = {b for b, _ in matches if b is not None}
        for i, (card, box) in enumerate(zip(cards, detected, strict=True)):
            if i not in taken:  # a false find, or the whole outline of a card a strip labels
                unmatched.append({"image": name, "read": card.card,
                                  "confidence": card.confidence,
                                  **dict(zip(("xmin", "ymin", "xmax", "ymax"),
                                             (round(v, 1) for v in box), strict=True)),
                                  "covers_strip": i in covering})
        for (label, _), (best, best_iou), strip, (seen, _) in zip(
                boxes, matches, is_strip, by_shown, strict=True):
            hit = best is not None
            read = cards[best].card if best is not None else ""
            if hit:
                found += 1
                rank_ok += read[:1] == RANKS[label]
            else:
                missed += 1
            rows.append({"image": name, "label": label, "found": hit, "iou": round(best_iou, 3),
                         "read": read, "strip": strip, "found_shown": seen is not None})
        false_pos += len(detected) - sum(b is not None for b, _ in matches)
    if args.csv:
        args.csv.parent.mkdir(parents=True, exist_ok=True)
        with args.csv.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        # the detections no label took, which the precision counts against
        with _unmatched_path(args.csv).open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=UNMATCHED_FIELDS)
            writer.writeheader()
            writer.writerows(unmatched)
    print(json.dumps({
        "split": args.split, "scale": args.scale, "finder": args.finder,
        "verifier": args.verifier,
        "runtime": finders.runtime(detector),
        "images": len(labels),
        "unreadable_images": unreadable,
        "labelled_cards": found + missed,
        "recall_pct": round(100 * found / max(found + missed, 1), 1),
        "precision_pct": round(100 * found / max(found + false_pos, 1), 1),
        "recall_unclipped_pct": round(100 * found_unclipped / max(found + missed, 1), 1),
        "precision_unclipped_pct": round(100 * found_unclipped / max(detections, 1), 1),
        "rank_accuracy_of_found_pct": round(100 * rank_ok / max(found, 1), 1),
        "strip_labels": strip_total,
        "recall_other_labels_pct": round(100 * (found - strip_found)
                                         / max(found + missed - strip_total, 1), 1),
        "covered_found_pct": round(100 * (found + covered_found) / max(found + missed, 1), 1),
        "covered_precision_pct": round(100 * (found + covered_found)
                                       / max(found + false_pos, 1), 1),
        "recall_shown_pct": round(100 * found_shown / max(found + missed, 1), 1),
        "precision_shown_pct": round(100 * found_shown / max(detections, 1), 1),
        "rank_accuracy_shown_pct": round(100 * rank_ok_shown / max(found_shown, 1), 1),
        "labels_near_iou_threshold": near_threshold(
            [float(row["iou"]) for row in rows]),  # type: ignore[arg-type]
        "ms_per_image": round(1000 * seconds / max(len(labels) - unreadable, 1), 1),
    }))


if __name__ == "__main__":
    main()
