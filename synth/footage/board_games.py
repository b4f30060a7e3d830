"""Scripted play of the two board games: Shove piecepack (coins) and Shove (grid tokens).

Both boards are drawn with their frame at the table origin, so board millimetres are table
millimetres. The small gaps between piecepack tiles make the line pitch a little more than
a tile: the clip's setup sets ``tile_mm`` to that pitch, as the calibration records it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from referee.calibration.layouts import GridBoardLayout, PiecepackLayout, layout_for_game
from referee.rules.shove_piecepack import ShovePiecepackSettings
from referee.rules.shove_search import Move, Push, cheapest_of, successors
from synth.boards import draw_grid_board, draw_piecepack_board
from synth.footage.card_games import Script, _Referee
from synth.footage.clip import ClipBuilder, Seat
from synth.pieces import COIN_MM, COIN_VALUES, SUIT_GLYPHS, TOKEN_MM
from synth.scene import Placed

SUIT_INK = {"suns": (40, 40, 190), "moons": (30, 30, 30), "crowns": (40, 130, 40),
            "arms": (160, 80, 30)}


# --- Shove piecepack --------------------------------------------------------------------

def shove_piecepack(rng: np.random.Generator, deck: str, turns: int = 2, *,
                    fps: float = 15.0) -> Script:
    del deck  # no cards in this game
    layout = layout_for_game("shove-piecepack")
    assert isinstance(layout, PiecepackLayout)
    pitch = layout.pitch_mm
    players = ["Ann", "Ben"]
    seats = {p: Seat(p, (2 * pitch, -420.0)) for p in players}
    clip = ClipBuilder(rng, fps)
    referee = _Referee("shove-piecepack", players, clip)
    clip.idle(1.0)
    serial = 0
    for turn in range(turns):
        player = players[turn % 2]
        played = 0
        on_board: list[str] = []
        while played < 5 and not referee.session.state.game_over:
            serial += 1
            uid = f"coin{serial}"
            target = _coin_target(rng, layout, played)
            face = str(rng.choice([*SUIT_GLYPHS, *COIN_VALUES]))
            suit = str(rng.choice(list(SUIT_GLYPHS)))
            coin = Placed(uid, "coin", face, target, float(rng.uniform(0, 360)),
                          (COIN_MM, COIN_MM), height_mm=2.5,
                          sprite_key=((150, 185, 215), SUIT_INK[suit]))
            knocks = _knocks(rng, clip, on_board, coin, layout)
            start = (target[0] + float(rng.normal(0, 15)), -25.0)
            stopped = [_coin_obs(coin)] + [_coin_obs(after) for _, after in knocks]
            clip.slide(coin, start, float(rng.uniform(0.6, 1.0)), knocks=knocks,
                       observations=stopped)
            rulings = referee.catch_up()
            short = any(r.kind == "not_played" for r in rulings)
            on_board.append(uid)
            if short:  # picked up and shoved again: it was not one of the five
                clip.take(seats[player], [uid], observations=[{"type": "coin_removed",
                                                               "id": uid}])
                on_board.remove(uid)
                referee.catch_up()
            else:
                played += 1
        clip.idle(0.8)
        if referee.session.state.game_over:
            break
        clip.take(seats[player], on_board,
                  observations=[{"type": "coin_removed", "id": uid} for uid in on_board])
        referee.catch_up()
    clip.idle(1.0)
    view = (6 * pitch + 120, 9 * pitch + 80)
    target = (2 * pitch, 4.5 * pitch)

    def board(canvas: Any, painter_rng: np.random.Generator) -> dict[str, Any]:
        drawn = draw_piecepack_board(canvas, layout, painter_rng)
        return {"board": "piecepack", "pitch_mm": pitch, "tiles_per_side": layout.tiles_per_side,
                "lines_mm": {k: v.tolist() for k, v in drawn.lines_mm.items()}}

    return Script("shove-piecepack", players, clip, view, target,
                  {"tile_mm": round(pitch, 3)}, boards=(board,), frame="piecepack")


def _coin_target(rng: np.random.Generator, layout: PiecepackLayout,
                 played: int) -> tuple[float, float]:
    pitch = layout.pitch_mm
    r = COIN_MM / 2
    x = float(rng.uniform(r + 6, 4 * pitch - r - 6))
    roll = rng.random()
    if played == 1 and roll < 0.35:
        return x, float(rng.uniform(15, pitch - r - 6))  # short of line 1: not played
    if roll < 0.3:
        k = int(rng.integers(1, layout.lines + 1))
        return x, k * pitch + float(rng.uniform(-4, 4))  # on a line
    bed = int(min(layout.lines - 1, 1 + rng.exponential(2.0)))
    return decisive(layout, x, (bed + 0.5) * pitch + float(rng.uniform(-20, 20)))


#: No coin stops closer than this (mm) to touching a line, the board's side or line 1's
#: reach: within it the ruling hangs on less than the webcam's pixel (0.35-0.45 mm on these
#: clips) and its ground truth would be a coin toss, not a test of the referee.
DECISIVE_MM = 1.0
#: The seam the rules engine counts as part of each line (its ``seam_mm`` default).
SEAM_MM = ShovePiecepackSettings().seam_mm


def decisive(layout: PiecepackLayout, x: float, y: float) -> tuple[float, float]:
    """The coin centre moved, if need be, just far enough that every line, the sides and
    line 1's reach are clearly touched or clearly clear (``DECISIVE_MM``)."""
    pitch, r = layout.pitch_mm, COIN_MM / 2

    def away(gap: float) -> float:
        """How far to move, in the direction that widens ``gap``, for its size to reach
        DECISIVE_MM: a small clearance is widened, a small overlap deepened."""
        if abs(gap) >= DECISIVE_MM:
            return 0.0
        return DECISIVE_MM - gap if gap >= 0 else -(DECISIVE_MM + gap)

    for _ in range(2):
        for k in range(1, layout.lines + 1):
            side = 1.0 if y >= k * pitch else -1.0
            y += side * away(abs(y - k * pitch) - r - SEAM_MM / 2)
        y -= away(pitch - (y + r))  # line 1's reach: the far edge against line 1
        x += away(x - r)
        x -= away(4 * pitch - x - r)
    return x, y


