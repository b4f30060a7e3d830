"""Shove (Blake Philley): red against blue on a grid, refereed from board states (rules.md §4).

A game turn is a die roll followed by two phases, one per colour, each of up to that many
actions. The camera reports boards, not actions, so each phase keeps the set of labelled
positions that explain every board seen so far in it (``shove_search``); the phase is
ruled when it ends, or at once when a board cannot be explained.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from referee.observations import BoardState, Declare, Observation
from referee.rules.base import ObservationInputError, Rules, Settings, State, not_in_this_game
from referee.rules.shove_search import (
    DEFAULT_LAYOUT,
    Board,
    Colour,
    Edge,
    Layout,
    Move,
    Node,
    Phase,
    Ply,
    Position,
    Reached,
    Removal,
    cheapest,
    cheapest_of,
    explain,
    other,
    outcome,
    square_text,
    successors,
    victory_path_open,
)
from referee.rulings import (
    Action,
    Declared,
    GameOver,
    Illegal,
    Impossible,
    Legal,
    Removed,
    RemovedPiece,
    Ruling,
    Score,
    Turn,
)

Square = tuple[int, int]
#: How much longer than the roll a sequence may be when looking for the nearest explanation.
EXTRA_ACTIONS = 6
DIE_FACES = range(1, 5)


_EDGES: dict[Edge, Literal["wall", "open"]] = {
    "left": "wall", "right": "wall", "top": "open", "bottom": "open"
}


class _LayoutFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    rows: int = Field(ge=1)
    cols: int = Field(ge=1)
    victory: Square
    red: tuple[Square, ...] = Field(min_length=1)
    blue: tuple[Square, ...] = Field(min_length=1)
    edges: dict[Edge, Literal["wall", "open"]] = Field(default_factory=lambda: dict(_EDGES))
    walls: tuple[tuple[Square, Square], ...] = ()


#: A board layout is a few hundred bytes; anything much larger is not one.
MAX_LAYOUT_BYTES: Final = 100_000


def load_layout(board: str) -> Layout:
    """The built-in layout for "default", else the JSON layout file at path ``board``."""
    if board == "default":
        return DEFAULT_LAYOUT
    path = Path(board)
    try:
        if path.exists() and (not path.is_file() or path.stat().st_size > MAX_LAYOUT_BYTES):
            raise ValueError(f"the layout file must be a JSON file of at most "
                             f"{MAX_LAYOUT_BYTES // 1000} kB")
        raw = _LayoutFile.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except OSError as error:
        raise ValueError(f"cannot read layout file ({error.strerror})") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"layout file is not valid JSON ({error.msg})") from None
    except (UnicodeDecodeError, RecursionError):
        raise ValueError("layout file is not valid JSON") from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ValueError(f"layout file field {where!r}: {first['msg']}") from None
    return _checked_layout(raw)


def _checked_layout(raw: _LayoutFile) -> Layout:
    layout = Layout(
        rows=raw.rows,
        cols=raw.cols,
        victory=raw.victory,
        red=raw.red,
        blue=raw.blue,
        open_edges=frozenset(edge for edge, kind in raw.edges.items() if kind == "open"),
        walls=frozenset(frozenset(pair) for pair in raw.walls),
    )
    squares = [raw.victory, *raw.red, *raw.blue, *(s for pair in raw.walls for s in pair)]
    outside = [s for s in squares if not layout.inside(s)]
    if outside:
        raise ValueError(f"layout square {square_text(outside[0])} is off the board")
    if len({*raw.red, *raw.blue}) != len(raw.red) + len(raw.blue):
        raise ValueError("layout puts two pieces on one square")
    for a, b in raw.walls:
        if abs(a[0] - b[0]) + abs(a[1] - b[1]) != 1:
            where = f"{square_text(a)}-{square_text(b)}"
            raise ValueError(f"layout wall {where} is not between neighbouring squares")
    return layout


class ShoveSettings(Settings):
    board: str = "default"
    first: Literal["blue", "red"] = "blue"
    touch: Literal["orthogonal", "king"] = "orthogonal"
    turns: int = Field(default=10, ge=1)
    red_every: int = Field(default=4, ge=1)
    blue_every: int = Field(default=3, ge=1)

    _layout: Layout = PrivateAttr(default=DEFAULT_LAYOUT)

    @field_validator("board")
    @classmethod
    def _readable(cls, board: str) -> str:
        load_layout(board)
        return board

    def model_post_init(self, context: object) -> None:
        self._layout = load_layout(self.board)

    @property
    def layout(self) -> Layout:
        return self._layout

    def every(self, colour: Colour) -> int:
        return self.red_every if colour == "red" else self.blue_every


@dataclass
class OpenPhase:
    """One colour's phase of the current game turn, as far as the camera has seen it."""

    number: int  # 1 or 2 within the game turn
    rules: Phase
    start: Position
    path_was_open: bool
    #: Every labelled node explaining the boards seen so far, each by a cheapest path.
    frontier: tuple[Reached, ...]
    #: An end of the phase refused on this board, and why (not ruled again at the end).
    refused: tuple[str, Board] | None = None
    #: The last board seen was ruled illegal (and no legal one has been seen since).
    disputed: bool = False

    @property
    def colour(self) -> Colour:
        return self.rules.colour

    @property
    def board(self) -> Board:
        return self.frontier[0].node.position.board()


