"""Export rendered scenes as training sets in the formats ultralytics trains on.

    python -m synth.export --out /tmp/cards --count 5000 --seed 1

writes, deterministically from the seed:
- ``detect-obb/``: images and YOLO-OBB labels of every card (class 0, its whole outline,
  covered part included) that is at least 20% visible, with ``data.yaml``;
- ``classify/``: each readable index corner, warped by ``referee.detection.crops`` exactly
  as at run time, in a folder per class (card code, ``JK``, ``back``, ``other``);
- ``faces/``: the whole face of each card that is fully in view and uncovered, warped the
  same way, in the same folders;
- ``suits/`` (``--faces-only`` exports): both end bands of those cards
  (``crops.band_crops``), in a folder per suit (``C D H S``, and ``none`` for backs and
  jokers). ``--jokers`` puts each scene's joker among its cards (otherwise one card in 53
  is a joker: too few ``none`` bands of jokers for the suit model); ``--backs`` turns about
  a quarter of the other cards face down (8% otherwise).

Images 0..n-1 of split ``train`` use the training decks; ``--val-fraction`` of them use the
validation decks instead. Held-out decks are never exported.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from tqdm import tqdm

from referee.detection.crops import INDEX_MM, band_crops, card_crops, corner_of
from synth.procedural import turned_index_hidden
from synth.random_scenes import UNCOVERED_VIEW_MM, random_scene

MIN_VISIBLE = 0.2  # cards less visible than this are not labelled for detection
#: With ``--covered-kinds`` (stacks squared up, things on cards) a sliver of a card is
#: labelled too: the real photos' labels include cards mostly under another.
MIN_VISIBLE_COVERED = 0.12
MIN_INDEX_VISIBLE = 0.85  # an index corner at least this visible is a classification sample
MIN_CARD_WIDTH_PX = 45.0  # narrower cards have indices too small to read: no crop
MIN_FACE_VISIBLE = 0.97  # a card at least this visible is a face sample


@dataclass(frozen=True)
class Job:
    index: int
    seed: int
    split: str
    out: Path
    portrait: bool
    faces_only: bool = False
    view_mm: tuple[float, float] = UNCOVERED_VIEW_MM
    covered_kinds: bool = False
    overlapping_rows: bool = False
    index_mm: tuple[float, float] = INDEX_MM
    jokers: bool = False
    backs: bool = False


def _sizes(portrait: bool) -> tuple[int, int]:
    return (540, 720) if portrait else (960, 540)


def _obb_line(corners: np.ndarray, size: tuple[int, int]) -> str | None:
    width, height = size
    inside = (corners[:, 0] >= -0.25 * width) & (corners[:, 0] <= 1.25 * width) & \
             (corners[:, 1] >= -0.25 * height) & (corners[:, 1] <= 1.25 * height)
    if not inside.all():
        return None
    normal = np.clip(corners / np.array([width, height]), 0.0, 1.0)
    return "0 " + " ".join(f"{v:.6f}" for v in normal.ravel())


def render_one(job: Job) -> dict[str, Any]:
    rng = np.random.default_rng([job.seed, job.index])
    size = _sizes(job.portrait)
    renderer, scene, deck = random_scene(rng, job.split, image_size=size,  # type: ignore[arg-type]
                                         uncovered=job.faces_only,
                                         uncovered_view_mm=job.view_mm,
                                         covered_kinds=job.covered_kinds,
                                         overlapping_rows=job.overlapping_rows,
                                         joker=job.jokers, backs=job.backs)
    image, truth = renderer.render(scene)
    name = f"{job.split}_{job.index:06d}"
    split_dir = "val" if job.split == "val" else "train"
    if job.faces_only:
        return {"cards": 0, "crops": _face_crops(image, truth, job, name), "deck": deck}
    cv2.imwrite(str(job.out / "detect-obb" / "images" / split_dir / f"{name}.jpg"), image,
                [cv2.IMWRITE_JPEG_QUALITY, 92])
    lines: list[str] = []
    crops = 0
    for obj in truth.objects:
        if obj.kind != "card":
            continue
        corners = np.array(obj.corners_px)
        if obj.visible_fraction >= (MIN_VISIBLE_COVERED if job.covered_kinds else MIN_VISIBLE):
            line = _obb_line(corners, size)
            if line:
                lines.append(line)
        label = obj.label if obj.label != "back" else "back"
        readable = list(obj.index_visible or [0.0, 0.0])
        if obj.deck is not None and turned_index_hidden(obj.deck, obj.label):
            readable[1] = 0.0  # a giant pip covers the turned index: no sample of it
        if not _in_frame(corners, size) or _short_side_px(corners) < MIN_CARD_WIDTH_PX:
            continue
        first, second, face = card_crops(image, corners, job.index_mm)
        if obj.visible_fraction >= MIN_FACE_VISIBLE:
            _save(job, "faces", label, f"{name}_{obj.uid}.png", face)
        # card_crops orders the corners itself: map its two crops back to the artwork's
        # top-left (index_visible[0]) and bottom-right (index_visible[1]) corners.
        flipped = _is_flipped(corners)
        for crop, corner in ((first, 1 if flipped else 0), (second, 0 if flipped else 1)):
            if readable[corner] >= MIN_INDEX_VISIBLE:
                _save(job, "classify", label, f"{name}_{obj.uid}_{corner}.png", crop)
                crops += 1
    crops += _other_crops(image, truth, job, name, rng)
    (job.out / "detect-obb" / "labels" / split_dir / f"{name}.txt").write_text(
        "".join(line + "\n" for line in lines))
    return {"cards": len(lines), "crops": crops, "deck": deck}


def _save(job: Job, kind: str, label: str, filename: str, picture: np.ndarray) -> None:
    """A classification sample: ``<out>/<kind>/<train|val>/<label>/<filename>``."""
    folder = job.out / kind / ("val" if job.split == "val" else "train") / label
    folder.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(folder / filename), picture)


def suit_label(label: str) -> str:
    """The suit model's class for a card labelled ``label``: its suit, or ``none``."""
    return label[1] if len(label) == 2 and label[1] in "CDHS" else "none"


