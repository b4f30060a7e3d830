"""A stand-in source that does not look at the images: it replays a clip's recorded
observations (its ground truth, or a recording's log) into a real ``Session`` at their times.

The dashboard labels it "replaying recorded observations" wherever it is used, so nobody
takes its rulings for what the camera saw.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import numpy as np

from referee.adjudication import Session
from referee.adjudication.corrections import centre
from referee.calibration.rectify import PlaneMap
from referee.observations import (
    BoardState,
    CardPlaced,
    CardRemoved,
    CoinRemoved,
    CoinStopped,
    Observation,
    ObservationError,
    Setup,
    read_observation_file,
)
from referee.pipeline.events import (
    Event,
    FrameEvent,
    ObservationEvent,
    RulingEvent,
    StatusEvent,
    TableEvent,
    TrackedObject,
)
from referee.rules.shove_piecepack import ShovePiecepackSettings, coin_radius
from referee.web.adjudicate import Entry, apply_correction
from referee.web.protocol import Image

LABEL: Final = "replaying recorded observations"
Point = tuple[float, float]


class RecordedLogError(ValueError):
    """An observations file that cannot be replayed."""


def read_observations(path: Path) -> tuple[Setup | None, tuple[Observation, ...]]:
    """The setup line (if any) and observations of a JSON lines file. One-line errors."""
    try:
        return read_observation_file(path)
    except ObservationError as error:
        raise RecordedLogError(str(error)) from None


def _circle(cx: float, cy: float, r: float, n: int = 24) -> tuple[Point, ...]:
    return tuple((cx + r * math.cos(2 * math.pi * k / n), cy + r * math.sin(2 * math.pi * k / n))
                 for k in range(n))


class RecordedObservationsPipeline:
    """Feeds ``observations`` into ``session`` as the clock passes their ``t``; reports the
    table they describe (cards, coins, grid tokens) with outlines mapped into the image."""

    label: Final = LABEL

    def __init__(self, session: Session, observations: Sequence[Observation],
                 plane: PlaneMap | None, grid_pitch_mm: float = 30.0) -> None:
        self._session = session
        self._pending: list[Observation] = sorted(observations, key=lambda o: o.t)
        self._fed: list[Entry] = []
        self._plane = plane
        self._pitch = grid_pitch_mm
        self._objects: dict[str, TrackedObject] = {}
        self._serial = 0

    @property
    def entries(self) -> tuple[Entry, ...]:
        """What has been fed so far, at the frames it was fed."""
        return tuple(self._fed)

    # -- the FramePipeline protocol

    def process(self, index: int, t: float, image: Image | None) -> list[Event]:
        events: list[Event] = [FrameEvent(index, t, moving=False)]
        changed = False
        while self._pending and self._pending[0].t <= t + 1e-9:
            observation = self._pending.pop(0)
            events.extend(self._feed(index, observation))
            changed |= self._track(observation)
        if changed:
            events.append(TableEvent(index, t, tuple(self._objects.values())))
        return events

    def manual(self, observation: Observation) -> list[Event]:
        index = self._fed[-1].index if self._fed else 0
        if isinstance(observation, CardPlaced) and observation.corners is not None:
            corrected = self._correct(observation)
            if corrected is not None:
                return corrected
        events = self._feed(index, observation, origin="manual")
        if self._track(observation):
            events.append(TableEvent(index, observation.t, tuple(self._objects.values())))
        return events

    def finish(self, t: float) -> list[Event]:
        index = self._fed[-1].index if self._fed else 0
        return [RulingEvent(index, r.t, r) for r in self._session.finish()]

    # -- internals

    def _feed(self, index: int, observation: Observation,
              origin: str = "camera") -> list[Event]:
        at = max(observation.t, self._session.last_t)
        observation = observation.model_copy(update={"t": at})
        try:
            rulings = self._session.feed(observation)
        except ValueError as error:
            return [StatusEvent(index, at, "warning", f"Ignored an observation: {error}.")]
        self._fed.append(Entry(index, observation, "manual" if origin == "manual" else "camera"))
        return [ObservationEvent(index, at, observation),
                *(RulingEvent(index, r.t, r) for r in rulings)]

    def _correct(self, observation: CardPlaced) -> list[Event] | None:
        assert observation.corners is not None
        cx, cy = centre(observation.corners)
        for uid, obj in self._objects.items():
            if obj.kind != "card":
                continue
            ox, oy = centre(obj.outline_mm)
            if math.hypot(ox - cx, oy - cy) > 15.0:
                continue
            old = obj.label
            self._fed = list(apply_correction(self._fed, obj.outline_mm, old, observation.card))
            self._pending = [
                p.model_copy(update={"card": observation.card})
                if isinstance(p, CardRemoved) and p.card == old else p for p in self._pending]
            self._objects[uid] = TrackedObject(uid, "card", observation.card, obj.outline_mm,
                                               obj.outline_px, 1.0)
            self._session = Session(self._session.rules, self._session.players,
                                    self._session.settings)
            for entry in self._fed:
                self._session.feed(entry.observation)
            index = self._fed[-1].index if self._fed else 0
            return [TableEvent(index, observation.t, tuple(self._objects.values())),
                    StatusEvent(index, observation.t, "info",
                                f"Corrected {old} to {observation.card}: re-adjudicated.")]
        return None

    def _add(self, uid: str, kind: str, label: str, outline: tuple[Point, ...]) -> None:
        px: tuple[Point, ...] = ()
        if self._plane is not None:
            mapped = self._plane.to_pixels(np.asarray(outline, dtype=np.float64))
            px = tuple((float(x), float(y)) for x, y in mapped)
        self._objects[uid] = TrackedObject(uid, kind, label, outline, px)  # type: ignore[arg-type]

    def _track(self, observation: Observation) -> bool:
        if isinstance(observation, CardPlaced) and observation.corners is not None:
            self._serial += 1
            self._add(f"card{self._serial}", "card", observation.card,
                      tuple(observation.corners))
            return True
        if isinstance(observation, CardRemoved):
            for uid in reversed(list(self._objects)):
                if self._objects[uid].kind == "card" and self._objects[uid].label == \
                        observation.card:
                    del self._objects[uid]
                    return True
            return False
        if isinstance(observation, CoinStopped):
            x, y = observation.center
            settings = self._session.settings
            if not isinstance(settings, ShovePiecepackSettings):
                settings = ShovePiecepackSettings()  # (a coin means nothing in other games)
            self._add(f"coin:{observation.id}", "coin", observation.id,
                      _circle(x, y, coin_radius(observation, settings)))
            return True
        if isinstance(observation, CoinRemoved):
            return self._objects.pop(f"coin:{observation.id}", None) is not None
        if isinstance(observation, BoardState):
            for uid in [u for u, o in self._objects.items() if o.kind == "token"]:
                del self._objects[uid]
            p = self._pitch
            for colour, squares in (("red", observation.red), ("blue", observation.blue)):
                for n, (row, col) in enumerate(squares):
                    x, y = (col + 0.5) * p, (row + 0.5) * p
                    self._add(f"{colour}{n}", "token", colour, _circle(x, y, p * 0.38, 16))
            return True
        return False
