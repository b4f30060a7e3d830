"""Slapstick (David Parlett), rules.md section 5."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field

from referee.cards import Card
from referee.observations import CardPlaced, CardRemoved, Declare, Observation
from referee.rules.base import Rules, Settings, State, acting_player, next_player, not_in_this_game
from referee.rules.slapstick_runs import Run, advance, extendable, merge_runs, runs_made
from referee.rulings import (
    Declared,
    GameOver,
    Illegal,
    Impossible,
    Legal,
    Ruling,
    Score,
    TakeRow,
    Turn,
    Unreadable,
)

STRING_START, STRING_WIN = 10, 13
Mode = Literal["opening", "play", "chicken"]


class SlapstickSettings(Settings):
    jokers: int | None = Field(None, ge=0, le=6)  # default: one per player
    rounds: int | None = Field(None, ge=1, le=20)  # default: as many as players
    three_card_flush: bool = False
    three_card_straight: bool = False
    glide: bool = False
    ten_card_string: bool = False


@dataclass
class Hand:
    """A face-down pile: dealt cards (unseen) on top, taken rows added at the bottom."""

    unseen: int
    known: deque[Card] = field(default_factory=deque)
    pile: list[Card] = field(default_factory=list)  # two players: the penalty pile

    @property
    def count(self) -> int:
        return self.unseen + len(self.known)


@dataclass
class SlapstickState(State[SlapstickSettings]):
    round: int = 1
    to_play: str = ""
    mode: Mode = "opening"
    opener_cards_left: int = 2  # opening: cards the row's starter still plays
    row: list[tuple[str, Card]] = field(default_factory=list)
    hands: dict[str, Hand] = field(default_factory=dict)
    runs: list[Run] = field(default_factory=list)  # flush/straight/glide in force
    string_player: str | None = None  # ten-card string: who may stop or go on
    unrevealed_jokers: int = 0
    scores: dict[str, int] = field(default_factory=dict)

    @property
    def joker_count(self) -> int:
        given = self.settings.jokers
        return len(self.players) if given is None else given


class SlapstickRules(Rules[SlapstickState, SlapstickSettings]):
    game = "slapstick"
    title = "Slapstick"
    settings_type = SlapstickSettings
    player_counts = (2, 3)
    default_players = ("P1", "P2", "P3")
    declares = ("chicken_out", "end_turn", "new_round", "ten_card_string")

    def _new(self, players: tuple[str, ...], settings: SlapstickSettings) -> SlapstickState:
        state = SlapstickState(players, settings, scores={p: 0 for p in players})
        _deal(state)
        return state

    def _apply(self, state: SlapstickState, observation: Observation) -> list[Ruling]:
        if state.game_over or isinstance(observation, CardRemoved):
            return []  # a row being picked up: the take was ruled already
        if isinstance(observation, CardPlaced):
            return _play(state, observation)
        if isinstance(observation, Declare):
            if observation.what == "chicken_out":
                return _chicken_out(state, observation)
            if observation.what in ("end_turn", "ten_card_string"):
                return _stop(state, observation)
            if observation.what == "new_round":
                return []
        return [not_in_this_game(observation, "Slapstick", state.players)]


def _deal(state: SlapstickState) -> None:
    players = state.players
    starter = players[(state.round - 1) % len(players)]
    total = 52 + state.joker_count
    base, extra = divmod(total, len(players))
    state.hands = {}
    for seat in range(len(players)):
        name = next_player(players, starter, seat)
        state.hands[name] = Hand(base + (1 if seat < extra else 0))
    state.unrevealed_jokers = state.joker_count
    _new_row(state, starter)


def _new_row(state: SlapstickState, starter: str) -> None:
    state.row = []
    state.runs = []
    state.string_player = None
    state.mode = "opening"
    state.opener_cards_left = 2
    state.to_play = starter


def _counts(state: SlapstickState) -> dict[str, int]:
    return {p: state.hands[p].count for p in state.players}


def _next_with_cards(state: SlapstickState, player: str) -> str:
    for step in range(1, len(state.players) + 1):
        candidate = next_player(state.players, player, step)
        if state.hands[candidate].count > 0:
            return candidate
    return next_player(state.players, player)


def _play(state: SlapstickState, obs: CardPlaced) -> list[Ruling]:
    card = obs.parsed
    player = acting_player(state.players, obs.player, state.to_play)
    if card is None:
        return [Unreadable(t=obs.t, player=player, card=obs.card,
                           message="The card could not be read; no ruling until it is.")]
    if card.is_joker and state.joker_count == 0:
        return [Impossible(t=obs.t, player=player, rule="not_in_deck", card=str(card),
                           message="This game is played without jokers: a misread, "
                                   "or a joker to take out of the deck.")]
    in_row = [c for _, c in state.row]
    if (card in in_row and not card.is_joker) or (
        card.is_joker and in_row.count(card) >= state.joker_count
    ):
        return [Impossible(t=obs.t, player=player, rule="card_already_on_table", card=str(card),
                           message=f"The {card.name} is already in the row: a misread.")]
    elsewhere = _held_elsewhere(state, player, card)
    if elsewhere is not None:
        return [Impossible(t=obs.t, player=player, rule="card_already_played", card=str(card),
                           message=f"The {card.name} {elsewhere}: a misread.")]
    hand = state.hands[player]
    if state.string_player is not None and player == state.string_player:
        if hand.count == 0:  # the turn stays with the next player
            return [_no_cards_left(obs, player, card)]
        state.to_play = player  # a ten-card string may be played on by its owner
    _chicken_run_over(state, player)
    if player != state.to_play:
        return [Illegal(t=obs.t, player=player, rule="out_of_turn", card=str(card),
                        hand_counts=_counts(state),
                        message=f"It is {state.to_play}'s turn, not {player}'s.")]
    if hand.count == 0:
        return [_no_cards_left(obs, player, card)]
    _draw(state, hand, card)
    state.row.append((player, card))
    rulings: list[Ruling] = [Legal(t=obs.t, player=player, card=str(card),
                                   hand_counts=_counts(state),
                                   message=f"{player} plays the {card.name}.")]
    return rulings + _after_card(state, obs.t, player, card)


def _held_elsewhere(state: SlapstickState, player: str, card: Card) -> str | None:
    """Why ``player`` cannot hold a card the engine has seen taken (None if they may): it
    lies in another player's hand (a row they took) or in a penalty pile (two players);
    for a joker, every joker of the game lies there or in the row."""
    places: list[tuple[str, Sequence[Card]]] = [
        (f"is in {other}'s hand", hand.known) for other, hand in state.hands.items()
        if other != player]
    places += [(f"is in {other}'s penalty pile", hand.pile)
               for other, hand in state.hands.items()]
    if card.is_joker:
        seen = sum(c == card for _, c in state.row) + sum(
            cards.count(card) for _, cards in places)
        return (f"cannot be {player}'s (all {state.joker_count} lie in the row or in taken "
                "rows)") if seen >= state.joker_count else None
    return next((where for where, cards in places if card in cards), None)


def _no_cards_left(obs: CardPlaced, player: str, card: Card) -> Impossible:
    return Impossible(t=obs.t, player=player, rule="no_cards_left", card=str(card),
                      message=f"{player} has no cards left to play.")


def _draw(state: SlapstickState, hand: Hand, card: Card) -> None:
    """Take the top card of a hand: unseen dealt cards first, then the cards of taken rows
    (the card played itself: nobody says in which order a row goes under a hand)."""
    if hand.unseen > 0:
        hand.unseen -= 1
        if card.is_joker:
            state.unrevealed_jokers = max(0, state.unrevealed_jokers - 1)
    elif card in hand.known:
        hand.known.remove(card)
    elif hand.known:
        hand.known.popleft()


def _after_card(state: SlapstickState, t: float, player: str, card: Card) -> list[Ruling]:
    settings = state.settings
    if len(state.row) >= 2:
        reason = _match(state, card)
        if reason in ("match_first", "match_last"):
            return _take(state, t, player, reason)
        if reason is not None:
            # rules.md: the next player takes it, by seat, even one with no cards left
            # (who then holds cards again, so the round goes on).
            return _take(state, t, next_player(state.players, player), reason)
        advanced = [advance(r, card) for r in state.runs]
        # Each run in force obliges the card (the seed words each extra so): failing any
        # one of them picks up the row, even if the card carries another on.
        failed = [r for r, a in zip(state.runs, advanced, strict=True) if a is None]
        if failed:
            return _take(state, t, player, f"failed_{failed[0].kind}")
        continued = [run for run in advanced if run is not None]
        state.runs = merge_runs([run for run in continued if extendable(run)],
                                runs_made([c for _, c in state.row], settings))
    rulings: list[Ruling] = []
    if settings.ten_card_string and len(state.row) >= STRING_START:
        if len(state.row) >= STRING_WIN:
            return _string_wins(state, t, player)
        state.string_player = player
        rulings.append(Declared(
            t=t, player=player, what="ten_card_string",
            message=f"{len(state.row)} cards without a match: {player} may stop and pass the "
                    "row on, or play on."))
    has_cards = state.hands[player].count > 0
    if state.mode == "opening":
        state.opener_cards_left -= 1
        if state.opener_cards_left > 0 and has_cards:
            return [*rulings, _turn(state, t, f"{player} plays the second card of the row.")]
        state.mode = "play"
    if state.mode == "chicken" and has_cards:
        return [*rulings, _turn(state, t, f"{player} may play another card or stop.")]
    if all(state.hands[p].count == 0 for p in state.players):
        # Everyone is out of cards and the row stands untaken (say the last player started
        # a row with a single card): nobody can take it, so the round ends and the row
        # counts against no one.
        return rulings + _end_round(state, t, untaken=len(state.row))
    state.mode = "play"
    state.to_play = _next_with_cards(state, player)
    return [*rulings, _turn_passed(state, t, player)]


def _turn(state: SlapstickState, t: float, message: str) -> Turn:
    """Whose turn it is now (``state.to_play``), as every game announces after a play."""
    return Turn(t=t, player=state.to_play, hand_counts=_counts(state), message=message)


def _turn_passed(state: SlapstickState, t: float, player: str) -> Turn:
    """The turn passes from ``player`` to ``state.to_play``, past any seat with no cards."""
    skipped, seat = [], next_player(state.players, player)
    while seat not in (state.to_play, player):
        skipped.append(seat)
        seat = next_player(state.players, seat)
    message = f"{state.to_play} to play"
    if skipped:
        message += f" ({' and '.join(skipped)} {'has' if len(skipped) == 1 else 'have'} " \
                   "no cards left)"
    if state.string_player == player:
        message += f", unless {player} plays on"
    return _turn(state, t, message + ".")


def _match(state: SlapstickState, card: Card) -> str | None:
    """How the card just played matches the row, by priority (None: no match)."""
    if card.is_joker:
        return "joker"
    earlier = [c for _, c in state.row[:-1]]
    if not earlier[0].is_joker and earlier[0].rank == card.rank:
        return "match_first"
    if not earlier[-1].is_joker and earlier[-1].rank == card.rank:
        return "match_last"
    if any(not c.is_joker and c.rank == card.rank for c in earlier[1:-1]):
        return "match_other"
    return None


def _take(state: SlapstickState, t: float, taker: str, reason: str) -> list[Ruling]:
    cards = [c for _, c in state.row]
    hand = state.hands[taker]
    to_pile = len(state.players) == 2 and reason in ("match_first", "match_last")
    if to_pile:
        hand.pile.extend(cards)
    else:
        hand.known.extend(cards)
    where = "onto a penalty pile" if to_pile else "into hand"
    rulings: list[Ruling] = [TakeRow(
        t=t, player=taker, taker=taker, cards=len(cards), reason=reason,
        row=[str(c) for c in cards], to_penalty_pile=to_pile, hand_counts=_counts(state),
        message=f"{taker} takes the row of {len(cards)} {where} ({reason.replace('_', ' ')}).",
    )]
    # rules.md: the round ends when a player has no cards once the row is taken (a player
    # whose last card made them take it holds cards again, and play goes on).
    if any(state.hands[p].count == 0 for p in state.players):
        return rulings + _end_round(state, t)
    _new_row(state, taker)
    return [*rulings, Turn(t=t, player=taker, hand_counts=_counts(state),
                           message=f"{taker} starts a new row with two cards.")]


def _chicken_run_over(state: SlapstickState, player: str) -> None:
    """A chicken's run ends when the next player acts (plays a card or chickens out)."""
    if state.mode == "chicken" and player != state.to_play and len(state.row) >= 1 \
            and player == _next_with_cards(state, state.to_play):
        state.mode = "play"
        state.to_play = player


