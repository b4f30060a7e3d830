"""Hands move, cards don't: a cheap per-frame motion gate and a stable-state detector.

Motion is measured on a small copy of the camera frame (480 columns), so the gate costs
well under a millisecond per frame at 1280 x 720. Video compression leaves faint flicker
after every movement (the encoder refines the picture over a few frames), so a pixel counts
as moving only when its grey level changes by more than ``MOVING_LEVEL`` or one colour
channel by more than ``COLOUR_MOVING_LEVEL``, and a fainter change that lasts only a frame
or two pauses a still run rather than ending it. Once a stable state is taken, a table
that lastingly differs from it (a small coin slid in too faintly to be seen moving) is
taken again.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

Image = npt.NDArray[np.uint8]
SmallFrame = npt.NDArray[np.uint8]

#: Grey-level change of a moving pixel; h264 refinement flicker stays below ~30.
MOVING_LEVEL: Final = 35
#: The change in one colour channel that moves a pixel too (h264 flicker reaches ~45 in a
#: channel; an arm over a blue cloth changes one by 80-110 and its grey by under 20).
COLOUR_MOVING_LEVEL: Final = 60
#: Moving pixels (in the small image) that make a frame "moving": a coin far from the
#: camera is only a few of them, and a still frame has none above MOVING_LEVEL.
MOVING_PIXELS: Final = 3
#: A fainter change counts as motion when this many pixels show it together.
FAINT_LEVEL: Final = 20
FAINT_PIXELS: Final = 12
#: Pixels (small image) differing from the last stable state by more than FAINT_LEVEL
#: that make the table "changed since": a coin far from the camera (shove-piecepack-1003:
#: 9 px across in the small image, 25-30 grey levels off a pale board) is 3-8 of them.
SETTLED_PIXELS: Final = 3
#: Faint motion lasting at most this long (s; 3 frames at 15 fps) pauses a still run
#: instead of ending it: the encoder refining a picture just laid down flickers for up to
#: three frames at a time (at 1280 x 720), a coin sliding slowly changes faintly on frame
#: after frame. 0.1 s (session 23) let such flicker end the still run of a card laid across
#: the view's edge, which must last ARM_PATIENCE_S (shove-piggy-shove-807).
FAINT_PAUSE_S: Final = 0.2
#: How long (s) the table must stay still for a stable state. Hands pause for ~0.2 s when
#: they put something down, so 0.25 s (plus no arm across the image border) is needed:
#: 4 frames at 15 fps, 8 at 30.
STILL_S: Final = 0.25
#: Still time (s) after which a change at the image border is accepted as part of the
#: table (a card laid at the edge of the view), so latency stays under half a second.
ARM_PATIENCE_S: Final = 0.45
#: Still frames at the footage's 15 fps (and the most frames kept for reading identity).
STILL_FRAMES: Final = 4
SMALL_WIDTH: Final = 480
#: A change this close to the image border (small-image pixels) is an arm reaching in.
BORDER_PX: Final = 2


@dataclass(frozen=True)
class _Small:
    """A frame reduced to the small image: its colours, and its grey levels (worked out once
    a frame, though each frame is compared with three others)."""

    colour: SmallFrame
    grey: SmallFrame

    @classmethod
    def of(cls, image: Image) -> _Small:
        small = small_frame(image)
        grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY) if small.ndim == 3 else small
        return cls(small, np.asarray(grey, np.uint8))

    def grey_difference(self, other: _Small) -> SmallFrame:
        return np.asarray(cv2.absdiff(self.grey, other.grey), np.uint8)


def _strongly_changed(a: _Small, b: _Small, grey: SmallFrame) -> npt.NDArray[np.bool_]:
    """Pixels that changed a lot: in brightness (``MOVING_LEVEL``; ``grey``: the grey
    difference), or in one colour channel by ``COLOUR_MOVING_LEVEL`` (a skin-toned arm over
    a blue cloth is nearly as bright as the cloth: in grey it barely shows)."""
    strong = grey > MOVING_LEVEL
    if a.colour.ndim == 3:
        blue, green, red = cv2.split(cv2.absdiff(a.colour, b.colour))
        strong |= cv2.max(cv2.max(blue, green), red) > COLOUR_MOVING_LEVEL
    return strong


def _motion(a: _Small, b: _Small) -> tuple[npt.NDArray[np.bool_], str, SmallFrame]:
    """Pixels that changed, and how: "strong" (a few pixels changed a lot), "faint" (a patch
    changed a little: a coin little darker than the board, far from the camera, or
    compression flicker on a textured table) or "none"; and the grey difference."""
    grey = a.grey_difference(b)
    strong = _strongly_changed(a, b, grey)
    if np.count_nonzero(strong) >= MOVING_PIXELS:
        return strong, "strong", grey
    faint = np.count_nonzero(grey > FAINT_LEVEL) >= FAINT_PIXELS
    # The mask stays the strong pixels: it also traces arms, which faint flicker would skew.
    return strong, "faint" if faint else "none", grey


def small_frame(image: Image, width: int = SMALL_WIDTH) -> SmallFrame:
    """The frame reduced to ``width`` columns, its colours kept."""
    height = max(1, round(image.shape[0] * width / image.shape[1]))
    return np.asarray(cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA),
                      np.uint8)


@dataclass(frozen=True)
class MotionReading:
    """One frame's motion: whether it moves, and whether something other than the last
    stable state reaches the image border (an arm still in view)."""

    moving: bool
    moving_pixels: int
    mask: npt.NDArray[np.bool_]  # moving pixels of the small image
    arm_in_view: bool
    faint: bool = False  # moving by a faint change alone
    #: differs from the last stable state (SETTLED_PIXELS), but not from the frame before
    changed: bool = False


class MotionGate:
    """``update(frame)`` per frame; ``settle()`` when a stable state is taken."""

    def __init__(self) -> None:
        self._previous: _Small | None = None
        self._reference: _Small | None = None  # the last stable state
        self._anchor: _Small | None = None  # the first frame of the current still run
        self._faint_before = False

    def update(self, image: Image) -> MotionReading:
        small = _Small.of(image)
        previous = self._previous if self._previous is not None else small
        self._previous = small
        mask, kind, between = _motion(small, previous)
        if kind != "strong" and self._anchor is not None \
                and self._anchor.grey.shape == small.grey.shape:
            # A card or coin sliding to rest moves little from one frame to the next:
            # compare with the still run's first frame too, so slow motion adds up.
            mask, kind, _ = _motion(small, self._anchor)
        # Faint change is motion only when it goes on: a slide lasts, flicker comes and goes.
        moving = kind == "strong" or (kind == "faint" and self._faint_before)
        self._faint_before = kind != "none"
        if moving or self._anchor is None:
            self._anchor = small
        arm = since = False
        if self._reference is not None and self._reference.grey.shape == small.grey.shape:
            grey = small.grey_difference(self._reference)
            changed = _strongly_changed(small, self._reference, grey)
            b = BORDER_PX
            arm = bool(changed[:b].any() or changed[-b:].any() or changed[:, :b].any()
                       or changed[:, -b:].any())
            since = bool(np.count_nonzero(grey > FAINT_LEVEL) >= SETTLED_PIXELS
                         and np.count_nonzero(between > FAINT_LEVEL) < SETTLED_PIXELS)
        return MotionReading(moving, int(np.count_nonzero(mask)), mask, arm,
                             moving and kind == "faint", since)

    def settle(self) -> None:
        """The current frame is the new stable state: arms are judged against it."""
        self._reference = self._previous


@dataclass(frozen=True)
class StillRun:
    """A run of still frames long enough to be a stable state."""

    start_index: int
    start_t: float


@dataclass
class _Span:
    """Frames in a row: the first one's index and time, and how many."""

    first: tuple[int, float] | None = None
    count: int = 0

    def add(self, index: int, t: float) -> int:
        if self.first is None:
            self.first = (index, t)
        self.count += 1
        return self.count

    def clear(self) -> None:
        self.first, self.count = None, 0

    def run(self) -> StillRun:
        assert self.first is not None
        return StillRun(*self.first)


