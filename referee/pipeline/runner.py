"""The running referee: ``process`` each frame, ``manual`` inputs, ``finish`` at the end.

Vision observations and manual inputs (dashboard declares) reach the rules engine in time
order. A manual input waits while the tracker may still report something that happened
before it (a still run not yet long enough to be a stable state, or a board state held
back), so a declare never overtakes the play it follows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from referee.adjudication import Session
from referee.adjudication.corrections import SAME_PLACE_MM, centre, relabel_card
from referee.calibration.drift import DriftChecker
from referee.calibration.layouts import CardTableLayout, layout_for_game
from referee.calibration.model import Calibration
from referee.observations import BoardState, CardPlaced, Observation
from referee.pipeline.events import (
    Event,
    FrameEvent,
    ObservationEvent,
    RulingEvent,
    StatusEvent,
    TableEvent,
)
from referee.rulings import Ruling
from referee.tracking.cards import CardReader
from referee.tracking.tracker import TableTracker

Image = npt.NDArray[np.uint8]

#: Frames of stillness after which a board state the rules cannot explain is ruled on
#: anyway; before that it may be the middle of a push (one piece moved, the next not yet).
BOARD_PATIENCE_S: Final = 0.6
#: How often (s of video) the camera is checked for drift, on still frames only.
DRIFT_INTERVAL_S: Final = 3.0
DRIFT_FAILURES: Final = 3
#: Cards that measure this far from the calibration's card size (mm, width or length; the
#: change a card makes measures 0-3 mm over it, its shadow), or whose width over length is
#: this far from its (0.01 at most on 15 clips of 63 x 88 cards; bridge cards 0.07), are
#: another deck's: said once, when the median of the cards measured is off and so are two
#: thirds of them (one card laid beside something is no evidence).
CARD_SIZE_OFF_MM: Final = 4.0
CARD_ASPECT_OFF: Final = 0.04
CARD_SIZE_OFF_SHARE: Final = 2 / 3


class CalibrationMismatch(ValueError):
    """A calibration that cannot be used for this game or this footage."""


_FRAMES: Final = {"shove-piecepack": ("piecepack",), "shove": ("grid",)}


def check_calibration(game: str, calibration: Calibration,
                      image_size: tuple[int, int] | None = None) -> None:
    """Raise CalibrationMismatch when the calibration is for another board or camera."""
    wanted = _FRAMES.get(game, ("table", "rectangle"))
    if calibration.frame not in wanted:
        raise CalibrationMismatch(
            f"the calibration is in the {calibration.frame!r} frame, but {game} needs a "
            f"{' or '.join(repr(w) for w in wanted)} calibration (calibrate with --game {game})")
    if calibration.game and calibration.game != game and calibration.board is not None:
        raise CalibrationMismatch(f"the calibration is for {calibration.game}, not {game}")
    if game in _FRAMES and calibration.board is None:
        raise CalibrationMismatch(f"the calibration has no board: calibrate with --game {game}")
    if image_size is not None and tuple(calibration.image_size) != tuple(image_size):
        w, h = calibration.image_size
        raise CalibrationMismatch(f"the calibration is for {w}x{h} frames, the video is "
                                  f"{image_size[0]}x{image_size[1]}")


def board_settings(game: str, calibration: Calibration,
                   settings: Mapping[str, Any]) -> dict[str, Any]:
    """The measured board goes to the engine unless the user set it: Shove piecepack's line
    pitch (``tile_mm``) and a Short Shove board's tiles per side."""
    merged = dict(settings)
    board = calibration.board
    if game == "shove-piecepack" and board is not None:
        merged.setdefault("tile_mm", round(board.pitch_mm, 3))
        if board.tiles_per_side is not None and board.tiles_per_side != 9:
            merged.setdefault("tiles_per_side", board.tiles_per_side)
    return merged


@dataclass(frozen=True)
class _Pending:
    observation: Observation
    index: int


