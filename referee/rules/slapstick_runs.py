"""Slapstick's optional three-card runs: flush, straight and glide (ace low).

A run in force obliges the next card to continue it; see rules.md section 5 and the seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from referee.cards import Card

if TYPE_CHECKING:
    from referee.rules.slapstick import SlapstickSettings

Kind = Literal["flush", "straight", "glide"]


@dataclass(frozen=True)
class Run:
    kind: Kind
    suit: str | None = None  # flush
    low: int = 0  # straight (any order): the ranks covered
    high: int = 0
    last: int = 0  # ordered straight and glide: the last rank and the direction
    direction: int = 0


def extendable(run: Run) -> bool:
    """Whether a run stays in force. Only a straight needs room to grow (the seed's
    "so long as the sequence may be extended"); the seed calls 5-8-K a glide, so a glide
    that reached the king still obliges the next player."""
    if run.kind != "straight":
        return True
    if run.direction == 0:
        return run.low > 1 or run.high < 13
    return 1 <= run.last + run.direction <= 13


def advance(run: Run, card: Card) -> Run | None:
    """The run continued by ``card``, or None when the card does not continue it.

    A continued run that can go no further (an upward glide that reached the king) is
    returned too: the card met the obligation; ``extendable`` says whether it stays in force.
    """
    if card.is_joker:
        return None
    if run.kind == "flush":
        return run if card.suit == run.suit else None
    if run.kind == "straight" and run.direction == 0:
        if card.rank == run.low - 1:
            return Run("straight", low=card.rank, high=run.high)
        if card.rank == run.high + 1:
            return Run("straight", low=run.low, high=card.rank)
        return None
    step = card.rank - run.last
    if run.kind == "straight" and step != run.direction:
        return None
    if run.kind == "glide" and step * run.direction <= 0:
        return None
    return Run(run.kind, last=card.rank, direction=run.direction)


def runs_made(row: Sequence[Card], settings: SlapstickSettings) -> list[Run]:
    """Runs that the last three cards of the row put in force."""
    if len(row) < 3 or any(c.is_joker for c in row[-3:]):
        return []
    a, b, c = row[-3:]
    made: list[Run] = []
    if settings.three_card_flush and a.suit == b.suit == c.suit:
        made.append(Run("flush", suit=c.suit))
    ranks = [a.rank, b.rank, c.rank]
    if settings.three_card_straight:
        if settings.ten_card_string:  # consecutive order only: 9-10-J or J-10-9
            step = b.rank - a.rank
            if step in (1, -1) and c.rank - b.rank == step:
                made.append(Run("straight", last=c.rank, direction=step))
        elif len(set(ranks)) == 3 and max(ranks) - min(ranks) == 2:
            made.append(Run("straight", low=min(ranks), high=max(ranks)))
    if settings.glide:
        if a.rank < b.rank < c.rank:
            made.append(Run("glide", last=c.rank, direction=1))
        elif a.rank > b.rank > c.rank:
            made.append(Run("glide", last=c.rank, direction=-1))
    return [run for run in made if extendable(run)]


def merge_runs(kept: list[Run], made: list[Run]) -> list[Run]:
    kinds = {run.kind for run in kept}
    return kept + [run for run in made if run.kind not in kinds]
