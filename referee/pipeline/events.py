"""What the pipeline tells its consumers (replay printer, dashboard, recorder), per frame.

The pipeline runs frames -> calibration -> detection -> tracking -> observations -> rules
engine -> rulings. It reports each step as a typed, frozen event; consumers never reach
into its state. Pixels are never carried in events: a consumer that wants the frame keeps
the frame it fed in (matched by ``index``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from referee.observations import Observation
from referee.rulings import Ruling

Point = tuple[float, float]


@dataclass(frozen=True)
class TrackedObject:
    """Something the tracker holds on the table: a card, coin or token."""

    uid: str
    kind: Literal["card", "coin", "token"]
    label: str  # card code / "??" / "back"; coin id; token colour
    outline_mm: tuple[Point, ...]  # table (or board) frame
    outline_px: tuple[Point, ...]  # image pixels
    confidence: float = 1.0


@dataclass(frozen=True)
class FrameEvent:
    """One frame was processed."""

    index: int
    t: float
    moving: bool  # hands or sliding pieces in view: no ruling is made on this frame


@dataclass(frozen=True)
class TableEvent:
    """A new stable table state and everything the tracker holds on it."""

    index: int
    t: float
    objects: tuple[TrackedObject, ...]


@dataclass(frozen=True)
class ObservationEvent:
    index: int
    t: float
    observation: Observation


@dataclass(frozen=True)
class RulingEvent:
    index: int
    t: float
    ruling: Ruling


@dataclass(frozen=True)
class StatusEvent:
    """Something the people at the table should know that is not a ruling."""

    index: int
    t: float
    level: Literal["info", "warning", "error"]
    message: str  # one plain sentence


Event = FrameEvent | TableEvent | ObservationEvent | RulingEvent | StatusEvent
