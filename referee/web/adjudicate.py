"""Re-adjudication over an observation log: corrections, other settings, what changed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import groupby
from typing import Any, Literal

from referee.adjudication import Session
from referee.adjudication.corrections import relabel_card
from referee.observations import Observation
from referee.rulings import Ruling

Point = tuple[float, float]
#: A corrected card is matched to the placement it corrects when their centres are this near.


@dataclass(frozen=True)
class Entry:
    """One observation the referee acted on, at the frame it was made."""

    index: int
    observation: Observation
    origin: Literal["camera", "manual"] = "camera"


@dataclass(frozen=True)
class RulingAt:
    index: int
    ruling: Ruling


@dataclass(frozen=True)
class Change:
    """One ruling that differs between two adjudications of the same log."""

    index: int
    t: float
    before: dict[str, Any] | None
    after: dict[str, Any] | None


def readjudicate(game: str, players: Sequence[str], settings: Mapping[str, Any],
                 entries: Sequence[Entry], *, finish: bool = True) -> list[RulingAt]:
    """Every ruling a fresh session makes over ``entries``. Raises the session's ValueErrors
    (bad settings, players) to the caller."""
    session = Session.start(game, players, settings)
    out: list[RulingAt] = []
    last = 0
    for moment in _moments(entries):  # ruled as `referee adjudicate` rules them
        for k in session.in_order([entry.observation for entry in moment]):
            out.extend(RulingAt(moment[k].index, r)
                       for r in session.feed(moment[k].observation))
        last = moment[-1].index
    if finish:
        out.extend(RulingAt(last, r) for r in session.finish())
    return out


def _moments(entries: Sequence[Entry]) -> list[list[Entry]]:
    """Runs of entries made at the same moment (the same ``t``), in order."""
    return [list(run) for _, run in groupby(entries, key=lambda e: e.observation.t)]


def apply_correction(entries: Sequence[Entry], corners: Sequence[Point], old: str,
                     new: str) -> tuple[Entry, ...]:
    """The log with the card placed at ``corners`` read as ``new`` instead of ``old``."""
    fixed = relabel_card([e.observation for e in entries], corners, old, new)
    return tuple(replace(e, observation=o) for e, o in zip(entries, fixed, strict=True))


def _key(ruling: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in ruling.items() if k != "evidence"}


def diff_rulings(before: Sequence[RulingAt], after: Sequence[RulingAt]) -> list[Change]:
    """Rulings that differ, compared moment by moment (same ``t``, in order)."""
    def by_time(rulings: Sequence[RulingAt]) -> dict[float, list[RulingAt]]:
        groups: dict[float, list[RulingAt]] = {}
        for item in rulings:
            groups.setdefault(item.ruling.t, []).append(item)
        return groups

    old, new = by_time(before), by_time(after)
    changes: list[Change] = []
    for t in sorted(set(old) | set(new)):
        a, b = old.get(t, []), new.get(t, [])
        for position in range(max(len(a), len(b))):
            x = a[position].ruling.to_json() if position < len(a) else None
            y = b[position].ruling.to_json() if position < len(b) else None
            if x is None or y is None or _key(x) != _key(y):
                index = (a[position] if position < len(a) else b[position]).index
                changes.append(Change(index, t, x, y))
    return changes
