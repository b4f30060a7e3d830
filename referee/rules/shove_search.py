"""Shove (grid): the board, the actions, and the search that explains an observed board.

Pure and free of game bookkeeping: ``shove_grid`` keeps turns and rulings. Squares are
(row, col); row 0 is red's side, whose outer edge is the "bottom" edge.

The camera sees unlabelled boards, but the required-movement rule needs to know which
piece is which, so the search works on labelled positions (a piece's label is its index
in the layout's starting list) and compares only their unlabelled boards with the target.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Square = tuple[int, int]
Colour = Literal["red", "blue"]
Edge = Literal["left", "right", "top", "bottom"]

ORTHOGONAL: tuple[Square, ...] = ((1, 0), (-1, 0), (0, 1), (0, -1))
KING: tuple[Square, ...] = (*ORTHOGONAL, (1, 1), (1, -1), (-1, 1), (-1, -1))
UNREACHABLE = 1_000_000


class _Immutable:
    """Shared rather than copied: engine states are deep-copied on every observation."""

    __slots__ = ()

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return self


def other(colour: Colour) -> Colour:
    return "blue" if colour == "red" else "red"


def manhattan(a: Square, b: Square) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def square_text(square: Square) -> str:
    return f"({square[0]},{square[1]})"


@dataclass(frozen=True, slots=True)
class Layout(_Immutable):
    rows: int
    cols: int
    victory: Square
    red: tuple[Square, ...]
    blue: tuple[Square, ...]
    open_edges: frozenset[Edge] = frozenset({"top", "bottom"})
    #: Internal walls, each the pair of adjacent squares it separates.
    walls: frozenset[frozenset[Square]] = frozenset()

    def inside(self, square: Square) -> bool:
        return 0 <= square[0] < self.rows and 0 <= square[1] < self.cols

    def edge_beyond(self, outside: Square) -> Edge:
        """The edge crossed by stepping from the board onto ``outside``."""
        if outside[0] < 0:
            return "bottom"
        if outside[0] >= self.rows:
            return "top"
        return "left" if outside[1] < 0 else "right"

    def walled(self, a: Square, b: Square) -> bool:
        return bool(self.walls) and frozenset((a, b)) in self.walls

    def exit_distance(self, square: Square) -> int:
        """Squares a piece must travel to leave the board over an open edge."""
        r, c = square
        ways = {"bottom": r + 1, "top": self.rows - r, "left": c + 1, "right": self.cols - c}
        return min((ways[edge] for edge in self.open_edges), default=UNREACHABLE)

    def start(self) -> Position:
        return Position(self.red, self.blue)


DEFAULT_LAYOUT = Layout(
    rows=9,
    cols=7,
    victory=(0, 3),
    red=((2, 1), (2, 3), (2, 5)),
    blue=((8, 0), (8, 2), (8, 4), (8, 6)),
)


@dataclass(frozen=True, slots=True)
class Board(_Immutable):
    """What the camera sees: occupied squares by colour, without identities."""

    red: frozenset[Square]
    blue: frozenset[Square]

    @classmethod
    def of(cls, red: Iterable[Square], blue: Iterable[Square]) -> Board:
        return cls(frozenset(red), frozenset(blue))


@dataclass(frozen=True, slots=True)
class Position(_Immutable):
    """Labelled pieces: ``red[i]`` is red piece i's square, None once removed."""

    red: tuple[Square | None, ...]
    blue: tuple[Square | None, ...]

    def pieces(self, colour: Colour) -> tuple[Square | None, ...]:
        return self.red if colour == "red" else self.blue

    def board(self) -> Board:
        return Board(
            frozenset(s for s in self.red if s is not None),
            frozenset(s for s in self.blue if s is not None),
        )

    def placed(self, colour: Colour, label: int, square: Square | None) -> Position:
        pieces = list(self.pieces(colour))
        pieces[label] = square
        if colour == "red":
            return Position(tuple(pieces), self.blue)
        return Position(self.red, tuple(pieces))


@dataclass(frozen=True, slots=True)
class Move(_Immutable):
    colour: Colour
    label: int
    start: Square
    end: Square