@dataclass
class ShoveState(State[ShoveSettings]):
    colours: dict[Colour, str] = field(kw_only=True)
    position: Position = field(kw_only=True)  # at the start of the open phase, or now
    last_moved: dict[Colour, tuple[int, ...]] = field(kw_only=True)  # game turn, 0 = setup
    turn: int = field(default=0, kw_only=True)
    roll: int = field(default=0, kw_only=True)
    phase: OpenPhase | None = field(default=None, kw_only=True)
    #: The colour whose phase the last observation ended by using every action: an
    #: ``end_turn`` for it right after is redundant, not a play.
    used_up: Colour | None = field(default=None, kw_only=True)

    @property
    def layout(self) -> Layout:
        return self.settings.layout


def colours_of(players: tuple[str, ...], first: Colour) -> dict[Colour, str]:
    """Players named red and blue play those colours; otherwise the first listed plays ``first``."""
    lowered = [name.lower() for name in players]
    if sorted(lowered) == ["blue", "red"]:
        return {"red": players[lowered.index("red")], "blue": players[lowered.index("blue")]}
    return {first: players[0], other(first): players[1]}


class ShoveGridRules(Rules[ShoveState, ShoveSettings]):
    game = "shove"
    title = "Shove"
    settings_type = ShoveSettings
    player_counts = (2,)
    default_players = ("blue", "red")
    declares = ("die_roll", "end_turn")

    def _new(self, players: tuple[str, ...], settings: ShoveSettings) -> ShoveState:
        layout = settings.layout
        return ShoveState(
            players,
            settings,
            colours=colours_of(players, settings.first),
            position=layout.start(),
            last_moved={"red": (0,) * len(layout.red), "blue": (0,) * len(layout.blue)},
        )

    def check_player(self, state: ShoveState, given: str | None) -> None:
        # A side may also be named by its colour, in any case ("Red", "blue").
        if given is None or _named(state, given) is not None:
            return
        colours = "" if {p.lower() for p in state.players} == {"red", "blue"} else \
            ", or red / blue"
        raise ObservationInputError(
            f"unknown player {given!r} (players: {', '.join(state.players)}{colours})")

    def _apply(self, state: ShoveState, observation: Observation) -> list[Ruling]:
        if state.game_over:
            return []
        used_up, state.used_up = state.used_up, None
        if isinstance(observation, BoardState):
            return self._on_board(state, observation)
        if isinstance(observation, Declare):
            if observation.what == "die_roll":
                return self._on_roll(state, observation)
            if observation.what == "end_turn":
                return self._on_end_turn(state, observation, used_up)
        return [not_in_this_game(observation, "Shove", state.players)]

    def _finish(self, state: ShoveState, t: float) -> list[Ruling]:
        phase = state.phase
        if state.game_over or phase is None or cheapest_of(phase.frontier).cost == 0 \
                or phase.disputed:  # the table still shows the board ruled illegal
            return []
        problem = _end_problem(state, phase, t)
        if problem and phase.refused == (problem.rule, phase.board):
            return []  # ruled when the player ended the phase; the board is still so
        return [problem] if problem else _end_phase(state, t)

    # -- observations -------------------------------------------------------------

    def _on_board(self, state: ShoveState, seen: BoardState) -> list[Ruling]:
        misread = _misread(state.layout, seen)
        if misread:
            return [Impossible(t=seen.t, message=misread, rule="bad_board")]
        target = Board.of(seen.red, seen.blue)
        phase = state.phase
        who = _named(state, seen.player)
        if phase is not None and who is not None and who != state.colours[phase.colour] \
                and target != phase.board:
            state.phase = replace(phase, disputed=True)
            return [_illegal(seen.t, "out_of_turn", f"It is {_who(state, phase.colour)}'s "
                             f"phase, not {seen.player}'s.", who)]
        if phase is None:
            if target == state.position.board():
                return []
            before = state.position.board()
            moved = [c for c in ("red", "blue") if getattr(before, c) != getattr(target, c)]
            # Who moved, when only one colour did (a push moves both: then nobody is named).
            if who is None and len(moved) == 1:
                who = state.colours[moved[0]]  # type: ignore[index]
            return [_illegal(seen.t, "no_die_roll", "The board changed before the die was rolled.",
                             who)]
        found = explain(phase.rules, phase.frontier, target, state.roll)
        if found:
            return _accept(state, found, seen.t)
        # A phase ends only by end_turn or by using every action (rules.md section 4):
        # a board showing the other colour's moves while this phase is open is illegal.
        state.phase = replace(phase, disputed=True)
        return [_diagnose(state, target, seen.t, named=who is not None)]

    def _on_roll(self, state: ShoveState, declared: Declare) -> list[Ruling]:
        t, value = declared.t, _die_value(declared.value)
        if value is None:
            shown = "A die roll needs the number rolled (1 to 4)." if declared.value is None \
                else f"A four-sided die cannot show {declared.value!r}."
            return [_illegal(t, "bad_die_roll", shown, declared.player)]
        rulings: list[Ruling] = []
        while state.phase is not None:
            problem = _end_problem(state, state.phase, t)
            if problem:
                state.phase.refused = (problem.rule, state.phase.board)  # ruled once
                return [*rulings, problem]
            rulings += _end_phase(state, t, announce=False)
        if state.game_over:
            return rulings
        state.turn += 1
        state.roll = value
        message, who = f"Die roll: {value}.", _named(state, declared.player)
        rulings.append(
            Declared(t=t, message=message, what="die_roll", value=value)
            if who is None
            else Declared(t=t, message=message, player=who, what="die_roll", value=value)
        )
        return [*rulings, _open_phase(state, 1, t)]

    def _on_end_turn(self, state: ShoveState, declared: Declare,
                     used_up: Colour | None) -> list[Ruling]:
        who = _named(state, declared.player)
        if used_up is not None and who in (None, state.colours[used_up]):
            return []  # that phase ended with its last action: nothing is left to end
        phase = state.phase
        if phase is None:
            return [_illegal(declared.t, "no_die_roll", "There is no phase to end: roll the die.",
                             who)]
        if who is not None and who != state.colours[phase.colour]:
            message = f"It is {_who(state, phase.colour)}'s phase, not {declared.player}'s."
            return [_illegal(declared.t, "out_of_turn", message, declared.player)]
        problem = _end_problem(state, phase, declared.t)
        if problem:
            phase.refused = (problem.rule, phase.board)
            return [problem]
        return _end_phase(state, declared.t)


