"""Dispute replay: a recording (or a clip with its observations) as a ruling timeline,
frames on demand, and re-adjudication under other settings."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import cv2
import numpy as np

from referee.adjudication import Session
from referee.calibration.errors import CalibrationError
from referee.calibration.model import Calibration, load_calibration
from referee.observations import Setup, parse_line
from referee.pipeline.events import TableEvent, TrackedObject
from referee.rules.registry import rules_for
from referee.web.adjudicate import (
    Change,
    Entry,
    RulingAt,
    apply_correction,
    diff_rulings,
    readjudicate,
)
from referee.web.live import object_json
from referee.web.overlay import board_lines_mm, draw, jpeg
from referee.web.protocol import Image
from referee.web.recorded import RecordedObservationsPipeline, read_observations
from referee.web.recording import players_of, read_log, read_meta, segments
from referee.web.rule_text import rule_text


class ReplayError(ValueError):
    """A recording or clip that cannot be opened for replay."""


class FrameReader:
    """Frames by index from one video or from a recording's segments."""

    def __init__(self, parts: list[tuple[int, Path]]) -> None:
        self._parts = parts
        self._lock = threading.Lock()
        self._open: tuple[int, cv2.VideoCapture] | None = None
        self._next = -1

    def count(self) -> int:
        total = 0
        for start, path in self._parts:
            capture = cv2.VideoCapture(str(path))
            n = int(capture.get(cv2.CAP_PROP_FRAME_COUNT))
            capture.release()
            total = max(total, start + max(n, 0))
        return total

    def get(self, index: int) -> Image | None:
        part = max((p for p in self._parts if p[0] <= index), default=None,
                   key=lambda p: p[0])
        if part is None:
            return None
        start, path = part
        with self._lock:
            if self._open is None or self._open[0] != start:
                if self._open is not None:
                    self._open[1].release()
                self._open = (start, cv2.VideoCapture(str(path)))
                self._next = 0
            capture = self._open[1]
            local = index - start
            if local != self._next:
                capture.set(cv2.CAP_PROP_POS_FRAMES, local)
            ok, image = capture.read()
            self._next = local + 1
        return np.asarray(image, dtype=np.uint8) if ok and image is not None else None


@dataclass
class Dispute:
    id: str
    label: str
    game: str
    players: tuple[str, ...]
    settings: dict[str, Any]
    fps: float
    calibration: Calibration | None
    frames: FrameReader
    entries: tuple[Entry, ...]
    tables: list[tuple[int, tuple[TrackedObject, ...]]]
    rulings: list[RulingAt] = field(default_factory=list)
    frame_count: int = 0

    def objects_at(self, index: int) -> tuple[TrackedObject, ...]:
        current: tuple[TrackedObject, ...] = ()
        for at, objects in self.tables:
            if at > index:
                break
            current = objects
        return current

    def frame_jpeg(self, index: int) -> bytes | None:
        image = self.frames.get(index)
        if image is None:
            return None
        return jpeg(draw(image, self.objects_at(index), self.calibration), 85)

    def timeline(self) -> dict[str, Any]:
        return {
            "id": self.id, "label": self.label, "game": self.game,
            "players": list(self.players), "settings": self.settings, "fps": self.fps,
            "frames": self.frame_count,
            "rulings": [{"n": n, "i": r.index, **r.ruling.to_json()}
                        for n, r in enumerate(self.rulings)],
        }

    def detail(self, n: int) -> dict[str, Any]:
        """One ruling with what it rests on: frames before and after, the observation and
        the table it was made on, its evidence, the action sequence and the rule's text."""
        if not 0 <= n < len(self.rulings):
            raise IndexError(n)
        item = self.rulings[n]
        ruling = item.ruling.to_json()
        cause = next((e for e in reversed(self.entries)
                      if e.index <= item.index and e.observation.t <= item.ruling.t), None)
        earlier = [e.index for e in self.entries if e.index < (cause.index if cause else 0)]
        before = earlier[-1] if earlier else max(0, item.index - round(self.fps))
        observation = cause.observation.model_dump(mode="json", exclude_none=True) \
            if cause else None
        return {
            "n": n, "i": item.index, "ruling": ruling, "before": before,
            "after": min(item.index, max(self.frame_count - 1, 0)),
            "observation": observation,
            "objects": [object_json(o) for o in self.objects_at(item.index)],
            "evidence": ruling.get("evidence"), "actions": ruling.get("actions"),
            "rule_text": rule_text(self.game, str(ruling["kind"]), ruling.get("rule")),
            "settings": _effective_settings(self.game, self.settings),
            "board_lines": [[list(a), list(b)] for a, b in board_lines_mm(self.calibration)],
        }

    def readjudicate(self, settings: Mapping[str, Any]) -> tuple[list[RulingAt], list[Change]]:
        merged = {**self.settings, **settings}
        fresh = readjudicate(self.game, self.players, merged, self.entries)
        return fresh, diff_rulings(self.rulings, fresh)


