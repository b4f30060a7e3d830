"""Scripted play of the three card games, as players would play them.

The rules engine runs alongside the script (``Session``): it says whose turn it is and
who takes a row, so the script plays real games, legal and illegal moves included, and
the footage's ground truth is what actually happened on the table.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from shapely.geometry import Polygon

from referee.adjudication import Session
from referee.cards import CARD_MM, JOKER, STANDARD_DECK, Card, rank_step
from referee.observations import Observation, Setup, parse_line
from referee.rulings import Ruling
from synth.footage.clip import ClipBuilder, Seat
from synth.scene import BoardPainter, Placed, card

TOUCH_MARGIN_MM2 = 250.0  # a shove overlaps clearly; anything else clearly does not touch
GAP_MARGIN_MM = 6.0


@dataclass
class Script:
    game: str
    players: list[str]
    clip: ClipBuilder
    view_mm: tuple[float, float]
    target: tuple[float, float]
    settings: dict[str, Any]
    boards: tuple[BoardPainter, ...] = ()
    frame: Literal["table", "piecepack", "grid"] = "table"  # the calibration's frame


def _observation(data: dict[str, Any]) -> Observation:
    parsed = parse_line(json.dumps(data))
    assert not isinstance(parsed, Setup)
    return parsed


class _Referee:
    """The engine, fed with the script's observations as they happen."""

    def __init__(self, game: str, players: list[str], clip: ClipBuilder) -> None:
        self.session = Session.start(game, players, {})
        self.clip = clip
        self.seen = 0
        self.rulings: list[Ruling] = []

    def catch_up(self) -> list[Ruling]:
        new: list[Ruling] = []
        for data in self.clip.observations[self.seen:]:
            new += self.session.feed(_observation(data))
        self.seen = len(self.clip.observations)
        self.rulings += new
        return new

    @property
    def to_play(self) -> str:
        return str(self.session.state.to_play)


def _card_obs(obj: Placed, player: str) -> dict[str, Any]:
    return {"type": "card_placed", "card": obj.label,
            "corners": obj.corners_mm().round(2).tolist(), "player": player}


# --- Shove Piggy Shove --------------------------------------------------------------------

def shove_piggy_shove(rng: np.random.Generator, deck: str, plays: int = 10, *,
                      fps: float = 15.0, card_mm: tuple[float, float] = CARD_MM) -> Script:
    players = ["Ann", "Ben"]
    seats = {"Ann": Seat("Ann", (0.0, -480.0)), "Ben": Seat("Ben", (0.0, 480.0))}
    clip = ClipBuilder(rng, fps)
    referee = _Referee("shove-piggy-shove", players, clip)
    shuffled = list(STANDARD_DECK)
    rng.shuffle(shuffled)
    hands = {"Ann": shuffled[:7], "Ben": shuffled[7:14]}
    stock = shuffled[14:]
    table: dict[Card, Placed] = {}
    clip.idle(1.0)

    def lay(player: str, chosen: Card, obj: Placed) -> list[Ruling]:
        clip.place(seats[player], obj, observation=_card_obs(obj, player))
        rulings = referee.catch_up()
        if any(r.kind == "illegal" for r in rulings):
            clip.take(seats[player], [obj.uid],
                      observations=[{"type": "card_removed", "card": obj.label,
                                     "player": player}])
            referee.catch_up()
        else:
            hands[player].remove(chosen)
            table[chosen] = obj
        return rulings

    first = hands["Ann"][0]
    lay("Ann", first, card(str(first), str(first), deck, (-110.0, 10.0),
                           float(rng.uniform(-20, 20)), size_mm=card_mm))
    second = next((c for c in hands["Ben"] if _far_rank(c, first)), None)
    if second is None:
        second = next(c for c in stock if _far_rank(c, first))
        stock.remove(second)
        hands["Ben"][0] = second
    lay("Ben", second, card(str(second), str(second), deck, (110.0, -10.0),
                            float(rng.uniform(-20, 20)), size_mm=card_mm))
    tried_illegal = False
    for _ in range(plays):
        if referee.session.state.game_over:
            break
        player = referee.to_play
        options = [(c, _legal_spot(c, table, rng, deck, card_mm)) for c in hands[player]]
        playable = [(c, spot) for c, spot in options if spot is not None]
        if not tried_illegal and len(table) >= 3 and rng.random() < 0.4:
            tried_illegal = True
            wrong = hands[player][0]
            spot = _lonely_spot(table, rng, deck, wrong, card_mm)
            if spot is not None:
                lay(player, wrong, spot)
                continue
        if playable:
            chosen, spot = playable[int(rng.integers(len(playable)))]
            lay(player, chosen, spot)
        elif stock:
            hands[player].append(stock.pop())
            clip.declare({"what": "oink", "player": player})
            referee.catch_up()
        else:
            break
    clip.idle(1.0)
    return Script("shove-piggy-shove", players, clip, (620.0, 420.0), (0.0, 0.0), {})