@dataclass(frozen=True, slots=True)
class Shift(_Immutable):
    """One blue piece's travel in a push; ``end`` None: pushed off the board."""

    label: int
    start: Square
    end: Square | None


@dataclass(frozen=True, slots=True)
class Push(_Immutable):
    label: int  # the pushing red piece
    by: Square
    shifts: tuple[Shift, ...]  # the pushed piece first, then the chain it drove on


@dataclass(frozen=True, slots=True)
class Removal(_Immutable):
    colour: Colour
    label: int
    square: Square


@dataclass(frozen=True, slots=True)
class Ply(_Immutable):
    """One action and the red pieces it got removed (touching two or more blue)."""

    action: Move | Push
    removed: tuple[Removal, ...] = ()

    def removals(self) -> tuple[Removal, ...]:
        """Every piece the action took off the board, pushed-off blue ones included."""
        if not isinstance(self.action, Push):
            return self.removed
        off = tuple(Removal("blue", s.label, s.start) for s in self.action.shifts if s.end is None)
        return off + self.removed


@dataclass(frozen=True, slots=True)
class Phase(_Immutable):
    """What one player's phase allows: whose pieces act and which are overdue."""

    layout: Layout
    colour: Colour
    overdue: frozenset[int] = frozenset()
    king_touch: bool = False


@dataclass(frozen=True, slots=True)
class Node(_Immutable):
    position: Position
    moved: frozenset[int] = frozenset()  # overdue labels already moved in this phase


@dataclass(frozen=True, slots=True)
class Reached(_Immutable):
    node: Node
    plies: tuple[Ply, ...] = ()

    @property
    def cost(self) -> int:
        return len(self.plies)


@dataclass(frozen=True, slots=True)
class Outcome(_Immutable):
    winner: Colour
    reason: str


def outcome(layout: Layout, board: Board) -> Outcome | None:
    if layout.victory in board.blue:
        return Outcome("blue", "a blue piece reached the victory square")
    if not board.red:
        return Outcome("blue", "every red piece was removed")
    if not board.blue:
        return Outcome("red", "every blue piece was removed")
    return None


def victory_path_open(layout: Layout, board: Board) -> bool:
    """Whether some blue piece can walk through empty squares to the victory square."""
    if layout.victory in board.red:
        return False
    seen = set(board.blue)
    todo = list(board.blue)
    while todo:
        here = todo.pop()
        for dr, dc in ORTHOGONAL:
            ahead = (here[0] + dr, here[1] + dc)
            if ahead == layout.victory and not layout.walled(here, ahead):
                return True
            if (
                ahead in seen
                or not layout.inside(ahead)
                or ahead in board.red
                or layout.walled(here, ahead)
            ):
                continue
            seen.add(ahead)
            todo.append(ahead)
    return layout.victory in board.blue


def _finished(layout: Layout, position: Position) -> bool:
    return (
        layout.victory in position.blue
        or all(s is None for s in position.red)
        or all(s is None for s in position.blue)
    )


def remove_touched(position: Position, king: bool) -> tuple[Position, tuple[Removal, ...]]:
    """Remove every red piece touching two or more blue pieces."""
    blues = {s for s in position.blue if s is not None}
    if len(blues) < 2:
        return position, ()
    offsets = KING if king else ORTHOGONAL
    reds = list(position.red)
    removed: list[Removal] = []
    for label, square in enumerate(reds):
        if square is None:
            continue
        touching = sum((square[0] + dr, square[1] + dc) in blues for dr, dc in offsets)
        if touching >= 2:
            reds[label] = None
            removed.append(Removal("red", label, square))
    if not removed:
        return position, ()
    return Position(tuple(reds), position.blue), tuple(removed)