def _effective_settings(game: str, settings: Mapping[str, Any]) -> dict[str, Any]:
    try:
        effective: dict[str, Any] = rules_for(game).settings(settings).model_dump(mode="json")
        return effective
    except ValueError:
        return dict(settings)


def _calibration(data: Any) -> Calibration | None:
    if not isinstance(data, dict):
        return None
    try:
        return Calibration.model_validate(data)
    except ValueError:
        return None


def open_recording(folder: Path) -> Dispute:
    meta = read_meta(folder)
    if not meta.get("game"):
        raise ReplayError(f"{folder.name} is not a recording")
    entries: list[Entry] = []
    tables: list[tuple[int, tuple[TrackedObject, ...]]] = []
    for line in read_log(folder):
        try:
            entries = _read_line(line, entries, tables)
        except (ValueError, TypeError, KeyError, AttributeError):  # a damaged line
            continue  # (the rest still counts)
    game = str(meta["game"])
    players = players_of(meta)
    stored = meta.get("settings")
    settings: dict[str, Any] = dict(stored) if isinstance(stored, dict) else {}
    reader = FrameReader(segments(folder))
    dispute = Dispute(
        id=folder.name, label=f"recording {folder.name}{_mode_of(meta)}", game=game,
        players=players,
        settings=settings, fps=_fps(meta.get("fps")),
        calibration=_calibration(meta.get("calibration")), frames=reader,
        entries=tuple(entries), tables=tables)
    dispute.rulings = readjudicate(game, players, settings, dispute.entries)
    last = max([e.index for e in entries] + [t[0] for t in tables], default=0)
    dispute.frame_count = max(reader.count(), last + 1)
    return dispute


def _mode_of(meta: dict[str, Any]) -> str:
    """How the recorded session was refereed, as the live view named it."""
    mode = meta.get("mode")
    return {"vision": " (camera pipeline)",
            "recorded": " (replaying recorded observations)"}.get(str(mode), "")


def _fps(value: Any) -> float:
    try:
        fps = float(value)
    except (TypeError, ValueError):
        return 15.0
    return fps if 1.0 <= fps <= 240.0 else 15.0


def _read_line(line: dict[str, Any], entries: list[Entry],
               tables: list[tuple[int, tuple[TrackedObject, ...]]]) -> list[Entry]:
    """One log line taken into the entries (returned, perhaps corrected) and tables."""
    index = int(line["i"])
    kind = line.get("kind")
    if kind == "observation":
        item = parse_line(json.dumps(line.get("observation", {})))  # ValueError if damaged
        if not isinstance(item, Setup):
            origin: Literal["camera", "manual"] = \
                "manual" if line.get("origin") == "manual" else "camera"
            entries.append(Entry(index, item, origin))
    elif kind == "correction":
        corners = [tuple(p) for p in line.get("corners", [])]
        entries = list(apply_correction(entries, corners, str(line.get("old")),
                                        str(line.get("new"))))
    elif kind == "table":
        tables.append((index, tuple(_tracked(o) for o in line.get("objects", []))))
    return entries


def _tracked(data: dict[str, Any]) -> TrackedObject:
    return TrackedObject(str(data.get("uid")), data.get("kind", "card"), str(data.get("label")),
                         tuple((float(x), float(y)) for x, y in data.get("outline_mm", [])),
                         tuple((float(x), float(y)) for x, y in data.get("outline_px", [])))


def open_clip(folder: Path, clip_id: str, video: Path, observations: Path,
              calibration_path: Path | None, game: str | None = None) -> Dispute:
    """A video with its recorded observations (a sample clip), replayed without vision."""
    setup, observed = read_observations(observations)
    chosen = game or (setup.game if setup else None)
    if chosen is None:
        raise ReplayError("the observations name no game")
    calibration: Calibration | None = None
    if calibration_path is not None:
        try:
            calibration = load_calibration(calibration_path)
        except CalibrationError as error:
            raise ReplayError(str(error)) from None
    reader = FrameReader([(0, video)])
    capture = cv2.VideoCapture(str(video))
    fps = capture.get(cv2.CAP_PROP_FPS) or 15.0
    capture.release()
    count = reader.count()
    session = Session.start(chosen, setup.players if setup else None,
                            setup.settings if setup else {})
    pitch = calibration.board.pitch_mm if calibration and calibration.board else 30.0
    pipeline = RecordedObservationsPipeline(session, observed,
                                            calibration.plane if calibration else None, pitch)
    tables: list[tuple[int, tuple[TrackedObject, ...]]] = []
    for index in range(max(count, 1)):
        for event in pipeline.process(index, index / fps, None):
            if isinstance(event, TableEvent):
                tables.append((index, event.objects))
    entries = pipeline.entries
    dispute = Dispute(
        id=clip_id, label=f"{folder.name} clip (replaying recorded observations)", game=chosen,
        players=session.players, settings=dict(setup.settings if setup else {}), fps=fps,
        calibration=calibration, frames=reader, entries=entries, tables=tables)
    dispute.rulings = readjudicate(chosen, session.players, dispute.settings, entries)
    dispute.frame_count = count
    return dispute
