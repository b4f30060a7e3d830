"""Shove piecepack (SB Designs), rules.md section 2. Coordinates: the board frame."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from pydantic import Field

from referee.geometry import bed_of_disc, reaches_line
from referee.observations import CoinRemoved, CoinStopped, Declare, Observation
from referee.rules.base import (
    Rules,
    Settings,
    State,
    Step,
    acting_player,
    next_player,
    not_in_this_game,
)
from referee.rulings import (
    BedScored,
    Declared,
    GameOver,
    Illegal,
    Legal,
    NotPlayed,
    Ruling,
    Score,
    Turn,
)

#: A coin of the turn reported stopping again less than this (s) after the last coin stopped
#: was knocked by it and is still part of that turn. (The tracker reports knocked coins with the
#: coin that knocked them, at the same moment; a coin stopping later is the next shove, which
#: may reuse an id of the turn before: ids are stable within a turn only.)
KNOCK_SETTLE_S: Final = 0.5


class ShovePiecepackSettings(Settings):
    tile_mm: float = Field(50.8, gt=0)
    coin_mm: float = Field(19.0, gt=0)
    seam_mm: float = Field(2.0, ge=0)
    tiles_per_side: int = Field(9, ge=3, le=9)
    scores_per_bed: int = Field(1, ge=1, le=9)
    variant: Literal["standard", "progressive"] = "standard"
    coins_per_turn: int = Field(5, ge=1, le=20)

    @property
    def beds(self) -> int:
        return self.tiles_per_side - 2


@dataclass
class Coin:
    center: tuple[float, float]
    radius: float
    played: int | None = None  # order in which it was played this turn (1 = first)
    moved: bool = True  # stopped (again) since the last scoring in this turn
    knocked: bool = False  # put in play by another coin: credited after the coin that hit it


@dataclass
class ShovePiecepackState(State[ShovePiecepackSettings]):
    to_play: str = ""
    coins: dict[str, Coin] = field(default_factory=dict)
    played: int = 0
    coins_this_turn: int = 0
    filled: dict[str, list[int]] = field(default_factory=dict)  # player -> scores per bed
    turn_ends_at: float | None = None  # the last played coin stopped: score once all rest
    last_coin: str | None = None  # the coin whose stop ends the turn
    #: When the last coin shoved this turn stopped: a coin short of line 1 that stops again
    #: at that same moment was knocked by it, not shoved again.
    shoved_at: float | None = None
    #: Coins of the turn removed as it ended (within ``KNOCK_SETTLE_S`` of the last coin
    #: stopping): knocked off the board by the last coin, unless the last coin is among
    #: them (then the coins are being cleared away).
    gone_at_end: set[str] = field(default_factory=set)
    #: Coins of this turn ruled out of turn: never played, whatever knocks them later.
    refused: set[str] = field(default_factory=set)


class ShovePiecepackRules(Rules[ShovePiecepackState, ShovePiecepackSettings]):
    game = "shove-piecepack"
    title = "Shove piecepack"
    settings_type = ShovePiecepackSettings
    player_counts = (2,)
    default_players = ("P1", "P2")
    declares = ("end_turn",)
    orders_simultaneous = True

    def _new(
        self, players: tuple[str, ...], settings: ShovePiecepackSettings
    ) -> ShovePiecepackState:
        return ShovePiecepackState(
            players, settings, to_play=players[0], coins_this_turn=settings.coins_per_turn,
            filled={p: [0] * settings.beds for p in players},
        )

    def _apply(self, state: ShovePiecepackState, observation: Observation) -> list[Ruling]:
        if state.game_over:
            return []
        rulings: list[Ruling] = []
        if state.turn_ends_at is not None and not _settles_same_turn(state, observation):
            ending = state.to_play
            rulings += _score_turn(state, state.turn_ends_at)
            if state.game_over or _confirms_end(state, observation, ending):
                return rulings
        if isinstance(observation, CoinStopped):
            return rulings + _coin_stopped(state, observation)
        if isinstance(observation, CoinRemoved):
            if state.turn_ends_at is not None:  # gone as the turn ended (_settles_same_turn)
                state.gone_at_end.add(observation.id)
            else:
                state.coins.pop(observation.id, None)
            return rulings
        if isinstance(observation, Declare) and observation.what == "end_turn":
            return rulings + _declared_end(state, observation)
        return [*rulings, not_in_this_game(observation, "Shove piecepack", state.players)]

    def order_simultaneous(self, state: ShovePiecepackState,
                           observations: Sequence[Observation]) -> list[int]:
        """Coins that stop at the same moment were moved by one shove: the coin not on the
        table before is the one shoved, the others were knocked by it, whatever order the
        input lists them in (a coin short of line 1 among them was knocked, not shoved
        again). Only the coins trade places; anything else stays where it was listed."""
        order = list(range(len(observations)))
        slots = [k for k in order if isinstance(observations[k], CoinStopped)]
        known = sorted(slots, key=lambda k: _of_this_turn(state, observations[k]))
        for slot, k in zip(slots, known, strict=True):
            order[slot] = k
        return order

    def _finish(self, state: ShovePiecepackState, t: float) -> list[Ruling]:
        if state.turn_ends_at is None or state.game_over:
            return []
        return _score_turn(state, state.turn_ends_at)

    def waited(self, state: ShovePiecepackState, t: float,
               ) -> Step[ShovePiecepackState] | None:
        """A turn whose last coin stopped is scored (as at the end of the input) once
        ``KNOCK_SETTLE_S`` passed with the table still, so the coins it knocked have come
        to rest: a live referee announces the beds straight away, not at the next coin."""
        if state.turn_ends_at is None or t - state.turn_ends_at < KNOCK_SETTLE_S:
            return None
        return self.finish(state, t)


def _of_this_turn(state: ShovePiecepackState, observation: Observation) -> bool:
    """A coin observation about a coin already on the table this turn (shoved, or ruled out
    of turn); a removed coin's id seen again is a new coin's."""
    return isinstance(observation, CoinStopped | CoinRemoved) \
        and observation.id in (*state.coins, *state.refused) \
        and observation.id not in state.gone_at_end


def _settles_same_turn(state: ShovePiecepackState, observation: Observation) -> bool:
    """Coins knocked by the last coin come to rest with it or just after it: a coin of
    this turn seen stopping again, or gone (knocked off the board), within
    ``KNOCK_SETTLE_S``, unless it names the other player (their turn has begun)."""
    if not _of_this_turn(state, observation) or state.turn_ends_at is None \
            or getattr(observation, "player", None) not in (None, state.to_play):
        return False
    return observation.t - state.turn_ends_at < KNOCK_SETTLE_S


def _confirms_end(state: ShovePiecepackState, observation: Observation, ending: str) -> bool:
    """An ``end_turn`` for the turn the last coin ended already (by its player, or naming
    no one) says nothing more."""
    return isinstance(observation, Declare) and observation.what == "end_turn" \
        and acting_player(state.players, observation.player, ending) == ending


def coin_radius(obs: CoinStopped, settings: ShovePiecepackSettings) -> float:
    """A coin's radius (mm): as measured, or for a line typed in by hand without one, half
    the ``coin_mm`` setting."""
    return obs.radius if obs.radius is not None else settings.coin_mm / 2


def _coin_stopped(state: ShovePiecepackState, obs: CoinStopped) -> list[Ruling]:
    settings = state.settings
    coin = state.coins.get(obs.id)
    radius = coin_radius(obs, settings)
    shover = acting_player(state.players, obs.player, state.to_play)
    if shover != state.to_play:  # whatever coin it is: the other player acted
        if coin is None:
            state.refused.add(obs.id)
        return [Illegal(t=obs.t, player=shover, rule="out_of_turn", coin=obs.id,
                        message=f"It is {state.to_play}'s turn, not {shover}'s: that coin is "
                                "not played, take it back.")]
    if obs.id in state.refused and coin is None and (
            obs.t == state.shoved_at or state.turn_ends_at is not None):
        return []  # a coin ruled out of turn, knocked by a coin of this turn: not played
    if coin is not None and coin.played is not None:  # knocked by another coin
        coin.center, coin.radius, coin.moved = obs.center, radius, True
        return []
    if coin is not None and state.turn_ends_at is not None:
        # A coin short of line 1 knocked by the last coin: the turn has all its coins, so
        # this is no shove; where it lies at the end counts, after the played coins.
        coin.center, coin.radius, coin.moved = obs.center, radius, True
        coin.played = state.played + 1
        return []
    if coin is not None and obs.t == state.shoved_at:
        # A coin short of line 1 that stops the moment the coin just shoved stops was
        # knocked by it: no shove, and none of the 5 used up (rules.md section 2). Past
        # line 1 now, it is in play and credited after the coin that hit it.
        coin.center, coin.radius, coin.moved = obs.center, radius, True
        if reaches_line(obs.center[1], radius, settings.tile_mm):
            coin.played, coin.knocked = state.played, True
        return []
    state.refused.discard(obs.id)  # shoved now by the player whose turn it is
    state.coins[obs.id] = coin = Coin(obs.center, radius)
    state.shoved_at = obs.t
    if not reaches_line(obs.center[1], radius, settings.tile_mm):
        return [NotPlayed(t=obs.t, player=state.to_play, coin=obs.id,
                          evidence={"far_edge_mm": round(obs.center[1] + radius, 1),
                                    "line_1_mm": settings.tile_mm},
                          message="That coin stopped short of line 1: not played, shove it "
                                  "again.")]
    state.played += 1
    coin.played = state.played
    if state.played >= state.coins_this_turn:
        state.turn_ends_at = obs.t
        state.last_coin = obs.id
    return [Legal(t=obs.t, player=state.to_play, coin=obs.id,
                  message=f"{state.to_play}'s coin passed line 1: {state.played} of "
                          f"{state.coins_this_turn} played.")]


def _declared_end(state: ShovePiecepackState, obs: Declare) -> list[Ruling]:
    player = acting_player(state.players, obs.player, state.to_play)
    if player != state.to_play:
        return [Illegal(t=obs.t, player=player, rule="out_of_turn",
                        message=f"Only {state.to_play} can end this turn.")]
    return [Declared(t=obs.t, player=player, what="end_turn",
                     message=f"{player} ends the turn early."), *_score_turn(state, obs.t)]


def _recipient(state: ShovePiecepackState, scorer: str, bed: int) -> str | None:
    need = state.settings.scores_per_bed
    if state.filled[scorer][bed - 1] < need:
        return scorer
    opponent = next_player(state.players, scorer)
    if state.filled[opponent][bed - 1] >= need:
        return None
    missing = sum(need - n for n in state.filled[opponent])
    if missing == 1:  # the score that completes a player's last bed must be their own
        return None
    return opponent


def _score_turn(state: ShovePiecepackState, t: float) -> list[Ruling]:
    settings = state.settings
    player = state.to_play
    state.turn_ends_at = None
    if state.last_coin not in state.gone_at_end:  # knocked off, not cleared away
        for cid in state.gone_at_end:
            state.coins.pop(cid, None)
    state.gone_at_end.clear()
    rulings: list[Ruling] = []
    judged = sorted(
        ((coin.played, coin.knocked, cid, coin) for cid, coin in state.coins.items()
         if coin.played is not None and coin.moved),
        key=lambda item: item[:2],
    )
    scoring: list[str] = []
    for _, _, cid, coin in judged:
        verdict = bed_of_disc(coin.center, coin.radius, tile_mm=settings.tile_mm,
                              seam_mm=settings.seam_mm, beds=settings.beds)
        coin.moved = False
        if verdict.bed is None:
            continue
        scoring.append(cid)
        credited = _recipient(state, player, verdict.bed)
        if credited is not None:
            state.filled[credited][verdict.bed - 1] += 1
        rulings.append(BedScored(
            t=t, player=player, bed=verdict.bed, scored_by=player, credited_to=credited,
            coin=cid, evidence={"clearance_mm": round(verdict.clearance_mm, 2)},
            message=_bed_message(state, player, verdict.bed, credited),
        ))
        done = [p for p in state.players
                if all(n >= settings.scores_per_bed for n in state.filled[p])]
        if done:
            state.game_over = True
            return [*rulings, _score(state, t),
                    GameOver(t=t, winner=done[0], player=done[0], scores=_totals(state),
                             message=f"{done[0]} has filled every bed and wins!")]
    rulings.append(_score(state, t))
    if settings.variant == "progressive" and scoring:
        for cid in scoring:  # scoring coins are taken back and shoved again this turn
            del state.coins[cid]
        state.coins_this_turn = state.played + len(scoring)
        n = len(scoring)
        return [*rulings, Turn(t=t, player=player, coins_left=n,
                               message=f"Break: {player} shoves {n} more coin"
                                       f"{'s' if n != 1 else ''}.")]
    state.coins.clear()
    state.refused.clear()
    state.played = 0
    state.shoved_at = None
    state.coins_this_turn = settings.coins_per_turn
    state.to_play = next_player(state.players, player)
    return [*rulings, Turn(t=t, player=state.to_play, coins_left=settings.coins_per_turn,
                           message=f"Clear the coins: {state.to_play} to shove.")]


def _bed_message(state: ShovePiecepackState, player: str, bed: int,
                 credited: str | None) -> str:
    if credited == player:
        return f"{player} scores in bed {bed}."
    if credited is None:
        opponent = next_player(state.players, player)
        if state.filled[opponent][bed - 1] >= state.settings.scores_per_bed:
            return f"Both players have bed {bed} already: {player}'s score there is lost."
        return f"{player} has bed {bed} already, and {opponent} must score their last bed " \
               f"themselves: the score is lost."
    return f"{player} has bed {bed} already: the score goes to {credited}."


def _totals(state: ShovePiecepackState) -> dict[str, int]:
    return {p: sum(state.filled[p]) for p in state.players}


def _score(state: ShovePiecepackState, t: float) -> Score:
    totals = _totals(state)
    summary = ", ".join(f"{p} {n}" for p, n in totals.items())
    per_bed = state.settings.scores_per_bed
    if per_bed == 1:
        return Score(t=t, scores=totals, message=f"Beds filled: {summary}.")
    full = ", ".join(f"{p} {sum(n >= per_bed for n in state.filled[p])}" for p in state.players)
    return Score(t=t, scores=totals,
                 message=f"Scores in beds: {summary}; beds filled ({per_bed} each): {full}.")
