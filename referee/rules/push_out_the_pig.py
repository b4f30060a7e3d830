"""Push Out the Pig (Gong Zhu), rules.md section 3."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final, Literal

from pydantic import Field, field_validator

from referee.cards import Card
from referee.observations import CardPlaced, CardRemoved, Declare, Observation
from referee.rules.base import Rules, Settings, State, acting_player, next_player, not_in_this_game
from referee.rulings import (
    GameOver,
    Illegal,
    Impossible,
    Legal,
    Revoke,
    RoundScore,
    Ruling,
    Score,
    Trick,
    Turn,
    Unreadable,
)

JOKERS_FOR_PLAYERS: Final = {3: 2, 4: 0, 5: 3, 6: 2}
HEART_VALUES: Final = {1: -50, 13: -40, 12: -30, 11: -20, 10: -10, 9: -10, 8: -10, 7: -10,
                       6: -10, 5: -10, 4: 0, 3: 0, 2: 0}
QUEEN_OF_SPADES: Final = Card(12, "S")
JACK_OF_DIAMONDS: Final = Card(11, "D")
TEN_OF_CLUBS: Final = Card(10, "C")
NO_FIRST_LEAD: Final = "none"


class PushOutThePigSettings(Settings):
    #: The card whose holder leads round 1, or "none": the first listed player leads.
    first_lead: str = "2S"
    joker_any_time: bool = True
    #: "flag": a revoke is announced only; a number: that many points taken off the
    #: revoker's round (50 and -50 alike: a penalty never rewards).
    revoke_penalty: Literal["flag"] | int = "flag"
    game_end: int = Field(1000, gt=0)

    @field_validator("revoke_penalty", mode="before")
    @classmethod
    def _flag_or_points(cls, value: object) -> object:
        if isinstance(value, str):
            if value.strip().lower() == "flag":
                return "flag"
            try:
                value = float(value)
            except ValueError:
                raise ValueError("it is flag or a whole number of points") from None
        if isinstance(value, float):
            if not value.is_integer():
                raise ValueError("it is flag or a whole number of points")
            return int(value)
        return value

    @field_validator("first_lead")
    @classmethod
    def _card_or_none(cls, value: str) -> str:
        if value.lower() == NO_FIRST_LEAD:
            return NO_FIRST_LEAD
        card = Card.parse(value)
        if card.is_joker:
            raise ValueError("the first lead must be a card of a suit")
        return str(card)


@dataclass
class PushOutThePigState(State[PushOutThePigSettings]):
    round: int = 1
    trick_number: int = 1  # the trick in progress, from 1
    leader: str = ""
    to_play: str = ""
    trick: list[tuple[str, Card]] = field(default_factory=list)
    played: list[Card] = field(default_factory=list)  # this round, for impossible repeats
    captured: dict[str, list[Card]] = field(default_factory=dict)
    voids: dict[str, dict[str, int]] = field(default_factory=dict)  # player -> suit -> trick
    penalties: dict[str, int] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)
    lead_holder: str | None = None  # who is taken to hold the first-lead card in round 1

    @property
    def jokers(self) -> int:
        return JOKERS_FOR_PLAYERS[len(self.players)]

    @property
    def tricks_per_round(self) -> int:
        return (52 + self.jokers) // len(self.players)


class PushOutThePigRules(Rules[PushOutThePigState, PushOutThePigSettings]):
    game = "push-out-the-pig"
    title = "Push Out the Pig"
    settings_type = PushOutThePigSettings
    player_counts = (3, 4, 5, 6)
    default_players = ("P1", "P2", "P3", "P4")
    declares = ("new_round",)

    def _new(
        self, players: tuple[str, ...], settings: PushOutThePigSettings
    ) -> PushOutThePigState:
        state = PushOutThePigState(players, settings, totals={p: 0 for p in players})
        _start_round(state, players[0])
        return state

    def _apply(self, state: PushOutThePigState, observation: Observation) -> list[Ruling]:
        if state.game_over or isinstance(observation, CardRemoved):
            return []  # gathering a trick takes cards off the table: nothing to rule
        if isinstance(observation, CardPlaced):
            return _play(state, observation)
        if isinstance(observation, Declare) and observation.what == "new_round":
            return []  # rounds start by themselves after the last trick
        return [not_in_this_game(observation, "Push Out the Pig", state.players)]


def _start_round(state: PushOutThePigState, leader: str) -> None:
    state.trick_number = 1
    state.leader = state.to_play = leader
    state.trick = []
    state.played = []
    state.captured = {p: [] for p in state.players}
    state.voids = {p: {} for p in state.players}
    state.penalties = {p: 0 for p in state.players}


def _led_suit(trick: Iterable[tuple[str, Card]]) -> str | None:
    return next((card.suit for _, card in trick if not card.is_joker), None)


def _impossible(state: PushOutThePigState, card: Card) -> str | None:
    if card.is_joker:
        if state.jokers == 0:
            return f"There are no jokers with {len(state.players)} players."
        if sum(c.is_joker for c in state.played) >= state.jokers:
            return f"All {state.jokers} jokers have been played this round already."
    elif card in state.played:
        return f"The {card.name} was played already this round: a misread."
    return None


def _play(state: PushOutThePigState, obs: CardPlaced) -> list[Ruling]:
    card = obs.parsed
    round_opening = (state.round == 1 and not state.played
                     and state.settings.first_lead != NO_FIRST_LEAD)
    if round_opening and obs.player is not None:
        # Nobody can see the hands: whoever leads round 1 is taken to hold the first lead.
        state.leader = state.to_play = acting_player(state.players, obs.player, state.to_play)
    player = acting_player(state.players, obs.player, state.to_play)
    if card is None:
        return [Unreadable(t=obs.t, player=player, card=obs.card,
                           message="The card could not be read; no ruling until it is.")]
    problem = _impossible(state, card)
    if problem:
        rule = "not_in_deck" if card.is_joker and state.jokers == 0 else "card_already_played"
        return [Impossible(t=obs.t, player=player, rule=rule, card=str(card), message=problem)]
    if player != state.to_play:
        return [Illegal(t=obs.t, player=player, rule="out_of_turn", card=str(card),
                        message=f"It is {state.to_play}'s turn, not {player}'s: take the "
                                f"{card.name} back.")]
    if round_opening:
        state.lead_holder = player
    # The card joins the trick either way; played by someone who did not lead the first
    # trick, the 2S shows the lead was wrong, and that is its ruling rather than legal.
    rulings: list[Ruling] = _wrong_leader(state, obs.t, player, card) or [
        Legal(t=obs.t, player=player, card=str(card), message=f"{player} plays the {card.name}.")]
    rulings += _follow_suit(state, obs.t, player, card)
    state.trick.append((player, card))
    state.played.append(card)
    state.to_play = next_player(state.players, player)
    if len(state.trick) == len(state.players):
        return rulings + _finish_trick(state, obs.t)
    return [*rulings, Turn(t=obs.t, player=state.to_play,
                           message=f"{state.to_play} plays next.")]


def _wrong_leader(state: PushOutThePigState, t: float, player: str, card: Card) -> list[Ruling]:
    if state.round != 1 or state.lead_holder in (None, player):
        return []
    if str(card) != state.settings.first_lead:
        return []
    return [Illegal(t=t, player=player, rule="wrong_leader", card=str(card),
                    message=f"{player} holds the {card.name}, so {player} should have led "
                            f"the first trick, not {state.lead_holder}.")]


def _follow_suit(state: PushOutThePigState, t: float, player: str, card: Card) -> list[Ruling]:
    led = _led_suit(state.trick)
    voids = state.voids[player]
    shows_void = not card.is_joker or not state.settings.joker_any_time
    if led is not None and card.suit != led and led not in voids and shows_void:
        voids[led] = state.trick_number  # they showed they hold no card of the led suit
    if card.suit is None or card.suit not in voids:
        return []
    earlier = voids.pop(card.suit)
    if isinstance(state.settings.revoke_penalty, int):
        state.penalties[player] -= abs(state.settings.revoke_penalty)
    suit_name = card.name.split(" of ")[1]
    return [Revoke(t=t, player=player, suit=card.suit, tricks=[earlier, state.trick_number],
                   message=f"Revoke: {player} did not follow {suit_name} in trick {earlier} "
                           f"but plays the {card.name} in trick {state.trick_number}.")]


def _trick_winner(state: PushOutThePigState) -> str:
    led = _led_suit(state.trick)
    if led is None:  # only jokers: the leader takes it
        return state.trick[0][0]
    ace_high = {1: 14}
    return max(
        ((p, c) for p, c in state.trick if c.suit == led),
        key=lambda pc: ace_high.get(pc[1].rank, pc[1].rank),
    )[0]


def _finish_trick(state: PushOutThePigState, t: float) -> list[Ruling]:
    winner = _trick_winner(state)
    cards = [c for _, c in state.trick]
    state.captured[winner] += cards
    rulings: list[Ruling] = [
        Trick(t=t, player=winner, winner=winner, cards=[str(c) for c in cards],
              led_suit=_led_suit(state.trick), trick=state.trick_number,
              message=f"{winner} takes trick {state.trick_number}.")
    ]
    state.trick = []
    state.trick_number += 1
    state.leader = state.to_play = winner
    if state.trick_number > state.tricks_per_round:
        return rulings + _score_round(state, t)
    return [*rulings, Turn(t=t, player=winner, message=f"{winner} leads.")]


def round_points(cards: Iterable[Card]) -> int:
    """Points of the scoring cards one player captured in a round."""
    taken = set(cards)
    hearts = [c for c in taken if c.suit == "H"]
    queen, jack, ten = (QUEEN_OF_SPADES in taken, JACK_OF_DIAMONDS in taken,
                        TEN_OF_CLUBS in taken)
    if len(hearts) == 13 and queen and jack and ten:
        return 800  # grand slam: hearts +200, QS +100, JD +100, doubled by TC
    heart_points = 200 if len(hearts) == 13 else sum(HEART_VALUES[c.rank] for c in hearts)
    others = heart_points + (-100 if queen else 0) + (100 if jack else 0)
    if not ten:
        return others
    if not hearts and not queen and not jack:
        return 50
    return 2 * others


def _score_round(state: PushOutThePigState, t: float) -> list[Ruling]:
    points = {p: round_points(state.captured[p]) + state.penalties[p] for p in state.players}
    for p in state.players:
        state.totals[p] += points[p]
    summary = ", ".join(f"{p} {n:+d}" for p, n in points.items())
    rulings: list[Ruling] = [
        RoundScore(t=t, round=state.round, points=points, total=dict(state.totals),
                   message=f"Round {state.round}: {summary}."),
        Score(t=t, scores=dict(state.totals),
              message="Totals: " + ", ".join(f"{p} {n}" for p, n in state.totals.items()) + "."),
    ]
    end = state.settings.game_end
    if any(abs(total) >= end for total in state.totals.values()):
        state.game_over = True
        best = max(state.totals.values())
        leaders = [p for p, n in state.totals.items() if n == best]
        winner = leaders[0] if len(leaders) == 1 else None
        knockout = winner is not None and best > end
        message = (f"{winner} wins with {best}" + (" by knockout!" if knockout else ".")
                   if winner else f"A tie at {best} between {' and '.join(leaders)}.")
        return [*rulings, GameOver(t=t, winner=winner, player=winner, scores=dict(state.totals),
                                   knockout=knockout, message=message)]
    pig_taker = next((p for p in state.players if QUEEN_OF_SPADES in state.captured[p]),
                     state.leader)
    state.round += 1
    _start_round(state, pig_taker)
    return [*rulings, Turn(t=t, player=pig_taker,
                           message=f"Round {state.round}: {pig_taker} took the pig and leads.")]