# -- phases -----------------------------------------------------------------------


def _new_phase(state: ShoveState, number: int, start: Position) -> OpenPhase:
    first: Colour = state.settings.first
    colour = first if number == 1 else other(first)
    every = state.settings.every(colour)
    overdue = frozenset(
        label
        for label, last in enumerate(state.last_moved[colour])
        if start.pieces(colour)[label] is not None and last < state.turn - every
    )
    rules = Phase(state.layout, colour, overdue, king_touch=state.settings.touch == "king")
    path_open = victory_path_open(state.layout, start.board())
    return OpenPhase(number, rules, start, path_open, (Reached(Node(start)),))


def _open_phase(state: ShoveState, number: int, t: float) -> Turn:
    phase = state.phase = _new_phase(state, number, state.position)
    colour = phase.colour
    message = f"Turn {state.turn}: {_who(state, colour)} has {_count(state.roll, 'action')}."
    waiting = sorted(phase.rules.overdue)
    if waiting:
        squares = [square_text(_square(state.position, colour, label)) for label in waiting]
        message = message[:-1] + f"; {_listed(squares)} must move first."
    return Turn(t=t, message=message, player=state.colours[colour], colour=colour,
                turn=state.turn, actions_allowed=state.roll)


def _accept(state: ShoveState, found: tuple[Reached, ...], t: float) -> list[Ruling]:
    """Take an explainable board into the open phase, ending it if nothing more can happen."""
    assert state.phase is not None
    candidate = replace(state.phase, frontier=found, disputed=False)
    best = cheapest_of(found)
    board = best.node.position.board()
    if outcome(state.layout, board) is None and best.cost < state.roll:
        state.phase = candidate
        return []
    problem = _end_problem(state, candidate, t)
    if problem:
        # Every action is used and the table shows a board that cannot end the phase: it
        # stays open on the last legal board until the table is put right (board_not_restored).
        state.phase = replace(state.phase, disputed=True)
        return [problem]
    state.phase = candidate
    state.used_up = candidate.colour
    return _end_phase(state, t)


