"""Benchmark: card identity on rendered scenes of deck designs, by split.

    python bench/cards.py --split test --scenes 300 --csv models/eval/card_index_test.csv
    python bench/cards.py --split test --scenes 1500 --apart   # cards lying apart

Renders random scenes (overlaps, fans, piles, angled cameras up to 45 degrees, hands) with
the chosen decks, reads every card whose outline lies in the frame from the ground-truth
corners with ``CardIdentifier`` (so this measures identity, not detection; a card no other
card lies on, by ``outlines.stacking`` of the image's edges, has its whole face and end bands
read too, and another card the end bands no other card lies on, as ``referee detect`` reads
them), and prints:
- accuracy on fully visible cards (visible fraction >= 0.99);
- accuracy on cards at least 40% visible with at least one index corner showing;
- accuracy on the fully visible cards no other card overlaps (their faces are read), and
  on the aces no other card overlaps (whose suit the face decides only when seen small);
- the share read as "??" (unsure) and the share read as another card (wrong: it misleads a
  ruling, where "??" waits for a sure reading), and milliseconds per card.
Cards whose short side is under 45 px in the image are counted apart (too small to read).
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from pathlib import Path

import numpy as np

from referee.detection.cards import (
    DEFAULT_FACE_MODEL,
    DEFAULT_MODEL,
    DEFAULT_SUIT_MODEL,
    CardIdentifier,
)
from referee.detection.outlines import alone, clear_bands, gradients, stacking
from synth.random_scenes import random_scene

MIN_WIDTH_PX = 45.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="test", choices=["train", "val", "test"])
    parser.add_argument("--identity", type=Path, default=DEFAULT_MODEL,
                        help="the card identity model (ONNX) to measure")
    parser.add_argument("--face", type=Path, default=DEFAULT_FACE_MODEL,
                        help="the whole-face model (ONNX) read with it")
    parser.add_argument("--suit", type=Path, default=DEFAULT_SUIT_MODEL,
                        help="the suit model (ONNX) of the end bands read with the face "
                             "('none': without it)")
    parser.add_argument("--no-faces", action="store_true", help="read index corners only")
    parser.add_argument("--scenes", type=int, default=300)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--csv", type=Path)
    parser.add_argument("--apart", action="store_true",
                        help="scenes of 6-15 cards lying apart (faces read; many more aces)")
    args = parser.parse_args()
    identifier = CardIdentifier(args.identity, face_model=None if args.no_faces else args.face,
                                suit_model=None if str(args.suit) == "none" else args.suit)
    rng = np.random.default_rng(args.seed)
    rows: list[dict[str, object]] = []
    seconds = 0.0
    for scene_index in range(args.scenes):
        renderer, scene, deck = random_scene(rng, args.split,  # type: ignore[arg-type]
                                             uncovered=args.apart)
        image, truth = renderer.render(scene)
        height, width = image.shape[:2]
        cards = [obj for obj in truth.objects if obj.kind == "card"]
        # as referee detect reads them: which card lies on which, from their edges
        quads = [obj.corners_px for obj in cards]
        over = stacking(gradients(image), quads)
        apart, on_top, clear = alone(quads), alone(quads, over), clear_bands(quads, over)
        for obj, lying_apart, uncovered, ends in zip(cards, apart, on_top, clear, strict=True):
            corners = np.array(obj.corners_px)
            inside = bool((corners >= 0).all() and (corners[:, 0] < width).all()
                          and (corners[:, 1] < height).all())
            if not inside:
                continue
            sides = np.linalg.norm(corners - np.roll(corners, -1, axis=0), axis=1)
            started = time.perf_counter()
            reading = identifier.identify(image, corners, uncovered, ends)
            seconds += time.perf_counter() - started
            rows.append({
                "scene": scene_index, "deck": deck, "truth": obj.label, "read": reading.card,
                "confidence": round(reading.confidence, 4),
                "visible": obj.visible_fraction,
                "index_visible": max(obj.index_visible or [0.0]),
                "width_px": round(float(sides.min()), 1), "apart": lying_apart,
                "on_top": uncovered,
                "corner_reads": "/".join(code for code, _ in reading.corners),
                "face_read": reading.face[0] if reading.face else "",
            })
    readable = [r for r in rows if float(r["width_px"]) >= MIN_WIDTH_PX]  # type: ignore[arg-type]
    full = [r for r in readable if float(r["visible"]) >= 0.99]  # type: ignore[arg-type]
    partial = [r for r in readable if float(r["visible"]) >= 0.4  # type: ignore[arg-type]
               and float(r["index_visible"]) >= 0.85]  # type: ignore[arg-type]
    apart = [r for r in full if r["apart"]]
    # Cards laid apart often show about 90% (a neighbour over an edge): no visibility floor.
    aces = [r for r in readable if r["apart"] and str(r["truth"]).startswith("A")]

    def accuracy(group: list[dict[str, object]]) -> float:
        return round(100 * sum(r["read"] == r["truth"] for r in group) / max(len(group), 1), 2)

    def unsure(group: list[dict[str, object]]) -> float:
        return round(100 * sum(r["read"] == "??" for r in group) / max(len(group), 1), 2)

    def wrong(group: list[dict[str, object]]) -> float:
        return round(100 * sum(r["read"] not in (r["truth"], "??") for r in group)
                     / max(len(group), 1), 2)

    def figures(group: list[dict[str, object]]) -> dict[str, object]:
        return {"cards": len(group), "accuracy_pct": accuracy(group),
                "unsure_pct": unsure(group), "wrong_pct": wrong(group)}

    if args.csv:
        args.csv.parent.mkdir(parents=True, exist_ok=True)
        with args.csv.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    print(json.dumps({
        "split": args.split, "scenes": args.scenes, "cards_read": len(rows),
        "too_small": len(rows) - len(readable),
        "fully_visible": figures(full),
        "partly_covered_index_showing": figures(partial),
        "fully_visible_lying_apart": figures(apart),
        "aces_lying_apart": figures(aces),
        "ms_per_card": round(1000 * seconds / max(len(rows), 1), 2),
    }))


if __name__ == "__main__":
    main()
