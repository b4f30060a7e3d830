"""Time the Shove (grid) search on random 7-piece states of the default board.

    python bench/shove_search.py [--states 300] [--roll 4] [--seed 1]

Reachable: a random legal phase of up to ``roll`` actions, some boards seen on the way;
the referee must explain it (target: worst case under 1 s). Unreachable: boards the roll
cannot explain, timed through the whole explanation path the engine takes (strict search,
the search without required movement, then the nearest explanation up to roll + 6).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from referee.rules.shove_grid import EXTRA_ACTIONS
from referee.rules.shove_search import (
    DEFAULT_LAYOUT,
    Board,
    Colour,
    Node,
    Phase,
    Position,
    Reached,
    cheapest,
    explain,
    successors,
)

SQUARES = [
    (r, c)
    for r in range(DEFAULT_LAYOUT.rows)
    for c in range(DEFAULT_LAYOUT.cols)
    if (r, c) != DEFAULT_LAYOUT.victory
]


def random_phase(rng: random.Random) -> tuple[Phase, Node]:
    squares = rng.sample(SQUARES, 7)
    colour: Colour = rng.choice(["red", "blue"])
    count = 3 if colour == "red" else 4
    overdue = frozenset(rng.sample(range(count), rng.randint(0, 2)))
    phase = Phase(DEFAULT_LAYOUT, colour, overdue, king_touch=rng.random() < 0.2)
    return phase, Node(Position(tuple(squares[:3]), tuple(squares[3:])))


def play(rng: random.Random, phase: Phase, node: Node, actions: int) -> list[Node]:
    """The nodes after each of up to ``actions`` random legal actions."""
    seen = []
    for _ in range(actions):
        options = list(successors(phase, node))
        if not options:
            break
        node = rng.choice(options)[1]
        seen.append(node)
    return seen


def reachable(rng: random.Random, roll: int) -> Callable[[], str]:
    phase, start = random_phase(rng)
    seen = play(rng, phase, start, rng.randint(0, roll)) or [start]
    observed = [n.position.board() for n in seen[:-1] if rng.random() < 0.5]
    observed.append(seen[-1].position.board())

    def run() -> str:
        frontier: tuple[Reached, ...] = (Reached(start),)
        for board in observed:
            frontier = explain(phase, frontier, board, roll)
            if not frontier:
                return "NOT EXPLAINED"
        return "explained"

    return run


def unreachable(rng: random.Random, roll: int) -> Callable[[], str]:
    phase, start = random_phase(rng)
    if rng.random() < 0.5:
        target = (play(rng, phase, start, roll + 1 + rng.randint(0, 5)) or [start])[-1]
        board = target.position.board()
    else:
        squares = rng.sample(SQUARES, 7)
        board = Board.of(squares[:3], squares[3:])
    sources = (Reached(start),)

    def run() -> str:
        if explain(phase, sources, board, roll):
            return "explained after all"
        if phase.overdue and explain(replace(phase, overdue=frozenset()), sources, board, roll):
            return "overdue piece"
        if cheapest(phase, sources, board, roll + EXTRA_ACTIONS) is not None:
            return "too many actions"
        return "illegal position"

    return run


def measure(label: str, cases: list[Callable[[], str]]) -> None:
    times, verdicts = [], Counter[str]()
    for case in cases:
        began = time.perf_counter()
        verdicts[case()] += 1
        times.append(time.perf_counter() - began)
    print(
        f"{label}: {len(times)} states; median {statistics.median(times) * 1000:.1f} ms, "
        f"worst {max(times) * 1000:.1f} ms, total {sum(times):.2f} s; "
        + ", ".join(f"{verdict} {n}" for verdict, n in verdicts.most_common())
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=int, default=300)
    parser.add_argument("--roll", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    measure("reachable", [reachable(rng, args.roll) for _ in range(args.states)])
    measure("unreachable", [unreachable(rng, args.roll) for _ in range(args.states)])


if __name__ == "__main__":
    main()