def _end_problem(state: ShoveState, phase: OpenPhase, t: float) -> Illegal | None:
    """Why the phase cannot end on its current board, if it cannot."""
    if phase.disputed:
        # The phase's result is the board on the table (rules.md section 4), and that board
        # was ruled illegal: ending now would announce the last legal board instead.
        return _illegal(t, "board_not_restored",
                        f"{_who(state, phase.colour)} cannot end the phase while the table "
                        "shows the board ruled illegal: put the pieces back or correct the "
                        "board first.", state.colours[phase.colour])
    board = phase.board
    if outcome(state.layout, board) is not None:
        return None
    waiting = _overdue_left(state, phase)
    if waiting:
        unused = state.roll - cheapest_of(phase.frontier).cost
        who = _who(state, phase.colour)
        piece = "piece" if len(waiting) == 1 else "pieces"
        return _illegal(t, "overdue_not_moved",
                        f"{who} must move the overdue {piece} at {_listed(waiting)} "
                        f"({_count(unused, 'action')} left).", state.colours[phase.colour])
    if phase.colour != "red":
        return None
    who = _who(state, "red")
    if state.layout.victory in board.red:
        return _illegal(t, "red_on_victory_square",
                        f"{who} cannot end the phase on the victory square.", state.colours["red"])
    # Red answers only for a path it closed, not for one blue closed itself.
    if phase.path_was_open and not victory_path_open(state.layout, board):
        return _illegal(t, "victory_path_blocked",
                        f"{who} must leave blue a path to the victory square.",
                        state.colours["red"])
    return None


