"""What every rules engine is: pure functions of (state, observation) -> (state, rulings).

Engines never touch pixels, clocks or files. State objects are private to their engine;
``apply`` never mutates the state it is given (it works on a copy), so a caller can keep
any earlier state, replay from it, or try an observation and throw the result away.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, ValidationError

from referee.observations import Declare, Observation
from referee.rulings import Impossible, Ruling


class SettingsError(ValueError):
    """An unknown setting or a bad value for one."""


class Settings(BaseModel):
    """A game's settings: every **setting** of rules.md, with its default."""

    # No infinite sizes or distances: a setting is a measure on a real table.
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    @classmethod
    def from_strings(cls, values: Mapping[str, Any]) -> Settings:
        """Build from ``--set k=v`` strings (or JSON values), with one-line errors."""
        unknown = sorted(set(values) - set(cls.model_fields))
        if unknown:
            known = ", ".join(cls.model_fields) or "none"
            raise SettingsError(f"unknown setting {unknown[0]!r} (this game has: {known})")
        for name, value in values.items():
            # JSON true/false (a setup line) would pass as 1/0 for a number.
            if isinstance(value, bool) and not _takes_bool(cls.model_fields[name].annotation):
                raise SettingsError(f"bad value {str(value).lower()} for setting {name!r}: "
                                    "it takes a number or a name, not true/false")
        try:
            return cls.model_validate(dict(values))
        except ValidationError as error:
            first = error.errors()[0]
            name = ".".join(str(p) for p in first["loc"])
            raise SettingsError(
                f"bad value {first.get('input')!r} for setting {name!r}: "
                + first["msg"].removeprefix("Value error, ")
            ) from None


def _takes_bool(annotation: Any) -> bool:
    return annotation is bool or any(_takes_bool(a) for a in get_args(annotation))


SettingsT = TypeVar("SettingsT", bound=Settings)


@dataclass
class State(Generic[SettingsT]):
    """Common part of every engine's state."""

    players: tuple[str, ...]
    settings: SettingsT
    game_over: bool = field(default=False, kw_only=True)


StateT = TypeVar("StateT", bound=State[Any])


@dataclass(frozen=True)
class Step(Generic[StateT]):
    state: StateT
    rulings: tuple[Ruling, ...]


class PlayersError(ValueError):
    """A player list the game cannot be played with."""


class ObservationInputError(ValueError):
    """An observation this game cannot use at all (a missing field it needs, an unknown
    player). Unlike an illegal play, this is bad input: the caller stops with an error."""


class Rules(ABC, Generic[StateT, SettingsT]):
    """One game's rules. Subclasses implement ``_new`` and ``_apply``."""

    game: ClassVar[str]
    title: ClassVar[str]
    settings_type: ClassVar[type[Settings]]
    player_counts: ClassVar[Sequence[int]]
    default_players: ClassVar[tuple[str, ...]]
    #: The declarations (``declare`` observations' ``what``) the game understands.
    declares: ClassVar[tuple[str, ...]] = ()
    #: Whether observations made at the same moment (the same ``t``) are ruled in the order
    #: ``order_simultaneous`` gives rather than as listed.
    orders_simultaneous: ClassVar[bool] = False

    def settings(self, values: Mapping[str, Any]) -> SettingsT:
        return self.settings_type.from_strings(values)  # type: ignore[return-value]

    def new_game(self, players: Sequence[str], settings: SettingsT) -> StateT:
        names = tuple(players)
        if len(names) not in self.player_counts:
            counts = ", ".join(str(n) for n in self.player_counts)
            raise PlayersError(
                f"{self.title} is played by {counts} players, got {len(names)}"
            )
        if len(set(names)) != len(names) or any(not n for n in names):
            raise PlayersError("player names must be distinct and non-empty")
        return self._new(names, settings)

    def apply(self, state: StateT, observation: Observation) -> Step[StateT]:
        """The state after ``observation`` and what the referee announces about it."""
        self.check_player(state, getattr(observation, "player", None))
        working = copy.deepcopy(state)
        rulings = self._apply(working, observation)
        return Step(working, tuple(rulings))

    def waited(self, state: StateT, t: float) -> Step[StateT] | None:
        """Nothing new was seen up to time ``t`` (the table is still): the rulings that
        were only waiting for time to pass, or None when nothing waits (most games)."""
        return None

    def finish(self, state: StateT, t: float) -> Step[StateT]:
        """The input ended at time ``t``: announce anything still pending."""
        working = copy.deepcopy(state)
        return Step(working, tuple(self._finish(working, t)))

    def order_simultaneous(self, state: StateT, observations: Sequence[Observation],
                           ) -> list[int]:
        """The order (indices into ``observations``, all made at the same moment, read
        against ``state``, the state before them) in which to rule them: as listed, unless
        the game says otherwise (``orders_simultaneous``)."""
        return list(range(len(observations)))

    def check_player(self, state: StateT, given: str | None) -> None:
        """An observation's ``player``, when given, must be one of the game's (bad input
        otherwise, whatever the observation)."""
        acting_player(state.players, given, "")

    @abstractmethod
    def _new(self, players: tuple[str, ...], settings: SettingsT) -> StateT: ...

    @abstractmethod
    def _apply(self, state: StateT, observation: Observation) -> list[Ruling]:
        """Mutates ``state`` (a private copy) and returns the rulings."""

    def _finish(self, state: StateT, t: float) -> list[Ruling]:
        return []


def next_player(players: Sequence[str], player: str, step: int = 1) -> str:
    return players[(players.index(player) + step) % len(players)]


def acting_player(players: Sequence[str], given: str | None, expected: str) -> str:
    """Who acted: the observation's ``player`` when given (it must be one of ours)."""
    if given is None:
        return expected
    if given not in players:
        raise ObservationInputError(f"unknown player {given!r} (players: {', '.join(players)})")
    return given


def not_in_this_game(observation: Observation, game: str,
                     players: Sequence[str]) -> Impossible:
    """An observation this game has no use for (a declaration it does not know, a coin in a
    card game): ruled impossible, naming who made it when that is one of the ``players``."""
    what = (f"Declaring {observation.what!r}" if isinstance(observation, Declare)
            else observation.type)
    player = getattr(observation, "player", None)
    return Impossible(t=observation.t, rule="not_in_this_game",
                      player=player if player in players else None,
                      message=f"{what} means nothing in {game}.")
