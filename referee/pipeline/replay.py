"""Recorded footage through the pipeline: frames from a video file, manual inputs from an
observation file, events out in time order."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from referee.observations import (
    Declare,
    Observation,
    ObservationError,
    parse_line,
    read_observation_file,
)
from referee.pipeline.events import Event, StatusEvent
from referee.pipeline.runner import RefereePipeline

Image = npt.NDArray[np.uint8]
#: Unreadable frames each given their own warning; more are counted in one at the end.
WARNED_FRAMES: Final = 3
#: This long (s of video) of unreadable frames in a row is taken as the end of what can be
#: read, whatever frame count the file's header gives (a damaged header can claim millions).
LOST_AFTER_S: Final = 20.0


class VideoError(ValueError):
    """A video that cannot be replayed at all."""


@dataclass(frozen=True)
class VideoInfo:
    fps: float
    frames: int  # as the container says (0 when unknown)
    size: tuple[int, int]


def probe_video(path: Path) -> VideoInfo:
    """Open the video and read its first frame, or raise VideoError."""
    if not path.is_file():
        raise VideoError(f"no such video: {path}")
    capture = cv2.VideoCapture(str(path))
    try:
        if not capture.isOpened():
            raise VideoError(f"cannot open {path} as a video (corrupt or not a video file)")
        ok, frame = capture.read()
        if not ok or frame is None:
            raise VideoError(f"{path} has no readable frames (corrupt or truncated video)")
        fps = float(capture.get(cv2.CAP_PROP_FPS)) or 15.0
        count = int(capture.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
        return VideoInfo(fps if 1 <= fps <= 240 else 15.0, max(0, count),
                         (int(frame.shape[1]), int(frame.shape[0])))
    finally:
        capture.release()


def read_frames(path: Path, info: VideoInfo) -> Iterator[tuple[int, float, Image | None]]:
    """(index, t, frame) per frame; frame None for one that could not be decoded (the
    index still advances, so times stay true). Reading goes on past bad frames to the frame
    count the container gives (the decoder picks up again at the next good frame), but
    ``LOST_AFTER_S`` of them in a row end it; without a count it ends at the first frame
    that cannot be read. Bad frames are given only when a good one follows them: the
    failed reads past the real end of a file whose header claims more are not frames."""
    capture = cv2.VideoCapture(str(path))
    index = 0
    pending = 0  # unreadable frames in a row, given once a readable one follows
    lost_after = max(1, round(LOST_AFTER_S * info.fps))
    try:
        while True:
            ok, frame = capture.read()
            if not ok or frame is None:
                pending += 1
                if info.frames and index + pending <= info.frames and pending < lost_after:
                    continue
                return
            for bad in range(index, index + pending):
                yield bad, bad / info.fps, None
            index += pending
            pending = 0
            yield index, index / info.fps, np.asarray(frame, dtype=np.uint8)
            index += 1
    finally:
        capture.release()


def read_manual(path: Path) -> list[Observation]:
    """Manual inputs (declare lines; a setup line is skipped), from a file of observation
    lines or from a dashboard recording (its folder or its ``log.jsonl``, whose declarations
    are taken). Raises ObservationError."""
    recorded = recording_declarations(path)
    if recorded is not None:
        return recorded
    _, observations = read_observation_file(path)
    for item in observations:
        if not isinstance(item, Declare):
            raise ObservationError(f"{path}: only declare lines are manual inputs, "
                                   f"got {item.type!r} at t={item.t:g}")
    return list(observations)


def replay(path: Path, info: VideoInfo, pipeline: RefereePipeline,
           manual: Sequence[Observation] = (),
           on_frame: Callable[[int], None] | None = None) -> Iterator[Event]:
    """Every event of the replay, in time order."""
    for observation in sorted(manual, key=lambda o: o.t):
        yield from pipeline.manual(observation)
    bad, first_bad, last_bad = 0, 0.0, 0.0
    last_t, last_index = 0.0, -1
    for index, t, frame in read_frames(path, info):
        last_t, last_index = t, index
        if on_frame is not None:
            on_frame(index)
        if frame is None or frame.shape[1::-1] != info.size:
            bad += 1
            first_bad, last_bad = (first_bad if bad > 1 else t), t
            if bad <= WARNED_FRAMES:
                yield StatusEvent(index, t, "warning",
                                  f"Frame {index} (t={t:.2f} s) could not be read; skipped.")
            continue
        yield from pipeline.process(index, t, frame)
    if bad > WARNED_FRAMES:
        yield StatusEvent(-1, last_t, "warning",
                          f"{bad} frames in all could not be read (between "
                          f"t={first_bad:.2f} s and t={last_bad:.2f} s); they were skipped.")
    if info.frames and last_index + 1 < info.frames:
        yield StatusEvent(-1, last_t, "warning",
                          f"Reading stopped at frame {last_index + 1} of the {info.frames} the "
                          "file says it has: the rest could not be read.")
    yield from pipeline.finish(last_t)


def recording_declarations(path: Path) -> list[Observation] | None:
    """The declarations a dashboard recording holds (folder or ``log.jsonl``: lines
    ``{"i", "t", "kind": "observation", "observation": {...}}``), or None when ``path`` is
    not a recording's log."""
    log = path / "log.jsonl" if path.is_dir() else path
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    try:
        head = json.loads(next((line for line in lines if line.strip()), ""))
    except (ValueError, RecursionError):
        return None
    if not (isinstance(head, dict) and "kind" in head and "i" in head):
        return None
    out: list[Observation] = []
    for number, line in enumerate(lines, start=1):
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):
            continue  # a line cut short by a kill
        if not isinstance(entry, dict) or entry.get("kind") != "observation":
            continue
        body = entry.get("observation")
        if not isinstance(body, dict) or body.get("type") != "declare":
            continue
        try:
            item = parse_line(json.dumps(body))
        except ObservationError as error:
            raise ObservationError(f"{log}: line {number}: {error}") from None
        if isinstance(item, Declare):
            out.append(item)
    return out