def _overdue_left(state: ShoveState, phase: OpenPhase) -> list[str]:
    """The overdue pieces the phase leaves unmoved though actions were left to move them
    (rules.md: each piece must move at least once every 4 (red) or 3 (blue) turns); empty
    when any explanation of the board moved them or used every action."""
    left: list[str] = []
    for reached in phase.frontier:
        left = _unmoved_overdue(state, phase, reached)
        if not left:
            return []
    return left


def _unmoved_overdue(state: ShoveState, phase: OpenPhase, reached: Reached) -> list[str]:
    """The overdue pieces one explanation of the board leaves unmoved with actions left
    that could move them."""
    waiting = phase.rules.overdue - reached.node.moved
    if reached.cost >= state.roll or not waiting:
        return []
    movable = sorted({ply.action.label for ply, _ in successors(phase.rules, reached.node)
                      if isinstance(ply.action, Move) and ply.action.label in waiting})
    position = reached.node.position
    return [square_text(_square(position, phase.colour, label)) for label in movable]


def _announced(state: ShoveState, phase: OpenPhase) -> Reached:
    """The explanation a phase that ends is ruled and recorded by: of those that leave no
    overdue piece unmoved with actions to spare, the one moving the most overdue pieces,
    then the cheapest. (The cheapest alone could be "no actions" for an overdue piece
    moved out and back, which would leave it overdue.)"""
    fair = [r for r in phase.frontier if not _unmoved_overdue(state, phase, r)]
    if not fair:
        return cheapest_of(phase.frontier)
    return min(fair, key=lambda reached: (-len(reached.node.moved), reached.cost))


def _end_phase(state: ShoveState, t: float, announce: bool = True) -> list[Ruling]:
    """Rule the open phase legal, record it, and open the next phase or await the die."""
    phase = state.phase
    assert phase is not None
    best = _announced(state, phase)
    state.position = best.node.position
    _record_moves(state, phase.colour, best.plies)
    rulings: list[Ruling] = [_legal(state, phase, best, t)]
    rulings += [_removed(state, removal, t) for ply in best.plies for removal in ply.removals()]
    state.phase = None
    ended = outcome(state.layout, state.position.board())
    if ended is not None:
        return [*rulings, *_game_over(state, ended.winner, ended.reason, t)]
    if phase.number == 1:
        turn = _open_phase(state, 2, t)
        return [*rulings, turn] if announce else rulings
    if state.turn >= state.settings.turns:
        reason = f"blue did not reach the victory square within {state.settings.turns} turns"
        return [*rulings, *_game_over(state, "red", reason, t)]
    if announce:
        first = state.settings.first  # whose phase opens the next turn, once rolled
        rulings.append(Turn(t=t, message=f"Turn {state.turn} is over: roll the die for turn "
                            f"{state.turn + 1}.", turn=state.turn + 1,
                            player=state.colours[first], colour=first))
    return rulings


def _record_moves(state: ShoveState, colour: Colour, plies: tuple[Ply, ...]) -> None:
    last = list(state.last_moved[colour])
    for ply in plies:
        if isinstance(ply.action, Move):
            last[ply.action.label] = state.turn
    state.last_moved[colour] = tuple(last)


# -- diagnosis ----------------------------------------------------------------------


