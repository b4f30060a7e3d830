"""Shove Piggy Shove (Allison James), rules.md section 1."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field

from referee.cards import RANKS, Card, rank_distance, rank_step
from referee.geometry import (
    ROUND_OFF_MM,
    card_outline,
    fully_covers,
    gap_mm,
    more_than,
    overlap_mm2,
    touches,
)
from referee.observations import CardPlaced, CardRemoved, Declare, Observation
from referee.rules.base import (
    ObservationInputError,
    Rules,
    Settings,
    State,
    acting_player,
    next_player,
    not_in_this_game,
)
from referee.rulings import (
    Bonuses,
    Declared,
    GameOver,
    Illegal,
    Impossible,
    Legal,
    Ruling,
    Score,
    Turn,
    Unreadable,
)

Corners = tuple[tuple[float, float], tuple[float, float], tuple[float, float], tuple[float, float]]
Phase = Literal["open_first", "open_second", "play", "over"]


class ShovePiggySettings(Settings):
    open_gap_mm: float = Field(10.0, ge=0)
    open_distance_wraps: bool = True
    touch_tolerance_mm2: float = Field(20.0, ge=0)
    hand_size: int = Field(7, ge=1, le=26)
    open_min_distance: int = Field(3, ge=0, le=6)


@dataclass
class ShovePiggyState(State[ShovePiggySettings]):
    winner_seat: str  # acts as "previous winner": places the first card
    loser_seat: str
    phase: Phase = "open_first"
    to_play: str = ""
    table: dict[Card, Corners] = field(default_factory=dict)
    hands: dict[str, int] = field(default_factory=dict)
    banked: dict[str, int] = field(default_factory=dict)
    taken_back: set[Card] = field(default_factory=set)  # ruled illegal, still to be picked up
    round: int = 1
    rounds_won: dict[str, int] = field(default_factory=dict)  # the cumulative score


@dataclass(frozen=True)
class _Contacts:
    """What a new card touches, by rank relation, with the overlap areas (mm^2)."""

    lower: list[Card]
    higher: list[Card]
    other: list[Card]
    covered: list[Card]
    areas: dict[str, float]


class ShovePiggyShoveRules(Rules[ShovePiggyState, ShovePiggySettings]):
    game = "shove-piggy-shove"
    title = "Shove Piggy Shove"
    settings_type = ShovePiggySettings
    player_counts = (2,)
    default_players = ("P1", "P2")
    declares = ("oink", "new_round")

    def _new(self, players: tuple[str, ...], settings: ShovePiggySettings) -> ShovePiggyState:
        state = ShovePiggyState(players, settings, winner_seat=players[0], loser_seat=players[1],
                                rounds_won={p: 0 for p in players})
        _deal(state)
        return state

    def _apply(self, state: ShovePiggyState, observation: Observation) -> list[Ruling]:
        if isinstance(observation, Declare) and observation.what == "new_round":
            return _new_round(state, observation.t)
        if state.phase == "over":
            return []
        if isinstance(observation, CardPlaced):
            return _place(state, observation)
        if isinstance(observation, CardRemoved):
            return _remove(state, observation)
        if isinstance(observation, Declare):
            return _declare(state, observation)
        return [not_in_this_game(observation, "Shove Piggy Shove", state.players)]


def _deal(state: ShovePiggyState) -> None:
    state.phase = "open_first"
    state.to_play = state.winner_seat
    state.table = {}
    state.taken_back = set()
    state.hands = {p: state.settings.hand_size for p in state.players}
    state.banked = {p: 0 for p in state.players}


def _new_round(state: ShovePiggyState, t: float) -> list[Ruling]:
    finished = state.phase == "over"
    state.round += 1
    state.game_over = False
    _deal(state)
    why = "won the last round" if finished else \
        "opened the last round, which nobody won (it was left unfinished),"
    return [
        Declared(t=t, what="new_round", message=f"Round {state.round}: deal "
                 f"{state.settings.hand_size} cards each."),
        _turn(state, t, f"{state.to_play} {why} and places the first card."),
    ]


def _turn(state: ShovePiggyState, t: float, message: str) -> Turn:
    return Turn(
        t=t,
        player=state.to_play,
        message=message,
        hand_counts=dict(state.hands),
        extra_turns=state.banked[state.to_play],
    )


def _place(state: ShovePiggyState, obs: CardPlaced) -> list[Ruling]:
    card = obs.parsed
    player = acting_player(state.players, obs.player, state.to_play)
    if card is None:
        return [Unreadable(t=obs.t, player=player, card=obs.card,
                           message="The card could not be read; no ruling until it is.")]
    if obs.corners is None:
        raise ObservationInputError("missing field 'corners' (Shove Piggy Shove needs outlines)")
    card_outline(obs.corners)  # corners that outline no card are bad input on this line
    if card.is_joker:
        return [Impossible(t=obs.t, rule="not_in_deck", card=str(card), player=player,
                           message="Shove Piggy Shove is played without jokers: a misread, "
                                   "or a joker to take out of the deck.")]
    if card in state.table:
        return [Impossible(t=obs.t, rule="card_already_on_table", card=str(card), player=player,
                           message=f"The {card.name} is already on the table: a misread.")]
    state.taken_back.discard(card)

    def illegal(rule: str, message: str, evidence: dict[str, Any] | None = None) -> Illegal:
        state.taken_back.add(card)
        fields = {"evidence": evidence} if evidence else {}
        return Illegal(t=obs.t, player=player, rule=rule, card=str(card),
                       hand_counts=dict(state.hands),
                       message=f"{message.rstrip('.')}, so {player} takes the {card.name} back.",
                       **fields)

    if player != state.to_play:
        return [illegal("out_of_turn", f"It is {state.to_play}'s turn, not {player}'s.")]
    if state.phase == "open_first":
        return _legal_opening(state, obs, card, player, "opens with")
    if state.phase == "open_second":
        if not state.table:
            # The first card left the table (card_left_table): nothing to keep the answer from.
            return _legal_opening(state, obs, card, player, "answers with")
        (first, first_corners), = state.table.items()
        outline, first_outline = card_outline(obs.corners), card_outline(first_corners)
        gap = gap_mm(outline, first_outline)
        gap_evidence = {"gap_mm": round(gap, 2), "open_gap_mm": state.settings.open_gap_mm}
        overlap = overlap_mm2(outline, first_outline)
        # "does not touch", whatever the gap
        if more_than(overlap, state.settings.touch_tolerance_mm2):
            return [illegal("opening_too_close",
                            "The second card must not touch the first, and it overlaps it.",
                            {**gap_evidence, "overlap_mm2": round(overlap, 1),
                             "touch_tolerance_mm2": state.settings.touch_tolerance_mm2})]
        if gap < state.settings.open_gap_mm - ROUND_OFF_MM:
            return [illegal("opening_too_close",
                            f"The second card must lie at least {state.settings.open_gap_mm:g} mm "
                            f"from the first; it is {math.floor(gap * 10) / 10:g} mm away.",
                            gap_evidence)]  # 9.96 mm is "9.9", never the 10 it misses
        distance = rank_distance(card.rank, first.rank, wraps=state.settings.open_distance_wraps)
        if distance < state.settings.open_min_distance:
            return [illegal("opening_rank_distance",
                            f"The opening cards must be at least "
                            f"{state.settings.open_min_distance} ranks apart; "
                            f"{first} and {card} are {distance}.", gap_evidence)]
        return _legal_opening(state, obs, card, player, "answers with")
    contacts = _contacts(state, card, obs.corners)
    evidence: dict[str, Any] = {"overlaps_mm2": contacts.areas,
                "touch_tolerance_mm2": state.settings.touch_tolerance_mm2}
    if contacts.covered:
        names = ", ".join(str(c) for c in contacts.covered)
        return [illegal("full_cover", f"The {card.name} covers {names} completely; a shove "
                        "must only partly overlap.", evidence)]
    if not contacts.lower:
        below = RANKS[rank_step(card.rank, -1) - 1]
        return [illegal("not_one_rank_higher",
                        f"The {card.name} touches no card one rank lower ({below}).", evidence)]
    if contacts.other:
        names = ", ".join(str(c) for c in contacts.other)
        return [illegal("touches_other_rank",
                        f"The {card.name} also touches {names}, which is neither one rank lower "
                        "nor one rank higher.", evidence)]
    return _legal_shove(state, obs, card, player, contacts, evidence)


def _legal_opening(
    state: ShovePiggyState, obs: CardPlaced, card: Card, player: str, verb: str
) -> list[Ruling]:
    assert obs.corners is not None
    state.table[card] = obs.corners
    state.hands[player] -= 1
    rulings: list[Ruling] = [
        # An opening card earns nothing; it carries a shove's fields all the same.
        Legal(t=obs.t, player=player, card=str(card), hand_counts=dict(state.hands),
              bonuses=Bonuses(), extra_turns=state.banked[player],
              message=f"{player} {verb} the {card.name}.")
    ]
    if state.hands[player] == 0:  # a hand of one card is emptied by its opening card
        return [*rulings, *_win(state, obs.t, player)]
    if state.phase == "open_first":
        state.phase = "open_second"
        state.to_play = state.loser_seat
        message = (f"{state.to_play} places a card at least "
                   f"{state.settings.open_min_distance} ranks away, not touching it.")
    else:
        state.phase = "play"
        message = f"{state.to_play} shoves first."
    return [*rulings, _turn(state, obs.t, message)]


def _contacts(state: ShovePiggyState, card: Card, corners: Corners) -> _Contacts:
    outline = card_outline(corners)
    tolerance = state.settings.touch_tolerance_mm2
    lower, higher, other, covered = [], [], [], []
    areas: dict[str, float] = {}
    for placed, placed_corners in state.table.items():
        placed_outline = card_outline(placed_corners)
        area = overlap_mm2(outline, placed_outline)
        if not more_than(area, tolerance):
            continue
        areas[str(placed)] = round(area, 1)
        if fully_covers(outline, placed_outline, tolerance):
            covered.append(placed)
        if placed.rank == rank_step(card.rank, -1):
            lower.append(placed)
        elif placed.rank == rank_step(card.rank, 1):
            higher.append(placed)
        else:
            other.append(placed)
    return _Contacts(lower, higher, other, covered, areas)


def _bonuses(state: ShovePiggyState, card: Card, contacts: _Contacts) -> Bonuses:
    tolerance = state.settings.touch_tolerance_mm2
    piggy = 0
    if card.rank == 2:
        kings = [card_outline(c) for k, c in state.table.items() if k.rank == 13]
        for ace in contacts.lower:
            ace_outline = card_outline(state.table[ace])
            if any(touches(ace_outline, king, tolerance) for king in kings):
                piggy += 1
    return Bonuses(
        match=sum(1 for lower in contacts.lower if lower.suit == card.suit),
        double=len(contacts.lower) - 1,
        chain=len(contacts.higher),
        piggy=piggy,
    )


def _legal_shove(
    state: ShovePiggyState,
    obs: CardPlaced,
    card: Card,
    player: str,
    contacts: _Contacts,
    evidence: dict[str, Any],
) -> list[Ruling]:
    assert obs.corners is not None
    bonuses = _bonuses(state, card, contacts)
    state.table[card] = obs.corners
    state.hands[player] -= 1
    state.banked[player] += bonuses.total
    onto = " and ".join(str(c) for c in contacts.lower)
    earned = f", earning {bonuses.total} extra turn{'s' if bonuses.total != 1 else ''}"
    rulings: list[Ruling] = [
        Legal(
            t=obs.t, player=player, card=str(card), bonuses=bonuses,
            extra_turns=state.banked[player], hand_counts=dict(state.hands), evidence=evidence,
            message=f"{player} shoves the {card.name} onto {onto}"
            + (earned if bonuses.total else "") + ".",
        )
    ]
    if state.hands[player] == 0:
        return [*rulings, *_win(state, obs.t, player)]
    return [*rulings, _end_turn(state, obs.t, player)]


def _win(state: ShovePiggyState, t: float, player: str) -> list[Ruling]:
    """``player`` has just emptied their hand: first to 0 wins the round, and play stops."""
    state.phase = "over"
    state.game_over = True
    state.winner_seat, state.loser_seat = player, next_player(state.players, player)
    state.rounds_won[player] += 1
    won = ", ".join(f"{p} {n}" for p, n in state.rounds_won.items())
    return [Score(t=t, player=player, scores=dict(state.rounds_won),
                  message=f"Rounds won: {won}."),
            GameOver(t=t, player=player, winner=player, scores=dict(state.rounds_won),
                     message=f"{player} has no cards left and wins the round!")]


def _end_turn(state: ShovePiggyState, t: float, player: str) -> Turn:
    if state.banked[player] > 0:
        state.banked[player] -= 1
        left = state.banked[player]
        return _turn(state, t, f"{player} takes an extra turn ({left} more banked).")
    state.to_play = next_player(state.players, player)
    return _turn(state, t, f"{state.to_play} to shove.")


def _remove(state: ShovePiggyState, obs: CardRemoved) -> list[Ruling]:
    card = obs.parsed
    if card is None:
        return []
    if card in state.taken_back:
        state.taken_back.discard(card)
        return []
    if card in state.table:
        # A card leaving the table mid-round is not a play; keep the record straight.
        del state.table[card]
        return [Impossible(t=obs.t, rule="card_left_table", card=str(card),
                           message=f"The {card.name} left the table; it no longer counts.")]
    return []


def _declare(state: ShovePiggyState, obs: Declare) -> list[Ruling]:
    if obs.what != "oink":
        return [not_in_this_game(obs, "Shove Piggy Shove", state.players)]
    player = acting_player(state.players, obs.player, state.to_play)
    if player != state.to_play:
        return [Illegal(t=obs.t, player=player, rule="out_of_turn", hand_counts=dict(state.hands),
                        message=f"Only {state.to_play} may oink now.")]
    if state.phase == "open_first":  # any card opens, so there is nothing to oink about
        return [Illegal(t=obs.t, player=player, rule="cannot_oink_now",
                        hand_counts=dict(state.hands),
                        message=f"No oink on the opening: {player} places any card.")]
    state.hands[player] += 1
    rulings: list[Ruling] = [
        Declared(t=obs.t, player=player, what="oink", hand_counts=dict(state.hands),
                 message=f"Oink: {player} cannot play and draws a card.")
    ]
    if state.phase == "open_second":  # the opening card still has to be placed
        return [*rulings, _turn(state, obs.t, f"{player} still places the second card.")]
    return [*rulings, _end_turn(state, obs.t, player)]
