"""Corrections: a card the camera misread, set right after the fact."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from referee.observations import CardPlaced, CardRemoved, Observation

Point = tuple[float, float]
#: A correction names the card lying within this distance (centre to centre, mm).
SAME_PLACE_MM: Final = 15.0


def centre(points: Sequence[Point]) -> Point:
    return (sum(p[0] for p in points) / len(points), sum(p[1] for p in points) / len(points))


def relabel_card(observations: Sequence[Observation], corners: Sequence[Point], old: str,
                 new: str) -> list[Observation]:
    """The observations with the card placed at ``corners`` read as ``new`` instead of
    ``old``: its placement, and its next removal, change identity. Unchanged when nothing
    matches."""
    cx, cy = centre(corners)
    out = list(observations)
    placed_at = None
    for position in range(len(out) - 1, -1, -1):
        obs = out[position]
        if isinstance(obs, CardPlaced) and obs.card == old and obs.corners is not None:
            ox, oy = centre(obs.corners)
            if math.hypot(ox - cx, oy - cy) <= SAME_PLACE_MM:
                placed_at = position
                break
    if placed_at is None:
        return out
    out[placed_at] = out[placed_at].model_copy(update={"card": new})
    for position in range(placed_at + 1, len(out)):
        obs = out[position]
        if isinstance(obs, CardRemoved) and obs.card == old:
            out[position] = obs.model_copy(update={"card": new})
            break
    return out
