"""Feed a rules engine observation by observation; read observation JSON lines."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.geometry import GeometryError
from referee.observations import Observation, ObservationError, Setup, parse_line
from referee.rules.base import ObservationInputError, PlayersError, Rules, SettingsError
from referee.rules.registry import UnknownGameError, rules_for
from referee.rulings import Ruling


class InputLineError(ValueError):
    """Bad input at a given line of an observation file (line 0: the command line)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.line = line


@dataclass
class Session:
    """One game being refereed: the engine, its current state and the clock."""

    rules: Rules[Any, Any]
    players: tuple[str, ...]
    settings: Any
    state: Any = field(init=False)
    last_t: float = field(init=False, default=0.0)

    def __post_init__(self) -> None:
        self.state = self.rules.new_game(self.players, self.settings)

    @classmethod
    def start(
        cls, game: str, players: Sequence[str] | None, settings: Mapping[str, Any]
    ) -> Session:
        rules = rules_for(game)
        names = tuple(players) if players else rules.default_players
        return cls(rules, names, rules.settings(settings))

    def check(self, observation: Observation, after: float | None = None) -> None:
        """Refuse, before ruling anything, an observation this session cannot take: one
        earlier than the last ruled (or than ``after``), or naming an unknown player."""
        last = max(self.last_t, after if after is not None else self.last_t)
        if observation.t < last:
            raise ObservationInputError(
                f"time goes backwards (t={observation.t:g} after t={last:g})"
            )
        self.rules.check_player(self.state, getattr(observation, "player", None))

    def feed(self, observation: Observation) -> tuple[Ruling, ...]:
        self.check(observation)
        step = self.rules.apply(self.state, observation)
        self.state = step.state
        self.last_t = observation.t
        return step.rulings

    def in_order(self, moment: Sequence[Observation]) -> list[int]:
        """The order (indices) in which to rule observations made at one moment: as listed,
        unless the game orders them itself (``Rules.orders_simultaneous``; the coin shoved
        before the coins it knocked). The live tracker lists them in that order already."""
        return self.rules.order_simultaneous(self.state, moment)

    def waited(self, t: float) -> tuple[Ruling, ...]:
        """Time ran on to ``t`` with nothing new seen: rulings that waited only for that."""
        step = self.rules.waited(self.state, max(t, self.last_t))
        if step is None:
            return ()
        self.state = step.state
        return step.rulings

    def finish(self) -> tuple[Ruling, ...]:
        step = self.rules.finish(self.state, self.last_t)
        self.state = step.state
        return step.rulings


def adjudicate_lines(
    lines: Iterable[str],
    *,
    game: str | None,
    players: Sequence[str] | None,
    settings: Mapping[str, Any],
) -> Iterator[Ruling]:
    """Rulings for observation JSON lines, as they come (for a game that orders one
    moment's observations itself, once the moment is over). Raises InputLineError.

    The first line may be a setup line; command-line ``players`` and ``settings`` win
    over it, and a ``game`` given both ways must agree. For a game that orders what happens
    at one moment itself (``Rules.orders_simultaneous``), lines with the same ``t`` are
    ruled together once a later moment's line (or the end) comes; each is checked (time
    order, player) as it comes, so a bad line is named even while its moment is held.
    """
    session: Session | None = None
    number = 0
    setup_line = 0  # where a setup line gave players or settings (else the command line did)
    held: list[Observation] = []  # lines of one moment, not yet ruled (checked already)
    try:
        for number, text in enumerate(lines, start=1):
            if not text.strip():
                continue
            item = parse_line(text)
            if isinstance(item, Setup):
                if session is not None:
                    raise ObservationError("a setup line may only come first")
                setup_line = number
                session = _start(item, game, players, settings)
                continue
            if session is None:
                session = _start(None, game, players, settings)
            session.check(item, held[0].t if held else None)
            if held and item.t != held[0].t:
                yield from _rule_moment(session, held)
            if session.rules.orders_simultaneous:
                held.append(item)
            else:
                yield from session.feed(item)
        if session is None:
            session = _start(None, game, players, settings)
        yield from _rule_moment(session, held)
        number = 0
        yield from session.finish()
    except (ObservationError, ObservationInputError, GeometryError) as error:
        if session is not None and number:
            # Everything before the bad line is ruled, as if the input had ended there
            # (a turn that ended with its last coin is scored, say): nothing is lost.
            yield from _finish_quietly(session, held)
        raise InputLineError(number, str(error)) from None
    except (SettingsError, PlayersError, UnknownGameError) as error:
        if setup_line:
            raise InputLineError(setup_line, str(error)) from None
        raise InputLineError(0, f"command line: {error}") from None


def _rule_moment(session: Session, held: list[Observation]) -> Iterator[Ruling]:
    """The held lines of one moment ruled, in the game's order; ``held`` is emptied. (Each
    was checked when it came, so a bad one among them was named then.)"""
    moment = list(held)
    held.clear()
    for k in session.in_order(moment):
        yield from session.feed(moment[k])


def _finish_quietly(session: Session, held: list[Observation]) -> tuple[Ruling, ...]:
    """The rulings still due when the input stops at a bad line: the lines of the moment
    before it not yet ruled (``held``), then the end of the input."""
    rulings: list[Ruling] = []
    try:
        rulings += _rule_moment(session, held)
        return (*rulings, *session.finish())
    except (ObservationError, ObservationInputError, GeometryError):
        return tuple(rulings)


def _start(
    setup: Setup | None,
    game: str | None,
    players: Sequence[str] | None,
    settings: Mapping[str, Any],
) -> Session:
    if setup is not None and setup.game and game and setup.game != game:
        raise ObservationError(f"the setup line is for {setup.game!r}, not {game!r}")
    chosen = game or (setup.game if setup else None)
    if chosen is None:
        raise ObservationError("no game given (use --game or a setup line)")
    merged = {**(setup.settings if setup else {}), **settings}
    names = players or (setup.players if setup else None)
    return Session.start(chosen, names, merged)