def _knocks(rng: np.random.Generator, clip: ClipBuilder, on_board: list[str],
            coin: Placed, layout: PiecepackLayout) -> list[tuple[Placed, Placed]]:
    """Earlier coins in the new coin's way, or where it stops, get knocked forward; no two
    coins end up lying on each other."""
    knocks = []
    resting = [clip.objects[uid] for uid in on_board if uid in clip.objects]
    # Where coins will lie: the shoved coin's stop, and each knocked coin's new place.
    landed: list[tuple[float, float]] = [coin.center]
    for other in resting:
        dx = other.center[0] - coin.center[0]
        in_path = abs(dx) < COIN_MM and coin.center[1] - 60 < other.center[1]
        if in_path and other.center[1] < coin.center[1] + COIN_MM:
            y = coin.center[1] + float(rng.uniform(25, 60))
            x, y = decisive(layout, other.center[0] + dx * 0.5, y)
            while any(math.dist((x, y), o.center) < COIN_MM + 1 for o in resting
                      if o is not other) or \
                    any(math.dist((x, y), place) < COIN_MM + 1 for place in landed):
                x, y = decisive(layout, x, y + COIN_MM)
            landed.append((x, y))
            after = Placed(other.uid, other.kind, other.label, (x, y),
                           other.angle_deg, other.size_mm, height_mm=other.height_mm,
                           sprite_key=other.sprite_key)
            knocks.append((other, after))
    return knocks


def _coin_obs(coin: Placed) -> dict[str, Any]:
    return {"type": "coin_stopped", "id": coin.uid,
            "center": [round(coin.center[0], 2), round(coin.center[1], 2)],
            "radius": round(coin.size_mm[0] / 2, 2)}


# --- Shove (grid) ------------------------------------------------------------------------

