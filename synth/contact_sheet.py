"""Contact sheets of random rendered frames, to compare with real webcam photos.

    python -m synth.contact_sheet --split train --out docs/contact-sheet.png
    python -m synth.contact_sheet --split test --out docs/contact-sheet-held-out.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

import cv2
import numpy as np

from synth.random_scenes import random_scene


def contact_sheet(split: str, seed: int, count: int = 24, columns: int = 6,
                  tile: tuple[int, int] = (400, 225)) -> np.ndarray:
    rng = np.random.default_rng(seed)
    tiles = []
    for _ in range(count):
        renderer, scene, deck = random_scene(rng, split)  # type: ignore[arg-type]
        image, _ = renderer.render(scene)
        small = cv2.resize(image, tile, interpolation=cv2.INTER_AREA)
        cv2.putText(small, deck.split(":")[1], (6, tile[1] - 8), cv2.FONT_HERSHEY_SIMPLEX, 0.4,
                    (255, 255, 255), 1, cv2.LINE_AA)
        tiles.append(small)
    rows = [np.hstack(tiles[i:i + columns]) for i in range(0, count, columns)]
    return np.vstack(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="train", choices=["train", "val", "test"])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(args.out), contact_sheet(args.split, args.seed))
    print(args.out)


if __name__ == "__main__":
    main()
