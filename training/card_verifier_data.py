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

Real tables hold far more printed matter than rendered scenes do (flyers, postcards, book
pages, boxes), and the detector outlines some of it as a card, so ``--printed N`` adds N
``not_card`` faces (``N // 5`` more to ``val/``) cut from ``synth.printed`` sprites, the
renderer's printed matter, lying on a table surface and seen under the renderer's
photometry: half the piece outlined whole (a few mm off, as a detector's box is), half a
card-shaped part of it.

A design's back is a pattern the verifier must take for a card even unseen, and a
detector's box round an unseen one is loose, so ``--backs N`` adds N ``card`` faces
(``N // 5`` more to ``val/``) of backs of procedural designs no other model trains on
(``BACK_DESIGNS``), each lying turned on a table surface under the renderer's photometry
and outlined a few pixels off.

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
from synth import effects, printed
from synth.decks import Split
from synth.random_scenes import random_scene
from synth.scene import card_art
from synth.surfaces import table_surface

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


#: A card is 63 x 88 mm; the parts cut from printed matter are that shape give or take
#: CUT_ASPECT_JITTER, and each corner moves by up to CUT_TILT of the part's short side.
CARD_ASPECT, CUT_ASPECT_JITTER, CUT_TILT = 63 / 88, 0.15, 0.06
#: How long (pixels) the printed piece's long side is in the picture: a webcam's view to a
#: phone's close-up.
PRINTED_LONG_SIDE_PX = (120, 480)


def card_shaped_quad(rng: np.random.Generator, size: tuple[int, int]) -> np.ndarray:
    """Four corners (pixels) of a card-shaped quad lying wholly inside an image of ``size``."""
    width, height = size
    long_side = rng.uniform(0.35, 0.95) * min(width, height)
    short = long_side * CARD_ASPECT * rng.uniform(1 - CUT_ASPECT_JITTER, 1 + CUT_ASPECT_JITTER)
    angle = np.radians(rng.uniform(0, 180))
    axes = np.array([[np.cos(angle), np.sin(angle)], [-np.sin(angle), np.cos(angle)]])
    unit = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], np.float64) / 2
    quad = (unit * (short, long_side)) @ axes
    quad += rng.uniform(-CUT_TILT, CUT_TILT, (4, 2)) * short
    reach = np.abs(quad).max(axis=0)
    # turned, a long quad may not fit: it is made smaller until it does
    fit = min(1.0, (width / 2 - 1) / reach[0], (height / 2 - 1) / reach[1])
    quad, reach = quad * fit, reach * fit
    centre = [rng.uniform(reach[0], max(reach[0], width - reach[0])),
              rng.uniform(reach[1], max(reach[1], height - reach[1]))]
    return np.asarray(quad + centre, np.float64)


def printed_face(rng: np.random.Generator) -> np.ndarray:
    """One ``not_card`` face: a piece of printed matter on a table, outlined whole or in a
    card-shaped part, cut as ``face_crop`` cuts a card."""
    image, quad, _piece = printed_scene(rng)
    return face_crop(image, quad)


def printed_scene(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """A piece of printed matter lying on a table under the renderer's photometry, the
    outline ``printed_face`` cuts (four corners, pixels) and where the piece lies (x0, y0,
    x1, y1)."""
    sprite = printed.print_sprite_apart(rng)[:, :, :3]
    scale = rng.uniform(*PRINTED_LONG_SIDE_PX) / max(sprite.shape[:2])
    piece = cv2.resize(sprite, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    h, w = piece.shape[:2]
    pad = max(8, int(0.2 * max(w, h)))
    image = table_surface(rng, (w + 2 * pad, h + 2 * pad), printed.PRINT_PX_PER_MM * scale)
    image[pad:pad + h, pad:pad + w] = piece
    if rng.random() < 0.5:  # the whole piece, its corners a little off
        quad = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64)
        quad += rng.normal(0, 0.02 * min(w, h), (4, 2))
        quad = np.roll(quad, int(rng.integers(4)), axis=0)
    else:
        quad = card_shaped_quad(rng, (w, h))
    image = effects.apply(image, effects.Photometry.random(rng), rng)
    return image, quad + pad, (pad, pad, pad + w, pad + h)


def printed_faces(out: Path, folder: str, count: int, seed: int) -> int:
    """``count`` ``not_card`` faces of printed matter (``printed_face``) into ``out/folder``."""
    rng = np.random.default_rng(seed)
    target = out / folder / "not_card"
    target.mkdir(parents=True, exist_ok=True)
    for number in tqdm(range(count), desc=f"{folder} printed faces", unit="face"):
        cv2.imwrite(str(target / f"printed{seed}_{number}.png"), printed_face(rng))
    return count


#: Procedural designs whose backs ``--backs`` draws: designs no model trains on otherwise
#: (the training split holds proc:00-95), the first part for ``train/``, the rest for ``val/``.
BACK_DESIGNS = {"train": range(100, 800), "val": range(800, 1000)}
#: How far (a share of the card's short side) each corner of the outline around a back lies
#: off the card's: a detector's box round a design it never saw is loose.
BACK_OUTLINE_OFF = 0.04


def back_scene(rng: np.random.Generator, designs: range) -> tuple[np.ndarray, np.ndarray]:
    """A face-down card of one of ``designs`` (procedural) lying on a table, turned at
    random, under the renderer's photometry, and a loose outline of it (four corners)."""
    art = card_art(f"proc:{int(rng.choice(designs))}", "back")
    scale = rng.uniform(*PRINTED_LONG_SIDE_PX) / max(art.shape[:2])
    sprite = cv2.resize(art, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    h, w = sprite.shape[:2]
    side = int(np.hypot(w, h)) + 2 * max(8, int(0.2 * max(w, h)))
    turn = cv2.getRotationMatrix2D((w / 2, h / 2), float(rng.uniform(0, 360)), 1.0)
    turn[:, 2] += (side - w) / 2, (side - h) / 2
    turned = cv2.warpAffine(sprite, turn, (side, side), flags=cv2.INTER_LINEAR)
    alpha = (turned[:, :, 3:4].astype(np.float32) / 255) if turned.shape[2] == 4 else 1.0
    image = table_surface(rng, (side, side), printed.PRINT_PX_PER_MM * scale)
    image = (turned[:, :, :3] * alpha + image * (1 - alpha)).astype(np.uint8)
    corners = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64)
    quad = corners @ turn[:, :2].T + turn[:, 2]
    quad += rng.normal(0, BACK_OUTLINE_OFF * min(w, h), (4, 2))
    return effects.apply(image, effects.Photometry.random(rng), rng), quad


def back_faces(out: Path, folder: Split, count: int, seed: int) -> int:
    """``count`` ``card`` faces of backs (``back_scene``) into ``out/folder``."""
    rng = np.random.default_rng(seed)
    target = out / folder / "card"
    target.mkdir(parents=True, exist_ok=True)
    for number in tqdm(range(count), desc=f"{folder} backs", unit="face"):
        image, quad = back_scene(rng, BACK_DESIGNS[folder])
        cv2.imwrite(str(target / f"back{seed}_{number}.png"), face_crop(image, quad))
    return count


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
    parser.add_argument("--printed", type=int, default=0, metavar="N",
                        help="add N not_card faces of printed matter (synth.printed; N // 5 "
                        "more to val/) and mine no scenes")
    parser.add_argument("--backs", type=int, default=0, metavar="N",
                        help="add N card faces of backs of procedural designs no model "
                        "trains on (N // 5 more to val/) and mine no scenes")
    parser.add_argument("--covered-kinds", action="store_true",
                        help="scenes with stacks, overlapping rows and things lying on cards "
                        "(random_scene's covered_kinds and overlapping_rows)")
    args = parser.parse_args()
    if args.balance:
        print(json.dumps(balance(args.balance, args.out, args.cards_per_not_card, args.seed)))
        return
    started = time.perf_counter()
    if args.printed:
        made_printed = {"train": printed_faces(args.out, "train", args.printed, args.seed),
                        "val": printed_faces(args.out, "val", args.printed // 5, args.seed + 1)}
        print(json.dumps({"printed": made_printed,
                          "seconds": round(time.perf_counter() - started)}))
        return
    if args.backs:
        made_backs = {"train": back_faces(args.out, "train", args.backs, args.seed),
                      "val": back_faces(args.out, "val", args.backs // 5, args.seed + 1)}
        print(json.dumps({"backs": made_backs, "seconds": round(time.perf_counter() - started)}))
        return
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