def _far_rank(a: Card, b: Card) -> bool:
    d = abs(a.rank - b.rank)
    return min(d, 13 - d) >= 3


def _outline(center: tuple[float, float], angle: float,
             card_mm: tuple[float, float]) -> Polygon:
    return Polygon(card("x", "AS", "", center, angle, size_mm=card_mm).corners_mm())


def _legal_spot(chosen: Card, table: dict[Card, Placed], rng: np.random.Generator,
                deck: str, card_mm: tuple[float, float]) -> Placed | None:
    """A place where ``chosen`` is clearly a legal shove, or None."""
    lower = rank_step(chosen.rank, -1)
    higher = rank_step(chosen.rank, 1)
    targets = [c for c in table if c.rank == lower]
    outlines = {c: o.outline() for c, o in table.items()}
    for _ in range(60 if targets else 0):
        base = table[targets[int(rng.integers(len(targets)))]]
        angle = float(rng.uniform(-35, 35))
        distance = rng.uniform(45, 75)
        heading = rng.uniform(0, 2 * math.pi)
        centre = (base.center[0] + distance * math.cos(heading),
                  base.center[1] + distance * math.sin(heading))
        if abs(centre[0]) > 260 or abs(centre[1]) > 170:
            continue
        spot = _outline(centre, angle, card_mm)
        ok = True
        touched_lower = False
        for c, outline in outlines.items():
            area = spot.intersection(outline).area
            if area > TOUCH_MARGIN_MM2:
                covered = outline.difference(spot).area < 200
                if covered or c.rank not in (lower, higher):
                    ok = False
                    break
                touched_lower |= c.rank == lower
            elif area > 0 or spot.distance(outline) < GAP_MARGIN_MM:
                ok = False
                break
        if ok and touched_lower:
            return card(str(chosen), str(chosen), deck, centre, angle, size_mm=card_mm)
    return None


def _lonely_spot(table: dict[Card, Placed], rng: np.random.Generator, deck: str,
                 chosen: Card, card_mm: tuple[float, float]) -> Placed | None:
    """An illegal shove: onto a card that is not one rank lower (or onto nothing)."""
    lower = rank_step(chosen.rank, -1)
    higher = rank_step(chosen.rank, 1)
    wrong = [c for c in table if c.rank not in (lower, higher)]
    if not wrong:
        return None
    base = table[wrong[int(rng.integers(len(wrong)))]]
    centre = (base.center[0] + float(rng.uniform(-40, 40)),
              base.center[1] + float(rng.choice([-1, 1]) * rng.uniform(50, 70)))
    return card(str(chosen), str(chosen), deck, centre, float(rng.uniform(-30, 30)),
                size_mm=card_mm)


# --- Push Out the Pig ---------------------------------------------------------------------