def resolve_push(
    layout: Layout, reds: frozenset[Square], blues: dict[Square, int], start: Square, way: Square
) -> list[Shift]:
    """How the blue piece on ``start`` and any it runs into travel when pushed along ``way``.

    Empty when nothing can move. A blue piece in the way that cannot move itself blocks
    like a red one (the pushed piece cannot take a square that is not vacated).
    """
    here = start
    for _ in range(2):
        ahead = (here[0] + way[0], here[1] + way[1])
        if not layout.inside(ahead):
            if layout.edge_beyond(ahead) in layout.open_edges:
                return [Shift(blues[start], start, None)]
            break
        if ahead in reds or layout.walled(here, ahead):
            break
        if ahead in blues:
            chain = resolve_push(layout, reds, blues, ahead, way)
            if chain:
                return [Shift(blues[start], start, ahead), *chain]
            break
        here = ahead
    return [] if here == start else [Shift(blues[start], start, here)]


def successors(phase: Phase, node: Node) -> Iterator[tuple[Ply, Node]]:
    """Every legal action of the phase's player from ``node``, with the node it leads to."""
    position = node.position
    if _finished(phase.layout, position):
        return
    yield from _moves(phase, node)
    if phase.colour == "red":
        yield from _pushes(phase, node)


def _moves(phase: Phase, node: Node) -> Iterator[tuple[Ply, Node]]:
    position, layout = node.position, phase.layout
    own = position.pieces(phase.colour)
    occupied = {s for s in (*position.red, *position.blue) if s is not None}
    waiting = any(own[label] is not None for label in phase.overdue - node.moved)
    for label, square in enumerate(own):
        # While an overdue piece waits, only the overdue pieces not yet moved may move: one
        # that has moved is no longer overdue, so it is "any other piece" (rules.md).
        if square is None or (waiting and (label not in phase.overdue or label in node.moved)):
            continue
        moved = node.moved | {label} if label in phase.overdue else node.moved
        for dr, dc in ORTHOGONAL:
            end = (square[0] + dr, square[1] + dc)
            if end in occupied or not layout.inside(end) or layout.walled(square, end):
                continue
            after, removed = remove_touched(
                position.placed(phase.colour, label, end), phase.king_touch
            )
            yield Ply(Move(phase.colour, label, square, end), removed), Node(after, moved)


def _pushes(phase: Phase, node: Node) -> Iterator[tuple[Ply, Node]]:
    position, layout = node.position, phase.layout
    reds = frozenset(s for s in position.red if s is not None)
    blues = {s: label for label, s in enumerate(position.blue) if s is not None}
    for label, square in enumerate(position.red):
        if square is None:
            continue
        for way in ORTHOGONAL:
            touched = (square[0] + way[0], square[1] + way[1])
            if touched not in blues or layout.walled(square, touched):
                continue
            shifts = resolve_push(layout, reds, blues, touched, way)
            if not shifts:
                continue
            blue = list(position.blue)
            for shift in shifts:
                blue[shift.label] = shift.end
            after, removed = remove_touched(Position(position.red, tuple(blue)), phase.king_touch)
            yield Ply(Push(label, square, tuple(shifts)), removed), Node(after, node.moved)


def apply_ply(phase: Phase, node: Node, ply: Ply) -> Node:
    """The node after ``ply``; raises ValueError if it is not legal here."""
    for candidate, child in successors(phase, node):
        if candidate == ply:
            return child
    raise ValueError(f"not a legal action here: {ply.action}")