def _diagnose(state: ShoveState, target: Board, t: float, named: bool = False) -> Illegal:
    """The nearest explanation of a board the open phase cannot reach within the roll.
    ``named``: the board_state names who acted (then the open phase's own player)."""
    phase = state.phase
    assert phase is not None
    player, roll = state.colours[phase.colour], state.roll
    if phase.rules.overdue:
        free = replace(phase.rules, overdue=frozenset())
        if explain(free, phase.frontier, target, roll):
            # The same stable id as a phase ended with the overdue piece unmoved.
            return _illegal(t, "overdue_not_moved", _overdue_message(state, phase), player)
    needed = cheapest(phase.rules, phase.frontier, target, roll + EXTRA_ACTIONS)
    if needed is not None:
        who = _who(state, phase.colour)
        return Illegal(t=t, message=f"{who} needs {_count(needed, 'action')} to reach this board "
                       f"but rolled {roll}.", player=player, rule="too_many_actions",
                       needed_actions=needed, allowed_actions=roll)
    mover = _out_of_turn(phase.colour, phase.board, target)
    if mover is not None:
        # Only the mover's pieces changed, so the mover played out of turn and is named,
        # unless the board_state itself said who acted: then that player answers for it.
        offender = player if named else state.colours[mover]
        return _illegal(t, "out_of_turn", f"{mover.capitalize()} moved during "
                        f"{phase.colour}'s phase: it is not {mover}'s turn.", offender)
    return _illegal(t, "illegal_position", _what_is_wrong(phase.colour, phase.board, target),
                    player)


def _out_of_turn(colour: Colour, before: Board, after: Board) -> Colour | None:
    """The other side, when only its pieces moved (none came or went): a play out of
    turn. (A blue piece a red push moved is no such play: that board has an explanation.)"""
    other: Colour = "red" if colour == "blue" else "blue"
    was, now = getattr(before, other), getattr(after, other)
    if getattr(before, colour) == getattr(after, colour) and was != now \
            and len(was) == len(now):
        return other
    return None


def _overdue_message(state: ShoveState, phase: OpenPhase) -> str:
    best = cheapest_of(phase.frontier)
    position = best.node.position
    waiting = sorted(phase.rules.overdue - best.node.moved)
    squares = [
        square_text(s)
        for s in (position.pieces(phase.colour)[label] for label in waiting)
        if s is not None
    ]
    if len(squares) == 1:
        return f"The piece at {squares[0]} is overdue and had to move first."
    return f"The pieces at {_listed(squares)} are overdue and had to move first."


def _what_is_wrong(colour: Colour, before: Board, after: Board) -> str:
    for seen, was, name in ((after.red, before.red, "red"), (after.blue, before.blue, "blue")):
        if len(seen) > len(was):
            return f"A {name} piece appeared on the board."
    if colour == "blue" and not after.red <= before.red:
        return "A red piece moved during blue's phase."
    if len(after.blue) < len(before.blue):
        if colour == "blue":
            return "A blue piece disappeared during blue's phase."
        return "A blue piece disappeared without being pushed off."
    if len(after.red) < len(before.red):
        return "A red piece disappeared without touching two blue pieces."
    if colour == "red" and after.blue != before.blue:
        return "A blue piece moved without being pushed during red's phase."
    return "No legal sequence of actions leads from the last legal board to this one."


def _misread(layout: Layout, seen: BoardState) -> str | None:
    squares = [*seen.red, *seen.blue]
    off = [s for s in squares if not layout.inside(s)]
    if off:
        return f"The board reading puts a piece at {square_text(off[0])}, off the board."
    if len(set(squares)) != len(squares):
        return "The board reading puts two pieces on one square."
    return None


def _die_value(value: object) -> int | None:
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        value = int(value)
    if isinstance(value, float) and value.is_integer():  # 3.0 from a JSON writer
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value in DIE_FACES:
        return value
    return None


# -- rulings ------------------------------------------------------------------------


def _legal(state: ShoveState, phase: OpenPhase, best: Reached, t: float) -> Legal:
    who = _who(state, phase.colour)
    used = f"legal, {best.cost} of {_count(state.roll, 'action')}"
    if best.plies:
        message = f"{who} {_listed(_describe(best.plies))}: {used}."
    else:
        message = f"{who} made no actions: {used}."
    removals = [removal for ply in best.plies for removal in ply.removals()]
    player, actions = state.colours[phase.colour], [_action(ply) for ply in best.plies]
    # ``removed`` is always there (empty when nothing was): the contract names it.
    return Legal(t=t, message=message, player=player, actions=actions,
                 removed=[_removed_piece(r) for r in removals])