def _chicken_out(state: SlapstickState, obs: Declare) -> list[Ruling]:
    player = acting_player(state.players, obs.player, state.to_play)
    _chicken_run_over(state, player)
    if player != state.to_play:
        return [Illegal(t=obs.t, player=player, rule="out_of_turn", hand_counts=_counts(state),
                        message=f"Only {state.to_play} may chicken out now.")]
    if state.mode == "opening" and state.row:
        return [Illegal(t=obs.t, player=player, rule="opening_row", hand_counts=_counts(state),
                        message=f"{player} is opening the row: play its second card first.")]
    round_before = state.round
    rulings = _take(state, obs.t, player, "chicken_out") if state.row else []
    if state.game_over or state.round != round_before:
        return rulings
    state.mode = "chicken"
    state.to_play = player
    return [*rulings[:-1], Turn(t=obs.t, player=player, hand_counts=_counts(state),
                                message=f"{player} chickens out and plays as many cards as "
                                        "they like.")]


def _stop(state: SlapstickState, obs: Declare) -> list[Ruling]:
    player = acting_player(state.players, obs.player, state.to_play)
    if obs.what == "ten_card_string" or state.string_player == player:
        if state.string_player != player:
            return [Illegal(t=obs.t, player=player, rule="no_ten_card_string",
                            message="Only a ten-card string can be passed on.")]
        return _take(state, obs.t, next_player(state.players, player), "ten_card_string")
    if state.mode == "chicken" and player == state.to_play and state.row:
        state.mode = "play"
        state.to_play = _next_with_cards(state, player)
        return [Turn(t=obs.t, player=state.to_play, hand_counts=_counts(state),
                     message=f"{player} stops; {state.to_play} to play.")]
    return [Illegal(t=obs.t, player=player, rule="cannot_end_turn",
                    message="Play on: a turn in Slapstick is one card.")]


