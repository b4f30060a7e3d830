"""Session recordings: short video segments plus a JSON lines log flushed line by line.

A folder per session under the recordings folder:
  session.json      who plays what, settings, source, calibration (written first, whole)
  log.jsonl         one line per observation, ruling, table state, status; each with the
                    frame index ``i`` and ``t``; flushed as written
  video/seg-NNNNNN.mp4  one-second segments, named by their first frame index
  closed.json       written when the session ends cleanly; without it the recording is
                    recoverable (the server was killed): everything but the segment being
                    written is there.
"""

from __future__ import annotations

import json
import math
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

import cv2

from referee.calibration.model import write_atomically
from referee.web.protocol import Image

RECORDING_ID: Final = re.compile(r"^[0-9]{8}-[0-9]{6}-[a-z-]+(-[0-9]+)?$")


@dataclass(frozen=True)
class RecordingInfo:
    id: str
    game: str
    players: tuple[str, ...]
    started: str
    closed: bool
    frames: int
    rulings: int


class Recorder:
    """Writes one session. Call ``frame`` for every frame, ``log`` for every event."""

    def __init__(self, root: Path, meta: dict[str, Any], fps: float,
                 size: tuple[int, int], record_video: bool = True) -> None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        game = str(meta.get("game", "game"))
        folder = root / f"{stamp}-{game}"
        serial = 1
        while folder.exists():
            serial += 1
            folder = root / f"{stamp}-{game}-{serial}"
        (folder / "video").mkdir(parents=True)
        self.folder = folder
        self.id = folder.name
        self._fps = fps if fps > 0 else 15.0
        self._segment_frames = max(1, round(self._fps))
        self._size = size
        self._video = record_video
        self._writer: cv2.VideoWriter | None = None
        self._frames = 0
        write_atomically(folder / "session.json", (json.dumps(
            {**meta, "fps": self._fps, "size": list(size),
             "segment_frames": self._segment_frames, "started": stamp}, indent=1)
            + "\n").encode("utf-8"))
        self._log: IO[str] = (folder / "log.jsonl").open("a", encoding="utf-8")

    def log(self, index: int, t: float, kind: str, data: dict[str, Any]) -> None:
        self._log.write(json.dumps({"i": index, "t": round(t, 4), "kind": kind, **data}) + "\n")
        self._log.flush()

    def frame(self, index: int, image: Image) -> None:
        """Write frame ``index``. A segment is named by the index of its first frame, and
        frames skipped (unreadable) start a new one, so a frame's place in its segment is
        always its index minus the segment's."""
        if not self._video:
            return
        if self._writer is None or index % self._segment_frames == 0 \
                or index != self._frames:
            self._close_segment()
            path = self.folder / "video" / f"seg-{index:06d}.mp4"
            height, width = image.shape[:2]
            self._writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"mp4v"),
                                           self._fps, (width, height))
        self._writer.write(image)
        self._frames = index + 1

    def _close_segment(self) -> None:
        if self._writer is not None:
            self._writer.release()
            self._writer = None

    def close(self) -> None:
        self._close_segment()
        self._log.close()
        write_atomically(self.folder / "closed.json",
                         json.dumps({"frames": self._frames}).encode("utf-8"))


def read_log(folder: Path) -> list[dict[str, Any]]:
    """The log's lines; a last line cut short by a kill (or any line that is not a log
    entry: no whole frame index, no time) is skipped."""
    out: list[dict[str, Any]] = []
    path = folder / "log.jsonl"
    if not path.is_file():
        return out
    for text in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            item = json.loads(text)
        except (ValueError, RecursionError):  # cut short, or not a line we wrote
            continue
        if isinstance(item, dict) and _entry(item):
            out.append(item)
    return out


def _entry(item: dict[str, Any]) -> bool:
    index, t = item.get("i"), item.get("t")
    return isinstance(index, int) and not isinstance(index, bool) \
        and isinstance(t, int | float) and not isinstance(t, bool) and math.isfinite(t)


def read_meta(folder: Path) -> dict[str, Any]:
    try:
        meta = json.loads((folder / "session.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # unreadable, not UTF-8, not JSON
        return {}
    return meta if isinstance(meta, dict) else {}


def players_of(meta: dict[str, Any]) -> tuple[str, ...]:
    players = meta.get("players")
    return tuple(str(p) for p in players) if isinstance(players, list) else ()


def segments(folder: Path) -> list[tuple[int, Path]]:
    """(first frame index, file) of each video segment, in order."""
    out = []
    for path in sorted((folder / "video").glob("seg-*.mp4")):
        try:
            out.append((int(path.stem.removeprefix("seg-")), path))
        except ValueError:
            continue
    return out


def list_recordings(root: Path) -> list[RecordingInfo]:
    if not root.is_dir():
        return []
    out = []
    for folder in sorted(root.iterdir(), reverse=True):
        if not (folder.is_dir() and RECORDING_ID.match(folder.name)):
            continue
        meta = read_meta(folder)
        if not meta:
            continue
        log = read_log(folder)
        frames = max((int(item.get("i", 0)) for item in log), default=-1) + 1
        out.append(RecordingInfo(
            id=folder.name, game=str(meta.get("game", "")),
            players=players_of(meta),
            started=str(meta.get("started", "")), closed=(folder / "closed.json").is_file(),
            frames=frames, rulings=sum(1 for item in log if item.get("kind") == "ruling")))
    return out


def recover(folder: Path) -> int:
    """Make a killed session's recording whole: drop a segment OpenCV cannot open, mark it
    closed. Returns the number of readable segments."""
    readable = 0
    for _, path in segments(folder):
        capture = cv2.VideoCapture(str(path))
        ok = capture.isOpened() and capture.read()[0]
        capture.release()
        if ok:
            readable += 1
        else:
            path.unlink(missing_ok=True)
    if not (folder / "closed.json").is_file():  # a closed recording keeps its own record
        write_atomically(folder / "closed.json",
                         json.dumps({"recovered": True, "segments": readable}).encode("utf-8"))
    return readable
