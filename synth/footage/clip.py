"""Turn physical actions (a hand brings a card, gathers a trick, a coin slides and stops)
into a frame-by-frame scene list and the observations a perfect referee would make.

Times are seconds of video. An observation's ``t`` is the first frame at which the table
is still again after the action (the hand gone, the coin at rest).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from synth.hands import HandPose, random_hand
from synth.scene import Placed, Scene

Point = tuple[float, float]


def ease(u: float) -> float:
    u = min(max(u, 0.0), 1.0)
    return u * u * (3 - 2 * u)


@dataclass(frozen=True)
class Seat:
    """Where a player sits: hands come from ``home`` (mm, outside the play area)."""

    player: str
    home: Point

    def direction_to(self, target: Point) -> float:
        """HandPose.direction_deg for an arm reaching from home to target."""
        dx, dy = target[0] - self.home[0], target[1] - self.home[1]
        return -math.degrees(math.atan2(dx, dy))


@dataclass
class ClipBuilder:
    rng: np.random.Generator
    fps: float = 15.0
    objects: dict[str, Placed] = field(default_factory=dict)  # insertion order = z order
    frames: list[Scene] = field(default_factory=list)
    observations: list[dict[str, Any]] = field(default_factory=list)
    hand_styles: dict[str, HandPose] = field(default_factory=dict)

    @property
    def t(self) -> float:
        return len(self.frames) / self.fps

    def _frame(self, hands: Iterable[HandPose] = (), extra: Iterable[Placed] = ()) -> None:
        self.frames.append(Scene((*self.objects.values(), *extra), tuple(hands)))

    def idle(self, seconds: float) -> None:
        for _ in range(max(1, round(seconds * self.fps))):
            self._frame()

    def observe(self, observation: dict[str, Any]) -> None:
        self.observations.append({"t": round(self.t, 3), **observation})

    def _hand(self, seat: Seat, reach: Point) -> HandPose:
        style = self.hand_styles.get(seat.player)
        if style is None:
            style = random_hand(self.rng, reach)
            self.hand_styles[seat.player] = style
        return replace(style, reach=reach, direction_deg=seat.direction_to(reach))

    def _travel(self, seat: Seat, target: Point, seconds: float, *, inward: bool,
                carried: list[Placed] | None = None) -> None:
        n = max(2, round(seconds * self.fps))
        for i in range(n):
            u = ease((i + 1) / n) if inward else 1 - ease((i + 1) / n)
            reach = (seat.home[0] + (target[0] - seat.home[0]) * u,
                     seat.home[1] + (target[1] - seat.home[1]) * u)
            extra = [replace(obj, center=(obj.center[0] + reach[0] - target[0],
                                          obj.center[1] + reach[1] - target[1]))
                     for obj in carried or []]
            self._frame([self._hand(seat, reach)], extra)

    def place(self, seat: Seat, obj: Placed, *, observation: dict[str, Any] | None = None,
              settle: float = 0.6) -> None:
        """A hand brings ``obj`` from the seat, lays it down and leaves."""
        grip = _grip_point(obj)
        self._travel(seat, grip, self._duration(), inward=True, carried=[obj])
        self.objects[obj.uid] = obj
        hold = max(1, round(0.2 * self.fps))
        for _ in range(hold):
            self._frame([self._hand(seat, grip)])
        self._travel(seat, grip, self._duration() * 0.8, inward=False)
        self.idle(0.1)
        if observation is not None:
            self.observe(observation)
        self.idle(settle)

    def take(self, seat: Seat, uids: list[str], *,
             observations: list[dict[str, Any]] | None = None, settle: float = 0.6) -> None:
        """A hand gathers the objects and carries them off the table."""
        gathered = [self.objects[u] for u in uids if u in self.objects]
        if not gathered:
            return
        centre = (float(np.mean([o.center[0] for o in gathered])),
                  float(np.mean([o.center[1] for o in gathered])))
        self._travel(seat, centre, self._duration(), inward=True)
        for uid in uids:
            self.objects.pop(uid, None)
        stacked = [replace(o, center=centre) for o in gathered]
        self._travel(seat, centre, self._duration() * 0.9, inward=False, carried=stacked)
        self.idle(0.1)
        for observation in observations or []:
            self.observe(observation)
        self.idle(settle)

    def slide(self, obj: Placed, start: Point, seconds: float, *,
              knocks: list[tuple[Placed, Placed]] | None = None,
              observations: list[dict[str, Any]] | None = None, settle: float = 0.5) -> None:
        """A shoved coin slides from ``start`` to its place, decelerating; ``knocks`` are
        (before, after) of coins it moves on the way, which slide over the second half."""
        n = max(2, round(seconds * self.fps))
        knocks = knocks or []
        for uid in [after.uid for _, after in knocks]:
            self.objects.pop(uid, None)
        for i in range(n):
            u = 1 - (1 - (i + 1) / n) ** 2  # friction: fast, then slow
            moving = replace(obj, center=(start[0] + (obj.center[0] - start[0]) * u,
                                          start[1] + (obj.center[1] - start[1]) * u))
            knocked = []
            for before, after in knocks:
                v = max(0.0, (u - 0.5) * 2)
                knocked.append(replace(after, center=(
                    before.center[0] + (after.center[0] - before.center[0]) * v,
                    before.center[1] + (after.center[1] - before.center[1]) * v)))
            self._frame([], [*knocked, moving])
        for _, after in knocks:
            self.objects[after.uid] = after
        self.objects[obj.uid] = obj
        self.idle(0.1)
        for observation in observations or []:
            self.observe(observation)
        self.idle(settle)

    def move(self, seat: Seat, uid: str, to: Point, *,
             observation: dict[str, Any] | None = None, settle: float = 0.5) -> None:
        """A hand picks an object up and sets it down elsewhere."""
        obj = self.objects[uid]
        self._travel(seat, obj.center, self._duration() * 0.8, inward=True)
        del self.objects[uid]
        moved = replace(obj, center=to)
        n = max(2, round(0.5 * self.fps))
        for i in range(n):
            u = ease((i + 1) / n)
            at = (obj.center[0] + (to[0] - obj.center[0]) * u,
                  obj.center[1] + (to[1] - obj.center[1]) * u)
            self._frame([self._hand(seat, at)], [replace(obj, center=at)])
        self.objects[uid] = moved
        self._travel(seat, to, self._duration() * 0.7, inward=False)
        self.idle(0.1)
        if observation is not None:
            self.observe(observation)
        self.idle(settle)

    def declare(self, observation: dict[str, Any]) -> None:
        """A manual input (a button on the dashboard): no picture, just the record."""
        self.observe({**observation, "type": "declare"})
        self.idle(0.3)

    def _duration(self) -> float:
        return float(self.rng.uniform(0.5, 0.8))


def _grip_point(obj: Placed) -> Point:
    """Where the fingertips hold an object: its centre, a little towards its bottom."""
    return obj.center