def _string_wins(state: SlapstickState, t: float, player: str) -> list[Ruling]:
    taker = next_player(state.players, player)
    other_side = next_player(state.players, player, -1)
    rest = state.hands[player]
    receiver = state.hands[other_side]
    receiver.unseen += rest.unseen
    receiver.known.extend(rest.known)
    state.hands[player] = Hand(0, pile=rest.pile)
    return _take(state, t, taker, "ten_card_string")  # the player is out: the round ends


def _penalty(state: SlapstickState, player: str) -> int:
    hand = state.hands[player]
    cards = [*hand.known, *hand.pile]
    points = hand.unseen + sum(5 if c.is_joker else 1 for c in cards)
    holders = [p for p in state.players if state.hands[p].unseen > 0]
    if holders == [player]:  # the jokers nobody has seen can only be in this hand
        points += 4 * min(state.unrevealed_jokers, hand.unseen)
    return points


def _end_round(state: SlapstickState, t: float, untaken: int = 0) -> list[Ruling]:
    if state.game_over:
        return []
    penalties = {p: _penalty(state, p) for p in state.players}
    for p in state.players:
        state.scores[p] -= penalties[p]
    summary = ", ".join(f"{p} {n}" for p, n in penalties.items())
    over = f"round {state.round} is over with penalties {summary}."
    message = (f"Nobody has a card left to take the row of {untaken}, so it counts for no "
               f"one, and {over}" if untaken else over[0].upper() + over[1:])
    rulings: list[Ruling] = [Score(
        t=t, scores=dict(state.scores), evidence={"penalties": penalties}, message=message)]
    rounds = state.settings.rounds or len(state.players)
    if state.round >= rounds:
        state.game_over = True
        best = max(state.scores.values())
        leaders = [p for p, n in state.scores.items() if n == best]
        winner = leaders[0] if len(leaders) == 1 else None
        return [*rulings, GameOver(
            t=t, winner=winner, player=winner, scores=dict(state.scores),
            message=f"{winner} wins with {best}." if winner else
            f"A tie at {best} between {' and '.join(leaders)}.")]
    state.round += 1
    _deal(state)
    return [*rulings, Turn(t=t, player=state.to_play, hand_counts=_counts(state),
                           message=f"Round {state.round}: {state.to_play} starts.")]