def _face_crops(image: np.ndarray, truth: Any, job: Job, name: str) -> int:
    """Only the whole faces of the uncovered cards, and their end bands (``--faces-only``
    exports)."""
    made = 0
    for obj in truth.objects:
        corners = np.array(obj.corners_px) if obj.kind == "card" else None
        if corners is None or obj.visible_fraction < MIN_FACE_VISIBLE or \
                not _in_frame(corners, image.shape[1::-1]) or \
                _short_side_px(corners) < MIN_CARD_WIDTH_PX:
            continue
        _save(job, "faces", obj.label, f"{name}_{obj.uid}.png", card_crops(image, corners)[2])
        for end, band in enumerate(band_crops(image, corners)):
            _save(job, "suits", suit_label(obj.label), f"{name}_{obj.uid}_{end}.png", band)
        made += 1
    return made


def _short_side_px(corners: np.ndarray) -> float:
    sides = np.linalg.norm(corners - np.roll(corners, -1, axis=0), axis=1)
    return float(min(sides))


def _in_frame(corners: np.ndarray, size: tuple[int, int]) -> bool:
    width, height = size
    return bool((corners[:, 0] > 0).all() and (corners[:, 0] < width).all()
                and (corners[:, 1] > 0).all() and (corners[:, 1] < height).all())


def _is_flipped(corners: np.ndarray) -> bool:
    """Whether crops.order_corners starts at the artwork's bottom-right corner (ground-truth
    corners run top-left, top-right, bottom-right, bottom-left) rather than its top-left."""
    return corner_of(corners, 0) == 2


def _other_crops(image: np.ndarray, truth: Any, job: Job, name: str,
                 rng: np.random.Generator) -> int:
    """Card-sized patches of table and clutter that hold no card corner: class ``other``."""
    height, width = image.shape[:2]
    corners_px = [np.array(o.corners_px) for o in truth.objects if o.kind == "card"]
    made = 0
    for attempt in range(2):
        cx, cy = rng.uniform(60, width - 60), rng.uniform(80, height - 80)
        side = rng.uniform(35, 70)
        box = np.array([[cx - side, cy - side * 1.4], [cx + side, cy - side * 1.4],
                        [cx + side, cy + side * 1.4], [cx - side, cy + side * 1.4]])
        if any(cv2.pointPolygonTest(c.astype(np.float32), (float(cx), float(cy)), False) >= 0
               for c in corners_px):
            continue
        crop, _, face = card_crops(image, box, job.index_mm)
        for kind, picture in (("classify", crop), ("faces", face)):
            _save(job, kind, "other", f"{name}_other{attempt}.png", picture)
        made += 1
    return made