def shove_grid(rng: np.random.Generator, deck: str, turns: int = 4, *,
               fps: float = 15.0) -> Script:
    del deck
    layout = layout_for_game("shove")
    assert isinstance(layout, GridBoardLayout)
    s = layout.square_mm
    players = ["blue", "red"]
    width, height = layout.width_mm, layout.height_mm
    seats = {"blue": Seat("blue", (width / 2, height + 420.0)),
             "red": Seat("red", (width / 2, -420.0))}
    clip = ClipBuilder(rng, fps)
    referee = _Referee("shove", players, clip)
    start = referee.session.state.position
    tokens: dict[tuple[str, int], str] = {}
    for colour in ("red", "blue"):
        for label, square in enumerate(start.pieces(colour)):
            if square is None:
                continue
            uid = f"{colour}{label}"
            tokens[(colour, label)] = uid
            clip.objects[uid] = _token(uid, colour, _square_centre(square, s, rng))
    clip.idle(1.0)
    for _ in range(turns):
        if referee.session.state.game_over:
            break
        roll = int(rng.integers(1, 5))
        clip.declare({"what": "die_roll", "value": roll, "player": "blue"})
        referee.catch_up()
        for colour in ("blue", "red"):
            used = 0
            wanted = int(rng.integers(1, roll + 1))
            while used < wanted and not referee.session.state.game_over:
                phase = referee.session.state.phase
                if phase is None or phase.colour != colour:
                    break
                node = cheapest_of(phase.frontier).node
                options = list(successors(phase.rules, node))
                if not options:
                    break
                ply, after = _choose(options, colour, rng)
                _act(clip, seats[colour], tokens, ply, s, rng)
                clip.observe(_board_obs(after.position))
                clip.idle(0.4)
                referee.catch_up()
                used += 1
                phase = referee.session.state.phase
                if phase is not None and phase.disputed:
                    # Ruled illegal (red left on the victory square, blue's path closed):
                    # the player puts the pieces back as the referee last saw them legal.
                    # The table, and so the truth, must not go on from the illegal board.
                    legal = cheapest_of(phase.frontier).node.position
                    _restore(clip, seats[colour], tokens, after.position, legal, s, rng)
                    clip.observe(_board_obs(legal))
                    clip.idle(0.4)
                    referee.catch_up()
            if used < roll and not referee.session.state.game_over:
                clip.declare({"what": "end_turn", "player": colour})
                referee.catch_up()
    clip.idle(1.0)

    def board(canvas: Any, painter_rng: np.random.Generator) -> dict[str, Any]:
        drawn = draw_grid_board(canvas, layout, painter_rng)
        return {"board": "grid", "pitch_mm": layout.square_mm,
                "corners_mm": drawn.corners_mm.tolist()}

    return Script("shove", players, clip, (width + 160, height + 120), (width / 2, height / 2),
                  {}, boards=(board,), frame="grid")


def _choose(options: list[Any], colour: str, rng: np.random.Generator) -> Any:
    """Players close in: red pushes when it can and walks towards blue; blue heads for
    the victory square, but not blindly."""
    def closeness(option: Any) -> float:
        position = option[1].position
        reds = [sq for sq in position.pieces("red") if sq is not None]
        blues = [sq for sq in position.pieces("blue") if sq is not None]
        if not reds or not blues:
            return 0.0
        if colour == "red":
            if isinstance(option[0].action, Push):
                return -100.0
            return float(min(abs(r[0] - b[0]) + abs(r[1] - b[1]) for r in reds for b in blues))
        return float(sum(b[0] for b in blues))

    scored = sorted(options, key=lambda o: closeness(o) + float(rng.uniform(0, 2.5)))
    return scored[0]


def _square_centre(square: tuple[int, int], s: float,
                   rng: np.random.Generator) -> tuple[float, float]:
    row, col = square
    jitter = rng.normal(0, 1.5, 2)
    return ((col + 0.5) * s + float(jitter[0]), (row + 0.5) * s + float(jitter[1]))


def _act(clip: ClipBuilder, seat: Seat, tokens: dict[tuple[str, int], str], ply: Any,
         s: float, rng: np.random.Generator) -> None:
    action = ply.action
    if isinstance(action, Move):
        clip.move(seat, tokens[(action.colour, action.label)],
                  _square_centre(action.end, s, rng), settle=0.2)
    else:
        assert isinstance(action, Push)
        for shift in reversed(action.shifts):  # the far piece of a chain moves first
            uid = tokens[("blue", shift.label)]
            if shift.end is None:
                clip.take(seat, [uid], settle=0.2)
            else:
                clip.move(seat, uid, _square_centre(shift.end, s, rng), settle=0.2)
    for removal in ply.removed:
        clip.take(seat, [tokens[(removal.colour, removal.label)]], settle=0.2)


def _token(uid: str, colour: str, centre: tuple[float, float]) -> Placed:
    return Placed(uid, "token", colour, centre, 0.0, (TOKEN_MM, TOKEN_MM), height_mm=4.0)


def _restore(clip: ClipBuilder, seat: Seat, tokens: dict[tuple[str, int], str],
             shown: Any, legal: Any, s: float, rng: np.random.Generator) -> None:
    """Put each piece where ``legal`` has it, from where ``shown`` has it: moved back, or
    laid down again when it was taken off the board."""
    for colour in ("red", "blue"):
        for label, back in enumerate(legal.pieces(colour)):
            now = shown.pieces(colour)[label]
            if back == now or back is None:
                continue
            uid = tokens[(colour, label)]
            if now is None:
                clip.place(seat, _token(uid, colour, _square_centre(back, s, rng)), settle=0.2)
            else:
                clip.move(seat, uid, _square_centre(back, s, rng), settle=0.2)


def _board_obs(position: Any) -> dict[str, Any]:
    return {"type": "board_state",
            "red": sorted([list(sq) for sq in position.pieces("red") if sq is not None]),
            "blue": sorted([list(sq) for sq in position.pieces("blue") if sq is not None])}

