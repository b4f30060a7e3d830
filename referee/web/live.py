"""The live session: a thread reads the source, drives the pipeline, records, publishes.

Only the runner thread touches the pipeline; manual inputs are queued to it. Browsers read
the hub and the latest frame, never the other way round, so they cannot slow the pipeline.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

import cv2
import numpy as np

from referee.calibration.model import Calibration
from referee.calibration.sources import is_camera_index
from referee.observations import CardPlaced, Declare, dump_observation
from referee.pipeline.events import (
    Event,
    FrameEvent,
    ObservationEvent,
    RulingEvent,
    StatusEvent,
    TableEvent,
    TrackedObject,
)
from referee.pipeline.replay import LOST_AFTER_S, WARNED_FRAMES
from referee.web.adjudicate import Entry, RulingAt, apply_correction, diff_rulings, readjudicate
from referee.web.hub import Hub
from referee.web.overlay import board_lines_mm, draw, jpeg
from referee.web.protocol import FramePipeline, Image
from referee.web.recording import Recorder

#: Progress ("frame") messages a second, at most: the page shows time and frame rate, and
#: each message goes to every open page.
FRAME_MESSAGES_PER_S: Final = 5.0


@dataclass(frozen=True)
class LiveConfig:
    game: str
    players: tuple[str, ...]
    settings: dict[str, Any]
    source: str  # a video path or a camera index
    source_label: str
    mode: str  # "recorded" or "vision"
    mode_label: str
    calibration: Calibration | None
    speed: float = 1.0  # 1: real time; 0: as fast as frames can be read
    record: bool = True
    loop_video: bool = False


def object_json(obj: TrackedObject) -> dict[str, Any]:
    return {"uid": obj.uid, "kind": obj.kind, "label": obj.label,
            "outline_mm": [[round(x, 2), round(y, 2)] for x, y in obj.outline_mm],
            "outline_px": [[round(x, 1), round(y, 1)] for x, y in obj.outline_px]}


#: The most camera images a second the live view is sent, whatever the pipeline's rate.
PREVIEW_FPS: Final = 10.0
#: How long (s) a camera that stopped sending frames is waited for before the session ends.
CAMERA_PATIENCE_S: Final = 5.0


@dataclass
class _Latest:
    index: int = -1
    t: float = 0.0
    image: Image | None = None
    jpeg_index: int = -2
    jpeg: bytes = b""
    jpeg_made: float = -1.0  # time.monotonic() when ``jpeg`` was encoded


@dataclass
class LiveSession:
    config: LiveConfig
    hub: Hub
    pipeline: FramePipeline
    recordings: Path | None
    running: bool = field(default=False, init=False)
    finished: bool = field(default=False, init=False)
    frames: int = field(default=0, init=False)
    fps: float = field(default=0.0, init=False)
    objects: dict[str, TrackedObject] = field(default_factory=dict, init=False)
    entries: list[Entry] = field(default_factory=list, init=False)
    rulings: list[RulingAt] = field(default_factory=list, init=False)
    recording_id: str | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._inbox: queue.Queue[Callable[[], None]] = queue.Queue()
        self._lock = threading.Lock()
        self._latest = _Latest()
        self._thread = threading.Thread(target=self._run, name="referee-live", daemon=True)
        self._recorder: Recorder | None = None
        self._t = 0.0
        self._index = 0
        self._last_frame_message = -1.0  # time.monotonic() of the last progress message

    # -- control (any thread)

    def start(self) -> None:
        capture = self._open()
        calibration = self.config.calibration
        size = (int(capture.get(cv2.CAP_PROP_FRAME_WIDTH)),
                int(capture.get(cv2.CAP_PROP_FRAME_HEIGHT)))
        if self.config.mode == "vision" and calibration is not None and min(size) > 0 \
                and tuple(calibration.image_size) != size:
            capture.release()
            width, height = calibration.image_size
            raise ValueError(f"the calibration is for {width}x{height} frames, "
                             f"{self.config.source_label} gives {size[0]}x{size[1]}")
        self.running = True
        self._capture = capture
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def declare(self, player: str | None, what: str, value: Any) -> None:
        def run() -> None:
            observation = Declare(type="declare", t=self._t, player=player, what=what,
                                  value=value)
            self._handle(self.pipeline.manual(observation), manual=True)
        self._inbox.put(run)

    def correct(self, uid: str, card: str) -> None:
        """Set a misread card's identity (validated by the caller) and re-adjudicate."""
        def run() -> None:
            obj = self.objects.get(uid)
            if obj is None or obj.kind != "card" or len(obj.outline_mm) != 4:
                self._status("warning", f"There is no card {uid} on the table to correct.")
                return
            corners = tuple(obj.outline_mm)
            observation = CardPlaced(type="card_placed", t=self._t, card=card,
                                     corners=corners)
            events = self.pipeline.manual(observation)
            self.entries = list(apply_correction(self.entries, corners, obj.label, card))
            if self._recorder is not None:
                self._recorder.log(self._index, self._t, "correction",
                                   {"uid": uid, "old": obj.label, "new": card,
                                    "corners": [list(p) for p in corners]})
            self._handle([e for e in events if not isinstance(e, RulingEvent)], manual=True)
            self._readjudicate()
        self._inbox.put(run)

    # -- reading (any thread)

    def frame_jpeg(self) -> tuple[int, bytes] | None:
        with self._lock:
            latest = self._latest
            if latest.image is None:
                return None
            # One encode per frame, and at most PREVIEW_FPS of them however many pages ask:
            # drawing and encoding share the interpreter with the pipeline.
            fresh = time.monotonic() - latest.jpeg_made < 1.0 / PREVIEW_FPS
            if latest.jpeg and (latest.jpeg_index == latest.index or fresh):
                return latest.jpeg_index, latest.jpeg
            image, index, objects = latest.image, latest.index, list(self.objects.values())
        data = jpeg(draw(image, objects, self.config.calibration), 75)
        with self._lock:
            if self._latest.index == index:
                self._latest.jpeg_index, self._latest.jpeg = index, data
                self._latest.jpeg_made = time.monotonic()
        return index, data

    def describe(self) -> dict[str, Any]:
        calibration = self.config.calibration
        return {
            "game": self.config.game, "players": list(self.config.players),
            "settings": self.config.settings, "source": self.config.source_label,
            "mode": self.config.mode, "mode_label": self.config.mode_label,
            "recording": self.recording_id,
            "board": calibration.board.kind if calibration and calibration.board else None,
            "board_lines": [[list(a), list(b)] for a, b in board_lines_mm(calibration)],
        }

    def snapshot(self) -> dict[str, Any]:
        return {
            "seq": self.hub.last_seq, "session": self.describe(), "running": self.running,
            "finished": self.finished, "frames": self.frames, "fps": round(self.fps, 2),
            "t": round(self._t, 3),
            "objects": [object_json(o) for o in self.objects.values()],
            "rulings": [{"i": r.index, **r.ruling.to_json()} for r in self.rulings],
        }

    # -- the runner thread

    def _open(self) -> cv2.VideoCapture:
        source = self.config.source
        capture = cv2.VideoCapture(int(source) if is_camera_index(source) else source)
        if not capture.isOpened():
            raise ValueError(f"cannot open the source {self.config.source_label}")
        return capture

    def _run(self) -> None:
        capture = self._capture
        fps = capture.get(cv2.CAP_PROP_FPS) or 15.0
        fps = fps if 1.0 <= fps <= 240.0 else 15.0
        self.hub.publish("session", self.describe())
        started = time.monotonic()
        index = 0
        count = int(capture.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
        camera = is_camera_index(self.config.source)
        calibration = self.config.calibration
        # The camera pipeline maps frames of the calibrated size only (replaying recorded
        # observations uses the calibration for the overlay alone).
        size = tuple(calibration.image_size) \
            if calibration is not None and self.config.mode == "vision" else None
        skipped = run = 0
        try:
            while not self._stop.is_set():
                self._drain()
                ok, image = capture.read()
                wrong_size = ok and image is not None and size is not None \
                    and image.shape[1::-1] != size
                if camera and wrong_size:
                    self._status("error", f"{self.config.source_label} now sends "
                                 f"{image.shape[1]}x{image.shape[0]} frames but the "
                                 "calibration is for another size: the session has ended "
                                 "(calibrate again); what was recorded is kept.")
                    break
                if not ok or image is None or wrong_size:
                    if self.config.loop_video and index > 0:
                        capture.set(cv2.CAP_PROP_POS_FRAMES, 0)
                        continue
                    run += 1
                    if wrong_size or (not camera and index < count
                                      and run < LOST_AFTER_S * fps):
                        skipped += 1
                        if skipped <= WARNED_FRAMES:
                            why = "is not the calibrated size" if wrong_size \
                                else "could not be read"
                            self._status("warning", f"Frame {index} (t={index / fps:.2f} s) "
                                         f"{why}; skipped.")
                        index += 1
                        continue
                    back = self._camera_back(capture) if camera else None
                    if back is not None:
                        capture = back
                        continue
                    break
                run = 0
                frame = np.asarray(image, dtype=np.uint8)
                t = index / fps
                if self.config.speed > 0:
                    delay = started + t / self.config.speed - time.monotonic()
                    if delay > 0:
                        self._stop.wait(delay)
                if self._recorder is None and self.config.record and self.recordings:
                    self._start_recording(fps, frame)
                if self._recorder is not None:
                    self._recorder.frame(index, frame)
                self._t, self._index = t, index
                events = self.pipeline.process(index, t, frame)
                with self._lock:
                    self._latest.index, self._latest.t, self._latest.image = index, t, frame
                self._handle(events)
                index += 1
                self.frames = index
                self.fps = index / max(time.monotonic() - started, 1e-6)
            if not self._stop.is_set():
                self._handle(self.pipeline.finish(self._t))
                self.finished = True
                self.hub.publish("ended", {"frames": index, "fps": round(self.fps, 2)})
                while not self._stop.is_set():  # manual inputs and corrections still work
                    self._drain(wait=0.2)
        except Exception as error:  # the page must hear of it; the server keeps serving
            self._status("error", f"The referee stopped: {type(error).__name__}: {error}.")
        finally:
            capture.release()  # (again, for a camera that did not come back: harmless)
            self.running = False
            if self._recorder is not None:
                self._recorder.close()

    def _camera_back(self, capture: cv2.VideoCapture) -> cv2.VideoCapture | None:
        """A camera that stopped sending frames (unplugged, asleep): opened again for up to
        ``CAMERA_PATIENCE_S``; None, with the page told, when it does not come back. What
        was recorded stays recorded either way."""
        self._status("warning", "The camera stopped sending frames; waiting for it.")
        capture.release()
        deadline = time.monotonic() + CAMERA_PATIENCE_S
        while not self._stop.is_set() and time.monotonic() < deadline:
            self._drain(wait=0.5)
            again = cv2.VideoCapture(int(self.config.source))
            ok, _ = again.read() if again.isOpened() else (False, None)
            if ok:
                self._status("info", "The camera is back.")
                return again  # (a frame of another size then ends the session, said why)
            again.release()
        if not self._stop.is_set():  # (stopped by the page: nothing more to say)
            self._status("error", f"The camera ({self.config.source_label}) did not come "
                         "back: the session has ended, and what was recorded is kept.")
        return None

    def _start_recording(self, fps: float, frame: Image) -> None:
        assert self.recordings is not None
        calibration = self.config.calibration
        meta = {"game": self.config.game, "players": list(self.config.players),
                "settings": self.config.settings, "source": self.config.source_label,
                "mode": self.config.mode,
                "calibration": calibration.model_dump(mode="json") if calibration else None}
        height, width = frame.shape[:2]
        self._recorder = Recorder(self.recordings, meta, fps, (width, height))
        self.recording_id = self._recorder.id
        self.hub.publish("recording", {"id": self.recording_id})

    def _drain(self, wait: float = 0.0) -> None:
        try:
            job = self._inbox.get(timeout=wait) if wait else self._inbox.get_nowait()
        except queue.Empty:
            return
        job()
        while True:
            try:
                self._inbox.get_nowait()()
            except queue.Empty:
                return

    def _status(self, level: str, message: str) -> None:
        self.hub.publish("status", {"i": self._index, "t": round(self._t, 3), "level": level,
                                    "message": message})

    def _handle(self, events: list[Event], manual: bool = False) -> None:
        recorder = self._recorder
        for event in events:
            if isinstance(event, FrameEvent):
                now = time.monotonic()
                if now - self._last_frame_message >= 1.0 / FRAME_MESSAGES_PER_S:
                    self._last_frame_message = now
                    self.hub.publish("frame", {"i": event.index, "t": round(event.t, 3),
                                               "moving": event.moving,
                                               "fps": round(self.fps, 2)})
            elif isinstance(event, TableEvent):
                self.objects = {o.uid: o for o in event.objects}
                data = {"i": event.index, "t": round(event.t, 3),
                        "objects": [object_json(o) for o in event.objects]}
                self.hub.publish("table", data)
                if recorder:
                    recorder.log(event.index, event.t, "table", {"objects": data["objects"]})
            elif isinstance(event, ObservationEvent):
                # A declaration is a manual input even when the pipeline rules it later.
                origin: Literal["camera", "manual"] = "manual" if manual or isinstance(
                    event.observation, Declare) else "camera"
                self.entries.append(Entry(event.index, event.observation, origin))
                body = dump_observation(event.observation)
                self.hub.publish("observation", {"i": event.index, "origin": origin, **body})
                if recorder:
                    recorder.log(event.index, event.t, "observation",
                                 {"origin": origin, "observation": body})
            elif isinstance(event, RulingEvent):
                self.rulings.append(RulingAt(event.index, event.ruling))
                body = event.ruling.to_json()
                self.hub.publish("ruling", {"i": event.index, **body})
                if recorder:
                    recorder.log(event.index, event.t, "ruling", {"ruling": body})
            elif isinstance(event, StatusEvent):
                self.hub.publish("status", {"i": event.index, "t": round(event.t, 3),
                                            "level": event.level, "message": event.message})
                if recorder:
                    recorder.log(event.index, event.t, "status",
                                 {"level": event.level, "message": event.message})

    def _readjudicate(self) -> None:
        config = self.config
        try:
            fresh = readjudicate(config.game, config.players, config.settings, self.entries,
                                 finish=self.finished)
        except ValueError as error:
            self._status("error", f"Re-adjudication failed: {error}.")
            return
        changes = diff_rulings(self.rulings, fresh)
        self.rulings = fresh
        self.hub.publish("rulings", {
            "rulings": [{"i": r.index, **r.ruling.to_json()} for r in fresh],
            "changed": len(changes)})
