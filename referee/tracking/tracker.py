"""The table tracker: frames in, observations out, exactly once per real event.

Per frame it runs the motion gate; on the first stable state after movement it warps the
frame top-down and asks the game's observer what changed since the last stable state.
Before an observation leaves, it is checked for plausibility (a card already on the table
cannot appear again; a coin cannot vanish without a hand): an impossible reading is
reported as such and never reaches the rules engine.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np
import numpy.typing as npt

from referee.calibration.errors import CalibrationError
from referee.calibration.layouts import CardTableLayout, GridBoardLayout, layout_for_game
from referee.calibration.model import Calibration
from referee.observations import (
    BoardState,
    CardPlaced,
    CardRemoved,
    CoinRemoved,
    CoinStopped,
    Observation,
)
from referee.pipeline.events import TrackedObject
from referee.rulings import Impossible
from referee.tracking.cards import (
    CardObserver,
    CardReader,
    CardReading,
    TableCard,
    as_table_card,
)
from referee.tracking.coins import CoinChanges, CoinObserver
from referee.tracking.motion import STILL_FRAMES, MotionGate, StableDetector, small_frame
from referee.tracking.seats import ArmTracer, SeatDirection, seat_directions
from referee.tracking.tokens import read_board
from referee.tracking.topdown import (
    Image,
    TableView,
    grid_bounds,
    piecepack_bounds,
    view_around,
)

Mode = Literal["cards", "coins", "tokens"]
MODES: Final[dict[str, Mode]] = {"shove-piggy-shove": "cards", "push-out-the-pig": "cards",
                                 "slapstick": "cards", "shove-piecepack": "coins",
                                 "shove": "tokens"}
#: Top-down scales (px per mm): cards need ~1 mm, coins ~0.5 mm, tokens only the square.
CARD_SCALE: Final = 1.5
BOARD_SCALE: Final = 2.0
#: Motion this near a coin (mm) means something touched it.
COIN_TOUCH_MM: Final = 15.0
#: A stable state refused because a coin still creeps (``CoinObserver.compare``) is taken
#: again after a further still run; after this many in a row it is taken as it is (a coin
#: that never seems to settle must not hold the referee back for ever).
CREEP_RETRIES: Final = 8
#: A card read as one already on the table is taken for its runner-up read at least this
#: sure (mean over the frames read; models/README.md).
RUNNER_UP_MIN: Final = 0.25
#: Readings that several cards on the table may share (face-down cards, jokers, unread).
REPEATABLE: Final = frozenset({"??", "back", "JK"})
#: The card table seen around the image centre, at most this far each way (mm).
CARD_VIEW_HALF_MM: Final = (450.0, 350.0)


@dataclass(frozen=True)
class TrackerStep:
    moving: bool
    still_frames: int
    stable: bool  # a new stable state was taken on this frame
    observations: tuple[Observation, ...] = ()
    impossible: tuple[Impossible, ...] = ()
    objects: tuple[TrackedObject, ...] = ()
    still_since: float | None = None  # t of the first frame of the current still run


class TableTracker:
    def __init__(self, game: str, calibration: Calibration, players: Sequence[str],
                 reader: CardReader) -> None:
        self.game = game
        self.mode: Mode = MODES[game]
        self.reader = reader
        self.calibration = calibration
        self.gate = MotionGate()
        self.detector = StableDetector()
        self._frames: deque[Image] = deque(maxlen=STILL_FRAMES)
        self._still_since: float | None = None
        self._arm_seen = False
        self._creep_retries = 0  # stable states in a row refused for a creeping coin
        self._players = tuple(players)
        self._seats: tuple[SeatDirection, ...] = ()
        layout = layout_for_game(game)
        if isinstance(layout, CardTableLayout):
            try:
                self._seats = seat_directions(players, layout.seats_for(len(players)))
            except CalibrationError:  # no seating for this many: players come from turns
                self._seats = ()
        self._grid = layout if isinstance(layout, GridBoardLayout) else None
        self._board: tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]] | None = None
        self.recalibrate(calibration)

    def recalibrate(self, calibration: Calibration) -> None:
        """A new calibration (drift re-solved): new warps; objects keep their mm."""
        self.calibration = calibration
        plane = calibration.plane
        self.plane = plane
        self.view = TableView.build(plane, self._bounds(calibration), self._scale())
        width, height = plane.image_size
        small = small_frame(np.zeros((height, width), np.uint8))
        self.arms = ArmTracer(plane, small.shape)
        if self.mode == "cards":
            old = getattr(self, "cards", None)
            self.cards = CardObserver(self.view, card_mm=calibration.card_mm)
            if old is not None:
                self.cards.cards, self.cards.sizes_seen = old.cards, old.sizes_seen
        elif self.mode == "coins":
            old_coins = getattr(self, "coins", None)
            self.coins = CoinObserver(self.view)
            if old_coins is not None:
                self.coins.coins, self.coins._serial = old_coins.coins, old_coins._serial

    def _scale(self) -> float:
        return CARD_SCALE if self.mode == "cards" else BOARD_SCALE

    def _bounds(self, calibration: Calibration) -> tuple[float, float, float, float]:
        board = calibration.board
        if self.mode == "coins" and board is not None:
            return piecepack_bounds(board.pitch_mm, board.tiles_per_side)
        if self.mode == "tokens" and self._grid is not None:
            return grid_bounds(self._grid.width_mm, self._grid.height_mm)
        return view_around(calibration.plane, CARD_VIEW_HALF_MM)

    # --- per frame -------------------------------------------------------------------

    def update(self, index: int, t: float, image: Image) -> TrackerStep:
        reading = self.gate.update(image)
        run = self.detector.update(index, t, reading)
        if self.detector.paused:  # faint flicker: neither still nor a movement
            pass
        elif reading.moving:
            self.arms.add(reading.mask)
            self._frames.clear()
            self._still_since = None
            self._arm_seen |= reading.arm_in_view
        else:
            self._frames.append(image)
            if self._still_since is None:
                self._still_since = t
        if run is None:
            return TrackerStep(reading.moving, self.detector.still_for, False,
                               still_since=self._still_since)
        t0 = round(run.start_t, 3)
        state = self.view.warp(image)
        changes: CoinChanges | None = None
        if self.mode == "coins":
            changes = self._coin_changes(state)
            if changes is None:  # a coin still creeping: the table is not still yet
                self.detector.restart()
                return TrackerStep(False, self.detector.still_for, False,
                                   still_since=self._still_since)
        self.gate.settle()
        if self.mode == "cards":
            observations, impossible = self._cards(t0, state)
        elif self.mode == "coins":
            assert changes is not None  # taken above
            observations, impossible = self._coins(t0, changes)
        else:
            observations, impossible = self._tokens(t0, state), []
        self.arms.reset()
        self._arm_seen = False
        return TrackerStep(False, self.detector.still_for, True, tuple(observations),
                           tuple(impossible), self.objects(), self._still_since)

    # --- cards -------------------------------------------------------------------------

    def _cards(self, t: float, state: Image) -> tuple[list[Observation], list[Impossible]]:
        changes = self.cards.compare(state)
        observations: list[Observation] = []
        impossible: list[Impossible] = []
        if changes.removed:
            centre = np.mean([c.outline.mean(axis=0) for c in changes.removed], axis=0)
            taker = self.arms.player((float(centre[0]), float(centre[1])), self._seats)
            for card in changes.removed:
                if card.uid not in self._unruled:
                    observations.append(CardRemoved(t=t, type="card_removed", card=card.card,
                                                    player=taker))
        placed: list[TableCard] = []
        if changes.placed:
            corners_px = [self.plane.to_pixels(f.corners_mm) for f in changes.placed]
            readings = self.reader.read(t, list(self._frames),
                                        [f.corners_mm for f in changes.placed], corners_px)
            on_table = {c.card for c in self.cards.cards if c not in changes.removed}
            for fit, reading in zip(changes.placed, readings, strict=True):
                reading = _possible(reading, on_table)
                card = as_table_card(self.cards.new_uid(), fit, reading)
                player = self.arms.player(fit.centre_mm, self._seats)
                if card.card in on_table and card.card not in REPEATABLE:
                    impossible.append(Impossible(
                        t=t, rule="card_already_on_table", player=player,
                        message=f"{card.card} was read, but {card.card} is already on the "
                                "table: a misread, not ruled on."))
                    self._unruled.add(card.uid)
                else:
                    on_table.add(card.card)
                    observations.append(CardPlaced(t=t, type="card_placed", card=card.card,
                                                   corners=_corners4(card), player=player))
                placed.append(card)
        self.cards.commit(state, placed, changes)
        return observations, impossible

    @property
    def _unruled(self) -> set[str]:
        """Cards whose reading was impossible: tracked, but never reported."""
        if not hasattr(self, "_unruled_set"):
            self._unruled_set: set[str] = set()
        return self._unruled_set

    # --- coins -------------------------------------------------------------------------

    def _coin_changes(self, state: Image) -> CoinChanges | None:
        """The coins' changes in a stable state; None while a coin found at a new place
        still creeps (it changed since the still run's first frame), at most
        ``CREEP_RETRIES`` times in a row."""
        first = self.view.warp(self._frames[0]) \
            if self._frames and self._creep_retries < CREEP_RETRIES else None
        changes = self.coins.compare(state, first)
        self._creep_retries = self._creep_retries + 1 if changes is None else 0
        return changes

    def _coins(self, t: float, changes: CoinChanges,
               ) -> tuple[list[Observation], list[Impossible]]:
        observations: list[Observation] = [
            CoinStopped(t=t, type="coin_stopped", id=c.id,
                        center=(round(c.center[0], 2), round(c.center[1], 2)), radius=c.radius)
            for c in changes.stopped]
        impossible: list[Impossible] = []
        # Nothing reached in from the edge of the view, and nothing moved where the coin
        # lay (a dark hand on a dark table still moves there): it cannot just vanish.
        vanished = () if self._arm_seen else tuple(
            c for c in changes.removed if not self.arms.moved_near(c.center, COIN_TOUCH_MM))
        for coin in vanished:
            impossible.append(Impossible(
                t=t, rule="coin_vanished",
                message=f"{coin.id} is no longer seen, but no hand took it: a misread, "
                        "not ruled on."))
        observations += [CoinRemoved(t=t, type="coin_removed", id=c.id)
                         for c in changes.removed if c not in vanished]
        self.coins.commit(changes, keep=vanished)
        return observations, impossible

    # --- tokens ------------------------------------------------------------------------

    def _tokens(self, t: float, state: Image) -> list[Observation]:
        grid = self._grid
        assert grid is not None
        reading = read_board(self.view, state, grid.rows, grid.cols, grid.square_mm)
        board = (tuple(sorted(reading.red)), tuple(sorted(reading.blue)))
        first = self._board is None
        changed = board != self._board
        self._board = board
        if first or not changed:  # the starting position is the engine's own
            return []
        return [BoardState(t=t, type="board_state", red=board[0], blue=board[1])]

    # --- what the tracker holds ------------------------------------------------------

    def objects(self) -> tuple[TrackedObject, ...]:
        out: list[TrackedObject] = []
        if self.mode == "cards":
            for card in self.cards.cards:
                px = self.plane.to_pixels(card.outline)
                out.append(TrackedObject(card.uid, "card", card.card, card.corners_mm,
                                         _points(px), card.confidence))
        elif self.mode == "coins":
            for coin in self.coins.coins:
                ring = np.array([(coin.center[0] + coin.radius * math.cos(a),
                                  coin.center[1] + coin.radius * math.sin(a))
                                 for a in np.linspace(0, 2 * math.pi, 16, endpoint=False)])
                out.append(TrackedObject(coin.id, "coin", coin.id, _points(ring),
                                         _points(self.plane.to_pixels(ring))))
        elif self._board is not None and self._grid is not None:
            s = self._grid.square_mm
            for colour, squares in zip(("red", "blue"), self._board, strict=True):
                for row, col in squares:
                    sq = np.array([(col * s, row * s), ((col + 1) * s, row * s),
                                   ((col + 1) * s, (row + 1) * s), (col * s, (row + 1) * s)])
                    out.append(TrackedObject(f"{colour}@{row},{col}", "token", colour,
                                             _points(sq), _points(self.plane.to_pixels(sq))))
        return tuple(out)


def _possible(reading: CardReading, on_table: set[str]) -> CardReading:
    """A card read as one already on the table is the likeliest card not on it, when that
    was read at least ``RUNNER_UP_MIN`` sure (a German Dame read as a Bube: QC read JC with
    JC lying there); else the reading stands, to be reported as impossible."""
    if reading.card not in on_table or reading.card in REPEATABLE:
        return reading
    for code, confidence in reading.alternatives:
        if code not in on_table and confidence >= RUNNER_UP_MIN:
            return CardReading(code, confidence)
    return reading


def _points(array: npt.NDArray[np.float64]) -> tuple[tuple[float, float], ...]:
    return tuple((round(float(x), 2), round(float(y), 2)) for x, y in array)


def _corners4(card: TableCard) -> tuple[tuple[float, float], tuple[float, float],
                                        tuple[float, float], tuple[float, float]]:
    c = card.corners_mm
    return (c[0], c[1], c[2], c[3])