def push_out_the_pig(rng: np.random.Generator, deck: str, tricks: int = 2, *,
                     fps: float = 15.0, card_mm: tuple[float, float] = CARD_MM) -> Script:
    players = ["Ann", "Ben", "Cat", "Dan"]
    homes = {"Ann": (0.0, -480.0), "Ben": (-560.0, 0.0), "Cat": (0.0, 480.0),
             "Dan": (560.0, 0.0)}
    seats = {p: Seat(p, h) for p, h in homes.items()}
    spots = {"Ann": ((0.0, -75.0), 0.0), "Ben": ((-95.0, 0.0), -90.0),
             "Cat": ((0.0, 75.0), 180.0), "Dan": ((95.0, 0.0), 90.0)}
    clip = ClipBuilder(rng, fps)
    referee = _Referee("push-out-the-pig", players, clip)
    shuffled = list(STANDARD_DECK)
    rng.shuffle(shuffled)
    hands = {p: shuffled[i * 13:(i + 1) * 13] for i, p in enumerate(players)}
    leader = next(p for p in players if Card.parse("2S") in hands[p])
    clip.idle(1.0)
    out_of_turn_done = False
    for _ in range(tricks):
        on_table: list[Placed] = []
        for offset in range(4):
            player = referee.to_play if on_table else leader
            if not out_of_turn_done and on_table and rng.random() < 0.3:
                out_of_turn_done = True
                eager = players[(players.index(player) + 1) % 4]
                early = hands[eager][0]
                obj = _trick_card(early, eager, spots, deck, rng, card_mm)
                clip.place(seats[eager], obj, observation=_card_obs(obj, eager))
                clip.take(seats[eager], [obj.uid], observations=[
                    {"type": "card_removed", "card": obj.label, "player": eager}])
                referee.catch_up()
            led = next((c.suit for c in (Card.parse(o.label) for o in on_table)), None)
            follow = [c for c in hands[player] if c.suit == led] if led else []
            chosen = (follow or hands[player])[int(rng.integers(len(follow or hands[player])))]
            if not on_table and offset == 0 and Card.parse("2S") in hands[player] \
                    and len(hands[player]) == 13:
                chosen = Card.parse("2S")
            hands[player].remove(chosen)
            obj = _trick_card(chosen, player, spots, deck, rng, card_mm)
            clip.place(seats[player], obj, observation=_card_obs(obj, player))
            on_table.append(obj)
            referee.catch_up()
        winner = next(r for r in reversed(referee.rulings) if r.kind == "trick").player
        assert winner is not None
        clip.take(seats[winner], [o.uid for o in on_table], observations=[
            {"type": "card_removed", "card": o.label, "player": winner} for o in on_table])
        referee.catch_up()
        leader = winner
    clip.idle(1.0)
    return Script("push-out-the-pig", players, clip, (520.0, 380.0), (0.0, 0.0), {})


def _trick_card(chosen: Card, player: str,
                spots: dict[str, tuple[tuple[float, float], float]], deck: str,
                rng: np.random.Generator, card_mm: tuple[float, float]) -> Placed:
    (x, y), angle = spots[player]
    jitter = rng.normal(0, 8, 2)
    return card(str(chosen), str(chosen), deck, (x + float(jitter[0]), y + float(jitter[1])),
                angle + float(rng.normal(0, 10)), size_mm=card_mm)


# --- Slapstick ------------------------------------------------------------------------------

def slapstick(rng: np.random.Generator, deck: str, cards_played: int = 13, *,
              fps: float = 15.0, card_mm: tuple[float, float] = CARD_MM) -> Script:
    players = ["Ann", "Ben", "Cat"]
    seats = {"Ann": Seat("Ann", (0.0, -480.0)), "Ben": Seat("Ben", (-560.0, 120.0)),
             "Cat": Seat("Cat", (560.0, 120.0))}
    clip = ClipBuilder(rng, fps)
    referee = _Referee("slapstick", players, clip)
    deck_cards = [*STANDARD_DECK, JOKER, JOKER, JOKER]
    rng.shuffle(deck_cards)
    order = players
    piles = {p: [c for i, c in enumerate(deck_cards) if order[i % 3] == p] for p in players}
    row: list[Placed] = []
    clip.idle(1.0)
    chickened = False
    serial = 0
    for _ in range(cards_played):
        if referee.session.state.game_over:
            break
        player = referee.to_play
        if not chickened and len(row) >= 4 and rng.random() < 0.25:
            chickened = True
            clip.declare({"what": "chicken_out", "player": player})
            clip.take(seats[player], [o.uid for o in row], observations=[
                {"type": "card_removed", "card": o.label, "player": player} for o in row])
            referee.catch_up()
            piles[player] += [Card.parse(o.label) for o in row]
            row = []
            continue
        chosen = piles[player].pop(0)
        serial += 1
        x = -150.0 + 24.0 * len(row)
        obj = card(f"{chosen}-{serial}", str(chosen), deck,
                   (x + float(rng.normal(0, 2)), float(rng.normal(0, 3))),
                   float(rng.normal(0, 4)), size_mm=card_mm)
        clip.place(seats[player], obj, observation=_card_obs(obj, player))
        row.append(obj)
        for ruling in referee.catch_up():
            if ruling.kind == "take_row":
                taker = str(ruling.model_dump()["taker"])
                clip.take(seats[taker], [o.uid for o in row], observations=[
                    {"type": "card_removed", "card": o.label, "player": taker} for o in row])
                referee.catch_up()
                piles[taker] += [Card.parse(o.label) for o in row]
                row = []
    clip.idle(1.0)
    return Script("slapstick", players, clip, (560.0, 380.0), (0.0, 0.0), {})