class StableDetector:
    """Counts still frames; reports a stable state once per still run. Durations are in
    seconds, turned into frames by the frame rate seen in the timestamps."""

    def __init__(self, still_s: float = STILL_S) -> None:
        self.still_s = still_s
        self._still = _Span()  # the current still run
        self._reported = False
        self._last_t: float | None = None
        self._dts: deque[float] = deque(maxlen=9)
        self._faint = 0  # faint moving frames in a row
        self.paused = False  # the last frame paused the still run (it neither counts nor ends it)
        # Still frames since the last pause, once the run has been reported: faint motion
        # after that is looked at again when the table is still.
        self._after_pause = _Span()
        self._paused_since_report = False
        # Still frames in a row, once the run has been reported, that differ from the
        # stable state taken: a change no motion was seen for.
        self._changed = _Span()
        self._restarted = False  # the run was restarted (``restart``): half as long

    def _frames(self, seconds: float) -> int:
        dt = float(np.median(self._dts)) if self._dts else 1.0 / 15.0
        return max(2, math.ceil(seconds / dt - 1e-6))

    def update(self, index: int, t: float, reading: MotionReading) -> StillRun | None:
        if self._last_t is not None and 0.0 < t - self._last_t < 1.0:
            self._dts.append(t - self._last_t)
        self._last_t = t
        self._faint = self._faint + 1 if reading.faint else 0
        self.paused = reading.faint and self._faint <= self._frames(FAINT_PAUSE_S)
        if self.paused:
            self._paused_since_report |= self._reported
            self._after_pause.clear()
            self._changed.clear()
            return None
        if reading.moving:
            self._still.clear()
            self._reported = self._paused_since_report = self._restarted = False
            self._after_pause.clear()
            self._changed.clear()
            return None
        self._still.add(index, t)
        self._after_pause.add(index, t)
        # A still arm is a hand holding something down; but a change at the border that
        # stays (a card laid at the edge of the view) must not block the referee forever.
        needed = self._frames(ARM_PATIENCE_S if reading.arm_in_view else self.still_s)
        if self._restarted:
            needed = max(2, needed // 2)
        if self._still.count >= needed and not self._reported:
            self._reported = True
            self._restarted = False
            self._paused_since_report = False
            return self._still.run()
        if self._paused_since_report and self._after_pause.count >= needed:
            # Faint motion came and went after the run was reported: flicker, or a small
            # coin far from the camera sliding in short faint bursts (at 25 fps and more a
            # frame moves it less). The table is taken again once still after it; a state
            # like the last one adds nothing.
            self._paused_since_report = False
            self._changed.clear()
            return self._after_pause.run()
        if not (self._reported and reading.changed):
            self._changed.clear()
        elif self._changed.add(index, t) >= needed:
            # The table differs from the state taken, lastingly, though nothing was seen
            # moving: a small coin far from the camera slid in with changes too faint
            # between frames. It is taken again (a state like the last one adds nothing).
            run = self._changed.run()
            self._changed.clear()
            return run
        return None

    def restart(self) -> None:
        """The still run just reported was not still after all (a coin still creeping, too
        faintly for the gate): count a new run from the next frame, half as long (the one
        before it was still to the gate; the caller compares across both)."""
        self._still.clear()
        self._reported = self._paused_since_report = False
        self._after_pause.clear()
        self._changed.clear()
        self._restarted = True

    @property
    def still_needed(self) -> int:
        """Still frames a stable state needs at the current frame rate (no arm in view)."""
        return self._frames(self.still_s)

    @property
    def still_for(self) -> int:
        """Frames in the current still run."""
        return self._still.count