class RefereePipeline:
    """Frames -> tracker -> observations -> rules engine -> rulings, as typed events."""

    def __init__(self, game: str, calibration: Calibration, *,
                 players: Sequence[str] | None = None,
                 settings: Mapping[str, Any] | None = None,
                 reader: CardReader, drift: bool = True) -> None:
        check_calibration(game, calibration)
        self.game = game
        self.session = Session.start(game, players, board_settings(game, calibration,
                                                                   settings or {}))
        self.tracker = TableTracker(game, calibration, self.session.players, reader)
        self._manual: list[Observation] = []
        self._finished = False  # the source ended: manual inputs are ruled at once
        self._log: list[Observation] = []  # what the rules engine was told, for corrections
        self._held_board: _Pending | None = None
        self._paused = False
        self._drift = self._drift_checker(game, calibration) if drift else None
        self._startup: list[StatusEvent] = []
        if drift and self._drift is None:
            self._startup.append(StatusEvent(0, 0.0, "info", "The calibration records no "
                                             "markers or board, so camera drift is not checked."))
        self._last_drift_t: float | None = None
        self._drift_baseline = False
        self._drift_failures = 0
        self._size_told = False  # the cards measured another size than the calibration's

    @staticmethod
    def _drift_checker(game: str, calibration: Calibration) -> DriftChecker | None:
        layout = layout_for_game(game)
        board_layout = None if isinstance(layout, CardTableLayout) else layout
        if not calibration.markers and (calibration.board is None or board_layout is None):
            return None
        return DriftChecker(calibration, layout=board_layout, interval_s=DRIFT_INTERVAL_S)

    # --- the interface ---------------------------------------------------------------

    def process(self, index: int, t: float, image: Image) -> list[Event]:
        events: list[Event] = [*self._startup]
        self._startup = []
        step = self.tracker.update(index, t, image)
        events.append(FrameEvent(index, t, step.moving))
        if step.stable:
            events += self._check_card_size(index, t)
        if not step.moving and step.still_frames >= 1:
            events += self._check_drift(index, t, image)
        if step.moving and self._held_board is not None:
            self._held_board = None  # it was the middle of an action, not a position
        if self._paused:
            return events
        if step.stable:
            events.append(TableEvent(index, t, step.objects))
            events += [RulingEvent(index, r.t, r) for r in step.impossible]
            for observation in step.observations:
                events += self._vision(index, observation)
        if self._held_board is not None and step.still_since is not None \
                and t - step.still_since >= BOARD_PATIENCE_S:
            held, self._held_board = self._held_board, None
            events += self._rule(held.index, held.observation)
        events += self._release_manual(index, t, step.still_since, step.stable)
        if not step.moving:
            events += [RulingEvent(index, r.t, r) for r in self.session.waited(t)]
        return events

    def manual(self, observation: Observation) -> list[Event]:
        """A manual input: a declare, ruled on once no earlier play can appear; or a
        correction (a ``card_placed`` on a card already tracked, with its right identity),
        which relabels that card and re-adjudicates from the start."""
        if isinstance(observation, CardPlaced) and observation.corners is not None:
            return self._correct(observation)
        if self._finished:  # no play can come before it any more
            return self._rule(-1, observation)
        self._manual.append(observation)
        self._manual.sort(key=lambda o: o.t)
        return []

    def finish(self, t: float) -> list[Event]:
        events: list[Event] = []
        index = -1
        self._finished = True
        if self._held_board is not None:
            held, self._held_board = self._held_board, None
            events += self._rule(held.index, held.observation)
        for observation in self._manual:
            events += self._rule(index, observation)
        self._manual = []
        events += [RulingEvent(index, max(t, r.t), r) for r in self.session.finish()]
        return events

    # --- internals ---------------------------------------------------------------------

    def _vision(self, index: int, observation: Observation) -> list[Event]:
        if isinstance(observation, BoardState) and not self._explained(observation):
            # Perhaps half of a push: wait to see whether the table stays like this.
            self._held_board = _Pending(observation, index)
            return []
        self._held_board = None
        return self._rule(index, observation)

    def _explained(self, observation: Observation) -> bool:
        step = self.session.rules.apply(self.session.state, self._clamped(observation))
        return not any(r.kind in ("illegal", "impossible") for r in step.rulings)

    def _clamped(self, observation: Observation) -> Observation:
        if observation.t >= self.session.last_t:
            return observation
        return observation.model_copy(update={"t": self.session.last_t})

    def _correct(self, correction: CardPlaced) -> list[Event]:
        assert correction.corners is not None
        observer = getattr(self.tracker, "cards", None)  # card games only
        on_table = observer.cards if observer is not None else []
        cx, cy = centre(correction.corners)
        for position, card in enumerate(on_table):
            ox, oy = centre(card.corners_mm)
            if math.hypot(ox - cx, oy - cy) > SAME_PLACE_MM:
                continue
            on_table[position] = replace(card, card=correction.card, confidence=1.0)
            self._log = relabel_card(self._log, card.corners_mm, card.card, correction.card)
            self.session = Session(self.session.rules, self.session.players,
                                   self.session.settings)
            for observation in self._log:
                self.session.feed(observation)
            return [StatusEvent(-1, correction.t, "info",
                                f"Corrected {card.card} to {correction.card}: re-adjudicated.")]
        return [StatusEvent(-1, correction.t, "warning",
                            "There is no card there to correct.")]

    def _rule(self, index: int, observation: Observation) -> list[Event]:
        observation = self._clamped(observation)
        seen = ObservationEvent(index, observation.t, observation)
        try:
            rulings: tuple[Ruling, ...] = self.session.feed(observation)
        except Exception as error:  # a fault in one ruling must not end a game
            # The engine works on a copy of its state, so the game stands as before this
            # observation; the table goes on being watched and recorded.
            return [seen, StatusEvent(index, observation.t, "error",
                                      f"No ruling on this {observation.type.replace('_', ' ')}: "
                                      f"internal error ({type(error).__name__}: {error}); the "
                                      "referee carries on without it.")]
        self._log.append(observation)
        return [seen, *(RulingEvent(index, r.t, r) for r in rulings)]

    def _release_manual(self, index: int, t: float, still_since: float | None,
                        stable: bool) -> list[Event]:
        events: list[Event] = []
        while self._manual and self._manual[0].t <= t:
            first = self._manual[0]
            waiting_run = still_since is not None and still_since <= first.t and not stable \
                and self.tracker.detector.still_for < self.tracker.detector.still_needed
            held = self._held_board is not None and self._held_board.observation.t <= first.t
            if waiting_run or held:
                break
            self._manual.pop(0)
            events += self._rule(index, first)
        return events

    def _check_card_size(self, index: int, t: float) -> list[Event]:
        """A warning, once, when the cards placed apart measure another size than the
        calibration's ``card_mm``: their outlines (and what touches what) would be off."""
        if self._size_told or self.tracker.mode != "cards":
            return []
        cards = self.tracker.cards
        measured = cards.measured_card_mm
        if measured is None:
            return []
        told = cards.card_mm

        def off(size: tuple[float, float]) -> bool:
            return max(abs(size[0] - told[0]), abs(size[1] - told[1])) >= CARD_SIZE_OFF_MM \
                or abs(size[0] / size[1] - told[0] / told[1]) >= CARD_ASPECT_OFF

        if not off(measured) or sum(map(off, cards.sizes_seen)) \
                < CARD_SIZE_OFF_SHARE * len(cards.sizes_seen):
            return []
        self._size_told = True
        return [StatusEvent(index, t, "warning",
                            f"The cards look about {measured[0]:.0f} x {measured[1]:.0f} mm, "
                            f"not the calibration's {told[0]:g} x {told[1]:g}, so their "
                            "outlines are off: measure a card and calibrate again with its "
                            "size (referee calibrate --card-size WIDTHxLENGTH, or Cards mm on "
                            "the dashboard).")]

    def _check_drift(self, index: int, t: float, image: Image) -> list[Event]:
        checker = self._drift
        if checker is None:
            return []
        interval = 1.0 if self._paused or self._drift_failures else DRIFT_INTERVAL_S
        if self._last_drift_t is not None and t - self._last_drift_t < interval:
            return []
        self._last_drift_t = t
        report = checker.check(image)
        events: list[Event] = []
        if not self._drift_baseline:
            self._drift_baseline = True
            if report.status != "steady":
                # The calibration cannot even be confirmed on the first still frame: the
                # checker cannot tell drift from its own failure here, so it is turned off
                # rather than pausing a referee whose calibration is as given.
                self._drift = None
                return [StatusEvent(index, t, "warning", "Camera drift cannot be checked "
                                    f"on this footage ({report.reason or report.message}); "
                                    "rulings go on with the calibration as given.")]
        if report.status == "resolved":
            checker.calibration = report.calibration
            self.tracker.recalibrate(report.calibration)
            events.append(StatusEvent(index, t, "warning", report.message))
        was_paused = self._paused
        # One failed look (a hand's shadow, a piece on a line) is not a moved camera:
        # rulings pause only after DRIFT_FAILURES checks in a row fail.
        self._drift_failures = self._drift_failures + 1 if report.status == "paused" else 0
        self._paused = self._drift_failures >= DRIFT_FAILURES
        if self._paused and not was_paused:
            events.append(StatusEvent(index, t, "error", report.message))
        elif was_paused and not self._paused:
            events.append(StatusEvent(index, t, "info", "Camera steady again: rulings resume."))
        return events
