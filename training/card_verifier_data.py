"""Faces for the card verifier: what ``referee detect`` outlines on rendered scenes, sorted
by the ground truth into ``card`` and ``not_card``.

    python -m training.card_verifier_data --out /tmp/verify --scenes 2000 --seed 41
    python -m training.card_verifier_data --balance /tmp/verify --out /tmp/verify-4

Hard-negative mining: every scene (random_scenes, training designs for ``train/``,
validation designs for ``val/``) is rendered, JPEG-compressed and run through ``detect``
as the product runs it, without a verifier. Each outline is cut as the face classifier
cuts a card (``crops.face_crop``, 64 x 64) and labelled by its best polygon IoU with a
true card: ``card`` from 0.5, ``not_card`` below 0.2 (a book, a sheet of paper, a board
square, a box, two cards' halves); in between it is left out. Every scene also gives the
faces of up to ``--truth-per-scene`` true cards at least 40% visible, cut from their true
corners, so that designs and backs the detector happened to outline well are not all the
verifier sees of cards.

Rendered scenes hold far fewer card-like things than cards, so ``--balance`` makes a set
(hard links, no copies) with at most ``--cards-per-not-card`` cards for each ``not_card``
face of each split, drawn at random.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm  # type: ignore[import-untyped]

from referee.detection.crops import face_crop
from referee.detection.detect import detect, load_detector, load_identifier
from referee.detection.outlines import quad_iou
from synth.decks import Split
from synth.random_scenes import random_scene

#: Frame sizes the scenes are rendered at, in turn: a 720p and a 540p webcam, a phone photo.
SIZES = ((1280, 720), (960, 540), (504, 672))
CARD_IOU, NOT_CARD_IOU = 0.5, 0.2


def _best_iou(outline: np.ndarray, truths: list[np.ndarray]) -> float:
    """The outline's IoU with the true card (corners, image pixels) it overlaps most."""
    return max((quad_iou(outline, truth) for truth in truths), default=0.0)


def mine(out: Path, split: Split, scenes: int, seed: int, truth_per_scene: int,
         covered_kinds: bool = False) -> dict[str, int]:
    identifier, _ = load_identifier()
    # float32 on every machine: the data mined must not depend on the CPU it is mined on
    detector, _ = load_detector("onnxruntime")
    if identifier is None or detector is None:
        raise SystemExit("the card models are missing from models/")
    rng = np.random.default_rng(seed)
    folder = "train" if split == "train" else "val"
    counts = {"card": 0, "not_card": 0, "left_out": 0}
    for label in ("card", "not_card"):
        (out / folder / label).mkdir(parents=True, exist_ok=True)
    for number in tqdm(range(scenes), desc=f"{split} scenes", unit="scene"):
        renderer, scene, _deck = random_scene(rng, split, image_size=SIZES[number % len(SIZES)],
                                              covered_kinds=covered_kinds,
                                              overlapping_rows=covered_kinds)
        rendered, truth = renderer.render(scene)
        ok, jpeg = cv2.imencode(".jpg", rendered, [cv2.IMWRITE_JPEG_QUALITY, 90])
        assert ok
        image = np.asarray(cv2.imdecode(jpeg, cv2.IMREAD_COLOR), dtype=np.uint8)
        cards = [obj for obj in truth.objects if obj.kind == "card"]
        truths = [np.array(obj.corners_px, dtype=np.float64) for obj in cards]
        for k, found in enumerate(detect(image, identifier, detector).cards):
            outline = np.array(found.corners, dtype=np.float64)
            best = _best_iou(outline, truths)
            sure = "card" if best >= CARD_IOU else "not_card" if best < NOT_CARD_IOU else None
            if sure is None:
                counts["left_out"] += 1
                continue
            cv2.imwrite(str(out / folder / sure / f"{split}{seed}_{number}_d{k}.png"),
                        face_crop(image, outline))
            counts[sure] += 1
        seen = [obj for obj in cards if obj.visible_fraction >= 0.4]
        for k in rng.permutation(len(seen))[:truth_per_scene]:
            cv2.imwrite(str(out / folder / "card" / f"{split}{seed}_{number}_t{k}.png"),
                        face_crop(image, np.array(seen[k].corners_px, dtype=np.float64)))
            counts["card"] += 1
    return counts


def balance(source: Path, out: Path, ratio: float, seed: int) -> dict[str, dict[str, int]]:
    """``source``'s faces with at most ``ratio`` cards per not_card face in each split."""
    rng = np.random.default_rng(seed)
    shutil.rmtree(out, ignore_errors=True)  # a set balanced before (another ratio) goes
    made: dict[str, dict[str, int]] = {}
    for split in ("train", "val"):
        negatives = sorted((source / split / "not_card").glob("*.png"))
        cards = sorted((source / split / "card").glob("*.png"))
        keep = min(len(cards), round(ratio * len(negatives)))
        chosen = [cards[int(i)] for i in sorted(rng.choice(len(cards), keep, replace=False))]
        for label, faces in (("not_card", negatives), ("card", chosen)):
            folder = out / split / label
            folder.mkdir(parents=True, exist_ok=True)
            for face in faces:
                if not (folder / face.name).exists():
                    os.link(face, folder / face.name)
        made[split] = {"card": len(chosen), "not_card": len(negatives)}
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--balance", type=Path, metavar="MINED",
                        help="make a balanced set in --out from this mined set")
    parser.add_argument("--cards-per-not-card", type=float, default=4.0)
    parser.add_argument("--scenes", type=int, default=2000, help="training-design scenes")
    parser.add_argument("--val-scenes", type=int, default=400, help="validation-design scenes")
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--truth-per-scene", type=int, default=2)
    parser.add_argument("--covered-kinds", action="store_true",
                        help="scenes with stacks, overlapping rows and things lying on cards "
                        "(random_scene's covered_kinds and overlapping_rows)")
    args = parser.parse_args()
    if args.balance:
        print(json.dumps(balance(args.balance, args.out, args.cards_per_not_card, args.seed)))
        return
    started = time.perf_counter()
    runs: tuple[tuple[Split, int], ...] = (("train", args.scenes), ("val", args.val_scenes))
    made = {split: mine(args.out, split, count, args.seed + offset, args.truth_per_scene,
                        args.covered_kinds)
            for offset, (split, count) in enumerate(runs)}
    record = {**vars(args), "out": str(args.out), "made": made,
              "seconds": round(time.perf_counter() - started)}
    (args.out / "mined.json").write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps(record))


if __name__ == "__main__":
    main()