def export(out: Path, count: int, seed: int, *, val_fraction: float = 0.1,
           workers: int = 2, progress: bool = True, faces_only: bool = False,
           view_mm: tuple[float, float] = UNCOVERED_VIEW_MM,
           covered_kinds: bool = False, overlapping_rows: bool = False,
           index_mm: tuple[float, float] = INDEX_MM, jokers: bool = False,
           backs: bool = False) -> dict[str, Any]:
    for split in ("train", "val"):
        (out / "detect-obb" / "images" / split).mkdir(parents=True, exist_ok=True)
        (out / "detect-obb" / "labels" / split).mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    jobs = [Job(i, seed, "val" if rng.random() < val_fraction else "train", out,
                bool(rng.random() < 0.3), faces_only, view_mm, covered_kinds,
                overlapping_rows, index_mm, jokers, backs)
            for i in range(count)]
    totals = {"images": 0, "cards": 0, "crops": 0}
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        for result in tqdm(pool.imap_unordered(render_one, jobs, chunksize=4), total=count,
                           desc="rendering", unit="image", disable=not progress,
                           file=sys.stderr, mininterval=2.0):
            totals["images"] += 1
            totals["cards"] += result["cards"]
            totals["crops"] += result["crops"]
    (out / "detect-obb" / "data.yaml").write_text(
        f"path: {out / 'detect-obb'}\ntrain: images/train\nval: images/val\nnames:\n  0: card\n")
    (out / "export.json").write_text(json.dumps({"count": count, "seed": seed,
                                                 "index_mm": list(index_mm),
                                                 "faces_only": faces_only,
                                                 "covered_kinds": covered_kinds,
                                                 "overlapping_rows": overlapping_rows,
                                                 "jokers": jokers, "backs": backs,
                                                 **({"view_mm": list(view_mm)} if faces_only
                                                    else {}), **totals}))
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--faces-only", action="store_true",
                        help="scenes of uncovered cards; write only their faces (faces/)")
    parser.add_argument("--view-mm", type=float, nargs=2, default=UNCOVERED_VIEW_MM,
                        metavar=("MIN", "MAX"),
                        help="with --faces-only: how wide the webcam frames the table (mm; "
                             "wider views show smaller cards)")
    parser.add_argument("--covered-kinds", action="store_true",
                        help="also cards squared up in a stack a few mm apart and things "
                             "lying on cards; label cards from 12%% visible (20%% otherwise)")
    parser.add_argument("--overlapping-rows", action="store_true",
                        help="half the close-ups lay their cards side by side, each over "
                             "part of the one before with its index corner showing")
    parser.add_argument("--index-mm", type=float, nargs=2, default=INDEX_MM,
                        metavar=("WIDTH", "HEIGHT"),
                        help="the index corner cut (mm) the crops are made with; the model "
                             "trained on them records it and the referee cuts the same")
    parser.add_argument("--jokers", action="store_true",
                        help="every scene shows its design's joker (jokers are otherwise one "
                             "card in 53: too few for the suit model's 'none' of them)")
    parser.add_argument("--backs", action="store_true",
                        help="about a quarter of the cards that would lie face up lie face "
                             "down (8%% of cards otherwise)")
    args = parser.parse_args()
    print(json.dumps(export(args.out, args.count, args.seed, workers=args.workers,
                            faces_only=args.faces_only, view_mm=tuple(args.view_mm),
                            covered_kinds=args.covered_kinds,
                            overlapping_rows=args.overlapping_rows,
                            index_mm=tuple(args.index_mm), jokers=args.jokers,
                            backs=args.backs)))


if __name__ == "__main__":
    main()