def _describe(plies: tuple[Ply, ...]) -> list[str]:
    """Phrases for the actions, a piece's consecutive steps joined into one path."""
    phrases: list[str] = []
    previous = ""
    for verb, what in _phrases(plies):
        phrases.append(what if verb == previous else f"{verb} {what}")
        previous = verb
    return phrases


def _phrases(plies: tuple[Ply, ...]) -> list[tuple[str, str]]:
    phrases: list[tuple[str, str]] = []
    path: list[Square] = []
    for index, ply in enumerate(plies):
        action = ply.action
        if isinstance(action, Move):
            path = path or [action.start]
            path.append(action.end)
            following = plies[index + 1].action if index + 1 < len(plies) else None
            if not (isinstance(following, Move) and following.label == action.label
                    and following.start == action.end):
                phrases.append(("moved", "->".join(square_text(s) for s in path)))
                path = []
            continue
        pushed = action.shifts[0]
        to = "off the board" if pushed.end is None else f"to {square_text(pushed.end)}"
        phrase = f"{square_text(pushed.start)} {to} from {square_text(action.by)}"
        if len(action.shifts) > 1:
            phrase += " (driving the blue piece behind it on)"
        phrases.append(("pushed", phrase))
    return phrases


def _action(ply: Ply) -> Action:
    action = ply.action
    if isinstance(action, Move):
        return Action(do="move", piece=action.colour, from_=action.start, to=action.end)
    pushed = action.shifts[0]
    return Action(do="push", piece="blue", from_=pushed.start, to=pushed.end, by=action.by)


def _removed_piece(removal: Removal) -> RemovedPiece:
    why = "touching two blue pieces" if removal.colour == "red" else "pushed off the board"
    return RemovedPiece(colour=removal.colour, square=removal.square, why=why)


def _removed(state: ShoveState, removal: Removal, t: float) -> Removed:
    why = "it touches two blue pieces" if removal.colour == "red" else "it was pushed off the board"
    return Removed(t=t, message=f"The {removal.colour} piece at {square_text(removal.square)} "
                   f"is removed: {why}.", player=state.colours[removal.colour],
                   colour=removal.colour, square=removal.square)


def _game_over(state: ShoveState, winner: Colour, reason: str,
               t: float) -> tuple[Score, GameOver]:
    """The score every game announces (1 for the winner of this one game), then the end."""
    state.game_over = True
    who = _who(state, winner)
    scores = {state.colours[c]: int(c == winner) for c in ("blue", "red")}
    return (Score(t=t, message=f"{who} wins the game, 1 to 0.", player=state.colours[winner],
                  scores=scores),
            GameOver(t=t, message=f"{who} wins: {reason}.", player=state.colours[winner],
                     winner=state.colours[winner], reason=reason, scores=scores))


def _illegal(t: float, rule: str, message: str, player: str | None = None) -> Illegal:
    if player is None:
        return Illegal(t=t, message=message, rule=rule)
    return Illegal(t=t, message=message, rule=rule, player=player)


def _named(state: ShoveState, given: str | None) -> str | None:
    """The player an observation names, by name or by colour in any case ("Blue" -> blue's
    player); None when it names nobody, or nobody of this game."""
    if given is None:
        return None
    by_colour: dict[str, str] = {str(c): name for c, name in state.colours.items()}
    by_name = {p.lower(): p for p in state.players}
    return by_colour.get(given.lower()) or by_name.get(given.lower())


def _who(state: ShoveState, colour: Colour) -> str:
    name = state.colours[colour]
    return colour.capitalize() if name.lower() == colour else f"{name} ({colour})"


def _square(position: Position, colour: Colour, label: int) -> Square:
    square = position.pieces(colour)[label]
    assert square is not None
    return square


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
