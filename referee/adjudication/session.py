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

    def feed(self, observation: Observation) -> tuple[Ruling, ...]:
        if observation.t < self.last_t:
            raise ObservationInputError(
                f"time goes backwards (t={observation.t:g} after t={self.last_t:g})"
            )
        step = self.rules.apply(self.state, observation)
        self.state = step.state
        self.last_t = observation.t
        return step.rulings

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
    """Rulings for observation JSON lines, as they come. Raises InputLineError.

    The first line may be a setup line; command-line ``players`` and ``settings`` win
    over it, and a ``game`` given both ways must agree. For a game that orders what happens
    at one moment itself (``Rules.orders_simultaneous``), lines with the same ``t`` are
    ruled together once a later moment's line (or the end) comes.
    """
    session: Session | None = None
    number = 0
    setup_line = 0  # where a setup line gave players or settings (else the command line did)
    held: list[tuple[int, Observation]] = []  # lines of one moment, not yet ruled
    try:
        for line, text in enumerate(lines, start=1):
            number = line
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
            if held and item.t != held[0][1].t:
                for number, observation in _in_order(session, held, clear=True):  # noqa: B007
                    yield from session.feed(observation)  # (a bad one is named by number)
                number = line
            if session.rules.orders_simultaneous:
                held.append((line, item))
            else:
                yield from session.feed(item)
        if session is None:
            session = _start(None, game, players, settings)
        for number, observation in _in_order(session, held, clear=True):  # noqa: B007
            yield from session.feed(observation)
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


def _in_order(session: Session, held: list[tuple[int, Observation]], *, clear: bool,
              ) -> list[tuple[int, Observation]]:
    """The lines of one moment (line number, observation) in the order the game rules them;
    ``clear``: ``held`` is emptied (they are being ruled)."""
    order = session.rules.order_simultaneous(session.state, [item for _, item in held])
    ordered = [held[k] for k in order]
    if clear:
        held.clear()
    return ordered


def _finish_quietly(session: Session, held: list[tuple[int, Observation]],
                    ) -> tuple[Ruling, ...]:
    """The rulings still due when the input stops at a bad line: the lines of the moment
    before it not yet ruled (``held``), then the end of the input."""
    rulings: list[Ruling] = []
    try:
        for _, observation in _in_order(session, held, clear=True):
            rulings += session.feed(observation)
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
