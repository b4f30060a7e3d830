"""Benchmark: the card tracker on piles, cards laid one on another a few mm off.

    python bench/piles.py [--piles 30] [--cards 4] [--turn 12] [--seed 0] [--card-mm 63x88]
                          [--assume-mm WxL]

A trick gathered in a pile, a card thrown onto the one before: white on white, each new card
changes only where it sticks out beyond the card below and where its print differs, and no
edge of it shows over that card. Each pile is built on a flat top-down table (1 px a mm),
every card 2-14 mm off the one before and turned up to ``--turn`` degrees more; then taken
off again, top first. Prints how many placements were found once with an outline within
4 mm of the card (its farthest corner), how far off (the farthest corner's median and 90th
percentile over those found once), and how many removals were seen as that card taken with
nothing placed. ``--card-mm``: the cards' size (a bridge deck is 57x89); ``--assume-mm``: the
size the tracker is told (the calibration's ``card_mm``; by default the cards' own).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from referee.calibration.rectify import PlaneMap
from referee.cards import CARD_MM, card_size
from referee.tracking.cards import CardObserver, TableCard, card_corners
from referee.tracking.topdown import TableView

SIZE = (400, 300)  # px = mm
GLYPHS = "A5K9Q3J7"
WITHIN_MM = 4.0

Card = tuple[tuple[float, float], float, str]


def _view() -> TableView:
    # pixel (u, v) -> table (u, height - v): a camera straight above, 1 px a mm
    plane = PlaneMap(None, np.array([[1.0, 0, 0], [0, -1.0, SIZE[1]], [0, 0, 1.0]]), SIZE)
    return TableView.build(plane, (0.0, 0.0, float(SIZE[0]), float(SIZE[1])), 1.0)


def _table(view: TableView, cards: list[Card], size: tuple[float, float]) -> np.ndarray:
    """Green cloth and white cards, each with a big glyph, bottom first; no card edges."""
    image = np.full((SIZE[1], SIZE[0], 3), (60, 90, 40), np.uint8)
    for centre, angle, glyph in cards:
        px = np.round(view.to_raster(card_corners(centre, angle, size))).astype(np.int32)
        cv2.fillPoly(image, [px], (235, 235, 235))
        cx, cy = (int(v) for v in px.mean(axis=0))
        cv2.putText(image, glyph, (cx - 25, cy + 20), cv2.FONT_HERSHEY_SIMPLEX, 2.0,
                    (0, 0, 200) if glyph in "AK" else (20, 20, 20), 5)
    return image


def _off(outline: np.ndarray, card: Card, size: tuple[float, float]) -> float:
    truth = card_corners(card[0], card[1], size)
    return max(float(np.min(np.linalg.norm(outline - c, axis=1))) for c in truth)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--piles", type=int, default=30)
    parser.add_argument("--cards", type=int, default=4)
    parser.add_argument("--turn", type=float, default=12.0, help="most degrees between cards")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--card-mm", type=card_size, default=CARD_MM,
                        help="the cards' width and length, mm (default 63x88)")
    parser.add_argument("--assume-mm", type=card_size,
                        help="the card size the tracker is told (default: --card-mm)")
    args = parser.parse_args()
    card, told = args.card_mm, args.assume_mm or args.card_mm
    offs: list[float] = []
    rng = np.random.default_rng(args.seed)
    view = _view()
    placed_right = removed_right = 0
    for _ in range(args.piles):
        observer = CardObserver(view, card_mm=told)
        observer.start(_table(view, [], card))
        pile: list[Card] = []
        for k in range(args.cards):
            if pile:
                (x, y), angle, _ = pile[-1]
                far, towards = rng.uniform(2.0, 14.0), rng.uniform(0.0, 2 * np.pi)
                pile.append(((x + far * np.cos(towards), y + far * np.sin(towards)),
                             angle + rng.uniform(-args.turn, args.turn), GLYPHS[k]))
            else:
                pile.append(((200.0, 150.0), float(rng.uniform(0, 180)), GLYPHS[k]))
            state = _table(view, pile, card)
            changes = observer.compare(state)
            new = [TableCard(observer.new_uid(), "7H", tuple(map(tuple, f.corners_mm)))
                   for f in changes.placed]
            observer.commit(state, new, changes)
            if len(new) == 1:
                offs.append(_off(new[0].outline, pile[-1], card))
            placed_right += len(new) == 1 and offs[-1] <= WITHIN_MM
        while pile:
            pile.pop()
            state = _table(view, pile, card)
            changes = observer.compare(state)
            removed_right += len(changes.removed) == 1 and not changes.placed
            observer.commit(state, [], changes)
    total = args.piles * args.cards
    print(json.dumps({
        "piles": args.piles, "cards_each": args.cards, "turn_deg": args.turn,
        "card_mm": list(card), "assumed_mm": list(told),
        "placed_right_pct": round(100 * placed_right / total, 1),
        "farthest_corner_off_mm_median": round(float(np.median(offs)), 2) if offs else None,
        "farthest_corner_off_mm_p90": round(float(np.percentile(offs, 90)), 2) if offs else None,
        "removed_right_pct": round(100 * removed_right / total, 1),
    }))


if __name__ == "__main__":
    main()
