"""Random table scenes for training and measuring the recognisers.

Cards lie the way people leave them: scattered, in rows and fans, piled, partly covered,
some face down; with coins, tokens, boards, hands and everyday clutter around them, seen
by webcams and phones from overhead to 45 degrees.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from typing import Any, Final

import numpy as np

from referee.calibration.layouts import GridBoardLayout, PiecepackLayout, layout_for_game
from synth import effects
from synth.boards import draw_grid_board, draw_piecepack_board
from synth.camera import random_camera
from synth.decks import Split, decks_for
from synth.hands import random_hand
from synth.pieces import (
    COIN_MM,
    COIN_VALUES,
    SPRITE_PX_PER_MM,
    SUIT_GLYPHS,
    TOKEN_MM,
    distractor_sprite,
)
from synth.printed import PRINT_PX_PER_MM, print_sprite_apart
from synth.procedural import is_procedural
from synth.scene import BoardPainter, Placed, Renderer, Scene, card

CODES = [r + s for r in "A23456789TJQK" for s in "SHDC"]
#: The share of cards drawn arched off the table (``synth.scene.Bend``).
CARDS_BENT: Final = 0.5


def _layout_positions(rng: np.random.Generator, n: int,
                      style: str | None = None) -> list[tuple[float, float, float]]:
    """(x, y, angle) for n cards in one of the ways cards lie on a table."""
    style = style or rng.choice(["scatter", "row", "fan", "pile", "grid"],
                                p=[0.35, 0.2, 0.15, 0.15, 0.15])
    base = float(rng.uniform(0, 360))
    if style == "row":
        step = float(rng.uniform(18, 70))
        a = math.radians(base)
        return [(i * step * math.cos(a) - n * step / 2 * math.cos(a),
                 i * step * math.sin(a) - n * step / 2 * math.sin(a),
                 base + 90 + float(rng.normal(0, 4))) for i in range(n)]
    if style == "fan":
        return [(float(rng.normal(0, 3)) + 25 * math.sin(math.radians(i * 12)),
                 float(rng.normal(0, 3)),
                 base + (i - n / 2) * float(rng.uniform(6, 14))) for i in range(n)]
    if style == "pile":
        return [(float(rng.normal(0, 22)), float(rng.normal(0, 22)), float(rng.uniform(0, 360)))
                for _ in range(n)]
    if style == "grid":
        cols = max(1, math.ceil(math.sqrt(n)))
        return [((i % cols) * 75.0 - cols * 37.0, (i // cols) * 100.0 - 100.0,
                 base + float(rng.normal(0, 6))) for i in range(n)]
    return [(float(rng.uniform(-260, 260)), float(rng.uniform(-170, 170)),
             float(rng.uniform(0, 360))) for _ in range(n)]


#: How wide (mm) a webcam over uncovered cards frames the table, by default.
UNCOVERED_VIEW_MM: Final = (380.0, 750.0)


def random_scene(rng: np.random.Generator, split: Split, *,
                 image_size: tuple[int, int] = (960, 540),
                 decks: list[str] | None = None,
                 uncovered: bool = False,
                 uncovered_view_mm: tuple[float, float] = UNCOVERED_VIEW_MM,
                 covered_kinds: bool = False,
                 overlapping_rows: bool = False,
                 joker: bool = False,
                 backs: bool = False,
                 ) -> tuple[Renderer, Scene, str]:
    """A renderer (camera, table, light) and a scene of cards; returns the deck too.
    ``uncovered``: 6-15 cards apart in a loose grid, seen by a webcam framing between
    ``uncovered_view_mm`` (whole faces to learn from, many per image).
    ``covered_kinds``: also cards squared up in a stack, each a few mm off the one below
    (a sliver of each shows), and things lying on cards (a box, a board, a book), drawn
    from a stream of their own so the scenes without them stay as they were.
    ``overlapping_rows``: half the close-ups of 2-5 cards lay them side by side, each over
    part of the one before with its index corner in view (as photos of cards laid down show
    them; the close-ups' other rows are squeezed into tight fans), from a third stream.
    ``joker``: the joker is among the cards (one of them at random becomes it), every other
    draw as without.
    ``backs``: about a quarter of the cards that would lie face up lie face down too (8% of
    cards otherwise: too few backs to learn a design's back from), every draw as without;
    which ones follows from a card's place in the scene and its code (so with ``joker`` the
    joker too may lie face down)."""
    extra = np.random.default_rng(int(rng.integers(2**63))) if covered_kinds else None
    rows = np.random.default_rng(int(rng.integers(2**63))) if overlapping_rows else None
    pool = decks or decks_for(split)
    procedural = [d for d in pool if is_procedural(d)]
    if procedural and len(procedural) < len(pool):
        # Half the scenes show a packaged design (real court art, real layouts), half one
        # of the many procedural ones (index typefaces); pools without both draw evenly.
        pool = procedural if rng.random() < 0.5 else [d for d in pool if d not in procedural]
    deck = pool[int(rng.integers(len(pool)))]
    # Phone-style close-ups: a few cards fill the frame (a card up to half the image's
    # width, as in hand-held photos); otherwise a webcam's view of a playing area.
    close = not uncovered and rng.random() < 0.45
    view = float(np.exp(rng.uniform(np.log(110), np.log(330))) if close
                 else rng.uniform(420, 800))
    n = int(rng.integers(1, 6) if close else rng.integers(3, 16))
    if uncovered:
        view, n = float(rng.uniform(*uncovered_view_mm)), int(rng.integers(6, 16))
    codes = [str(c) for c in rng.choice([*CODES, "JK"], size=n, replace=False)]
    if joker and "JK" not in codes:
        codes[zlib.crc32(" ".join(codes).encode()) % n] = "JK"  # rng's draws stay
    placed: list[Placed] = []
    spread = 0.35 if close else 1.0
    positions = _layout_positions(rng, n, "grid" if uncovered else None)
    if extra is not None and n >= 2 and extra.random() < 0.25:
        positions, spread = _stack(extra, n), 1.0
    if rows is not None and close and n >= 2 and rows.random() < 0.5:
        positions, spread = _overlapping_row(rows, n), 1.0
    for i, (x, y, angle) in enumerate(positions):
        face_up = rng.random() > 0.08
        if backs and face_up and zlib.crc32(f"{i} {codes[i]}".encode()) % 4 == 0:
            face_up = False  # rng's draws stay
        placed.append(card(f"card{i}", codes[i], deck, (x * spread, y * spread), angle,
                           face_up=face_up))
    clutter = _clutter(rng, 0 if close else int(rng.integers(0, 5)))
    # Photos of cards show them on and beside books, boxes and newspapers (under the cards).
    if rng.random() < (0.35 if close else 0.1):
        clutter.insert(0, _printed(rng, "print0", reach=60.0 if close else 300.0))
    objects = [*clutter, *placed]
    if extra is not None and extra.random() < 0.3:
        objects += _on_cards(extra, placed, close)
    hands = ()
    if rng.random() < 0.3:
        target = placed[int(rng.integers(len(placed)))].center
        hands = (random_hand(rng, (target[0] + float(rng.normal(0, 40)),
                                   target[1] + float(rng.normal(0, 40)))),)
    boards: list[BoardPainter] = []
    if not close and rng.random() < 0.12:
        boards.append(_random_board(rng))
    camera = random_camera(rng, target=(float(rng.normal(0, 30)), float(rng.normal(0, 30))),
                           view_mm=(view, view * 0.6), image_size=image_size)
    # Half the cards lie a little arched, as handled cards do (session 47).
    renderer = Renderer(camera, rng, effects.Photometry.random(rng), boards=boards,
                        bends=CARDS_BENT)
    return renderer, Scene(tuple(objects), hands), deck


def _stack(rng: np.random.Generator, n: int) -> list[tuple[float, float, float]]:
    """Cards squared up, each 3-18 mm off the one below along one direction (a dealt pile
    pushed askew, a spread hand): of the lower cards only a sliver shows."""
    angle = float(rng.uniform(0, 360))
    step = float(rng.uniform(3, 18))
    heading = math.radians(angle + float(rng.choice([0, 90, 45, -45])) + float(rng.normal(0, 15)))
    return [(i * step * math.cos(heading) + float(rng.normal(0, 1)),
             i * step * math.sin(heading) + float(rng.normal(0, 1)),
             angle + float(rng.normal(0, 2.5))) for i in range(n)]


def _overlapping_row(rng: np.random.Generator, n: int) -> list[tuple[float, float, float]]:
    """Cards side by side, each 22-55 mm on from the one before (or, in a quarter of rows,
    one above the other, 30-60 mm on), so each covers part of the one before and leaves its
    index corner showing; a little askew."""
    angle = float(rng.uniform(0, 360))
    along_long = rng.random() < 0.25
    step = float(rng.uniform(30, 60) if along_long else rng.uniform(22, 55))
    heading = math.radians(angle + (90.0 if along_long else 0.0) + float(rng.normal(0, 6)))
    return [(i * step * math.cos(heading) + float(rng.normal(0, 4)),
             i * step * math.sin(heading) + float(rng.normal(0, 4)),
             angle + float(rng.normal(0, 7))) for i in range(n)]


def _on_cards(rng: np.random.Generator, cards: list[Placed], close: bool) -> list[Placed]:
    """One or two things (printed matter, a box, a board) lying across cards: a card half
    under a cribbage board or a game box must still be found whole."""
    things = []
    for k in range(int(rng.integers(1, 3))):
        target = cards[int(rng.integers(len(cards)))]
        printed = rng.random() < 0.5
        sprite = print_sprite_apart(rng) if printed else distractor_sprite(rng)
        per_mm = PRINT_PX_PER_MM if printed else SPRITE_PX_PER_MM
        size = (sprite.shape[1] / per_mm, sprite.shape[0] / per_mm)
        # Turned to face the card, its near edge crosses the card near its centre: it
        # covers a quarter to three quarters of the card, not all of it.
        heading = float(rng.uniform(0, 2 * math.pi))
        reach = 0.5 * size[0] + float(rng.uniform(-25, 15))
        centre = (target.center[0] + reach * math.cos(heading),
                  target.center[1] + reach * math.sin(heading))
        things.append(Placed(f"over{k}", "distractor", "thing", centre,
                             math.degrees(heading) + float(rng.normal(0, 8)), size,
                             height_mm=4.0 if close else 8.0, sprite_key=(sprite,)))
    return things


def _printed(rng: np.random.Generator, uid: str, reach: float) -> Placed:
    sprite = print_sprite_apart(rng)
    size = (sprite.shape[1] / PRINT_PX_PER_MM, sprite.shape[0] / PRINT_PX_PER_MM)
    centre = (float(rng.uniform(-reach, reach)), float(rng.uniform(-reach, reach) * 0.7))
    return Placed(uid, "distractor", "thing", centre, float(rng.uniform(0, 360)), size,
                  height_mm=5.0, sprite_key=(sprite,))


def _clutter(rng: np.random.Generator, count: int) -> list[Placed]:
    things: list[Placed] = []
    for i in range(count):
        centre = (float(rng.uniform(-350, 350)), float(rng.uniform(-220, 220)))
        kind = rng.choice(["coin", "token", "distractor"])
        if kind == "coin":
            face = str(rng.choice([*SUIT_GLYPHS, *COIN_VALUES]))
            things.append(Placed(f"coin{i}", "coin", face, centre, float(rng.uniform(0, 360)),
                                 (COIN_MM, COIN_MM), height_mm=2.5))
        elif kind == "token":
            things.append(Placed(f"token{i}", "token", str(rng.choice(["red", "blue"])), centre,
                                 0.0, (TOKEN_MM, TOKEN_MM), height_mm=4.0))
        else:
            sprite = distractor_sprite(rng)
            size = (sprite.shape[1] / SPRITE_PX_PER_MM, sprite.shape[0] / SPRITE_PX_PER_MM)
            things.append(Placed(f"thing{i}", "distractor", "thing", centre,
                                 float(rng.uniform(0, 360)), size, height_mm=3.0,
                                 sprite_key=(sprite,)))
    return things


def _random_board(rng: np.random.Generator) -> BoardPainter:
    game = str(rng.choice(["shove-piecepack", "shove"]))
    layout = layout_for_game(game)
    origin = (float(rng.uniform(-400, 0)), float(rng.uniform(-300, 0)))
    angle = float(rng.uniform(-20, 20))

    def paint(canvas: Any, painter_rng: np.random.Generator) -> dict[str, Any]:
        if isinstance(layout, PiecepackLayout):
            draw_piecepack_board(canvas, layout, painter_rng, origin_mm=origin, angle_deg=angle)
        elif isinstance(layout, GridBoardLayout):
            draw_grid_board(canvas, layout, painter_rng, origin_mm=origin, angle_deg=angle)
        return {"board": game}

    painter: Callable[[Any, np.random.Generator], dict[str, Any]] = paint
    return painter