class _Bound:
    """Admissible lower bound on the actions from a position to the target board.

    Red moves change only red squares and pushes only blue ones, so the two parts add up.
    Each action lowers the bound by at most one, which also makes it consistent for A*.
    """

    def __init__(self, phase: Phase, target: Board) -> None:
        self.layout = phase.layout
        self.red_phase = phase.colour == "red"
        self.target = target
        self.red_targets = tuple(sorted(target.red))
        self.blue_targets = tuple(sorted(target.blue))
        self.cache: dict[Position, int] = {}

    def __call__(self, position: Position) -> int:
        bound = self.cache.get(position)
        if bound is None:
            bound = self.cache[position] = self._compute(position)
        return bound

    def _compute(self, position: Position) -> int:
        reds = [s for s in position.red if s is not None]
        blues = [s for s in position.blue if s is not None]
        if len(self.red_targets) > len(reds) or len(self.blue_targets) > len(blues):
            return UNREACHABLE
        if self.red_phase:
            cost = _assignment(reds, self.red_targets) + self._pushes_needed(blues)
        else:
            if len(blues) != len(self.blue_targets) or not self.target.red <= frozenset(reds):
                return UNREACHABLE
            cost = _assignment(blues, self.blue_targets)
        # Extra red pieces still have to be removed, which takes at least one action.
        return max(cost, int(len(reds) != len(self.red_targets)))

    def _pushes_needed(self, blues: list[Square]) -> int:
        if frozenset(blues) == self.target.blue:
            return 0
        # A push moves every blue piece it involves at most two squares.
        best = UNREACHABLE
        targets = self.blue_targets
        for order in itertools.permutations(blues):
            worst = 0
            for i, square in enumerate(order):
                far = (
                    manhattan(square, targets[i])
                    if i < len(targets)
                    else self.layout.exit_distance(square)
                )
                worst = max(worst, (far + 1) // 2)
                if worst >= best:
                    break
            best = min(best, worst)
        return max(best, 1)


def _assignment(sources: Sequence[Square], targets: Sequence[Square]) -> int:
    """Least total Manhattan distance taking distinct sources onto every target."""
    # Pieces already on a target square stay matched to it in some optimal assignment.
    source_set, target_set = set(sources), set(targets)
    free = [s for s in sources if s not in target_set]
    wanted = [t for t in targets if t not in source_set]
    if not wanted:
        return 0
    return min(
        sum(manhattan(s, t) for s, t in zip(order, wanted, strict=True))
        for order in itertools.permutations(free, len(wanted))
    )


def explain(
    phase: Phase, sources: Iterable[Reached], target: Board, limit: int
) -> tuple[Reached, ...]:
    """Every node showing ``target`` within ``limit`` actions in all, each by a cheapest path.

    Breadth-first from all sources at once, pruned by the admissible bound; every such
    node is kept because its identities and overdue flags may matter to later boards.
    """
    bound = _Bound(phase, target)
    levels: list[list[Reached]] = [[] for _ in range(limit + 1)]
    best: dict[Node, int] = {}
    for source in sources:
        cost = source.cost
        if cost + bound(source.node.position) <= limit and best.get(source.node, limit + 1) > cost:
            best[source.node] = cost
            levels[cost].append(source)
    found: list[Reached] = []
    for cost, level in enumerate(levels):
        for reached in level:
            if best[reached.node] < cost:
                continue
            if bound(reached.node.position) == 0 and reached.node.position.board() == target:
                found.append(reached)
            if cost == limit:
                continue
            for ply, child in successors(phase, reached.node):
                if best.get(child, limit + 1) <= cost + 1:
                    continue
                if cost + 1 + bound(child.position) > limit:
                    continue
                best[child] = cost + 1
                levels[cost + 1].append(Reached(child, (*reached.plies, ply)))
    return tuple(found)


def cheapest(
    phase: Phase, sources: Iterable[Reached], target: Board, limit: int, budget: int = 20_000
) -> int | None:
    """Fewest actions in all reaching ``target`` (A*); None beyond ``limit`` or ``budget`` nodes."""
    bound = _Bound(phase, target)
    tie = itertools.count()
    best: dict[Node, int] = {}
    heap: list[tuple[int, int, int, Node]] = []
    for source in sources:
        cost = source.cost
        estimate = cost + bound(source.node.position)
        if estimate <= limit and best.get(source.node, limit + 1) > cost:
            best[source.node] = cost
            heapq.heappush(heap, (estimate, -cost, next(tie), source.node))
    expanded = 0
    while heap:
        _, negative, _, node = heapq.heappop(heap)
        cost = -negative
        if best[node] < cost:
            continue
        if node.position.board() == target:
            return cost
        expanded += 1
        if expanded > budget:
            return None
        for _, child in successors(phase, node):
            estimate = cost + 1 + bound(child.position)
            if best.get(child, limit + 1) <= cost + 1 or estimate > limit:
                continue
            best[child] = cost + 1
            heapq.heappush(heap, (estimate, -(cost + 1), next(tie), child))
    return None


def cheapest_of(found: Sequence[Reached]) -> Reached:
    """The explanation to announce: fewest actions, then the first found."""
    return min(found, key=lambda reached: reached.cost)
