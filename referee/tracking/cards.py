"""Cards on the table, from the difference between two stable top-down states.

The newest card is on top: when a card lands it is fully visible, so the change between the
stable state before and after it is that card's whole outline (its known 63 x 88 mm size
pins the fit down where it lies on another white card). A card keeps the outline and the
identity it had when it was read in full; a removed card is one whose visible part shows
the bare table again.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

import cv2
import numpy as np
import numpy.typing as npt

from referee.tracking.topdown import FloatArray, Image, TableView, colour_change

CARD_W_MM: Final = 63.0
CARD_H_MM: Final = 88.0
CARD_AREA_MM2: Final = CARD_W_MM * CARD_H_MM
#: A colour change (largest channel, grey levels) that is real, not noise or shading.
CHANGE_LEVEL: Final = 28
#: Against the empty table: what counts as "something lies here".
FOREGROUND_LEVEL: Final = 30
#: A changed region must be at least this much of a card to be a new card.
MIN_NEW_FRACTION: Final = 0.3
#: A card whose visible part changed this much and now shows bare table was taken.
REMOVED_CHANGED: Final = 0.5
REMOVED_BARE: Final = 0.6
#: A placed card overlapping a just-vanished card this much is the same card, nudged.
NUDGE_IOU: Final = 0.5
#: How far a fitted outline may be from the card's true size before it is not a card (mm).
SIZE_TOLERANCE_MM: Final = 14.0
#: A changed region shorter than the card by this much (mm) is partly white-on-white.
PARTIAL_MM: Final = 6.0


@dataclass(frozen=True)
class CardReading:
    """A voted identity: a card code (``??`` when unsure) and how sure."""

    card: str
    confidence: float


class CardReader(Protocol):
    """Reads the identity of cards in camera frames (the product uses the ONNX index
    classifier; the benchmark can substitute ground truth)."""

    def read(self, t: float, frames: Sequence[Image], corners_mm: Sequence[FloatArray],
             corners_px: Sequence[FloatArray]) -> list[CardReading]: ...


@dataclass(frozen=True)
class TableCard:
    uid: str
    card: str
    corners_mm: tuple[tuple[float, float], ...]
    confidence: float = 1.0

    @property
    def outline(self) -> FloatArray:
        return np.array(self.corners_mm, dtype=np.float64)


@dataclass(frozen=True)
class CardFit:
    """A new card's outline, before its identity is read."""

    corners_mm: FloatArray
    centre_mm: tuple[float, float]


@dataclass(frozen=True)
class CardChanges:
    placed: tuple[CardFit, ...]
    removed: tuple[TableCard, ...]  # bottom first
    nudged: tuple[tuple[TableCard, CardFit], ...]  # (card, its new outline)

    @property
    def empty(self) -> bool:
        return not (self.placed or self.removed or self.nudged)


def card_corners(centre: tuple[float, float], angle_deg: float, size: tuple[float, float],
                 ) -> FloatArray:
    """The four corners of a rectangle of ``size`` (w, h) turned ``angle_deg``."""
    w, h = size[0] / 2, size[1] / 2
    a = np.deg2rad(angle_deg)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    local = np.array([[-w, -h], [w, -h], [w, h], [-w, h]])
    return np.asarray(local @ rot.T + np.array(centre), dtype=np.float64)


def fit_card(view: TableView, region: npt.NDArray[np.bool_],
             forbidden: npt.NDArray[np.bool_]) -> CardFit | None:
    """The 63 x 88 mm rectangle that explains a changed region, or None if it is not
    card-shaped.

    The region's minimum-area rectangle gives the pose. Where the new card lies on another
    white card, part of it does not change colour, so the region can be short of the card
    along an axis: the card is then slid along that axis to cover the region while
    covering as little as possible of ``forbidden`` (bare table that did not change)."""
    ys, xs = np.nonzero(region)
    if len(xs) < 10:
        return None
    mm = view.to_mm(np.column_stack([xs, ys]).astype(np.float64))
    (cx, cy), (w, h), angle = cv2.minAreaRect(mm.astype(np.float32))
    if w > h:  # the long side along the rectangle's second axis
        w, h, angle = h, w, angle + 90.0
    if (w > CARD_W_MM + SIZE_TOLERANCE_MM or h > CARD_H_MM + SIZE_TOLERANCE_MM
            or len(xs) < CARD_AREA_MM2 * MIN_NEW_FRACTION * view.px_per_mm ** 2):
        return None
    candidates = []
    a = np.deg2rad(angle)
    axis_w, axis_h = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
    for orient, (cw, ch) in ((angle, (CARD_W_MM, CARD_H_MM)),
                             (angle + 90.0, (CARD_H_MM, CARD_W_MM))):
        if w > cw + SIZE_TOLERANCE_MM or h > ch + SIZE_TOLERANCE_MM:
            continue
        slack_w, slack_h = max(0.0, cw - w) / 2, max(0.0, ch - h) / 2
        for u in np.linspace(-slack_w, slack_w, 5 if slack_w > 2 else 1):
            for v in np.linspace(-slack_h, slack_h, 5 if slack_h > 2 else 1):
                centre = np.array([cx, cy]) + u * axis_w + v * axis_h
                corners = card_corners((float(centre[0]), float(centre[1])), angle,
                                       (cw, ch))
                candidates.append((corners, orient))
    if not candidates:
        return None
    crop = _Crop.around(view, mm, margin_mm=CARD_H_MM)
    scores = [crop.score(corners, region, forbidden) for corners, _ in candidates]
    corners, orient = candidates[int(np.argmax(scores))]
    if w < CARD_W_MM - PARTIAL_MM or h < CARD_H_MM - PARTIAL_MM:
        # Only a partial region needs the pose searched; a whole one is measured better
        # by its own rectangle (a search would lean into the card's shadow).
        corners = _refine(crop, corners, orient, region, forbidden)
    centre = corners.mean(axis=0)
    return CardFit(corners, (float(centre[0]), float(centre[1])))


def _refine(crop: _Crop, corners: FloatArray, angle: float, region: npt.NDArray[np.bool_],
            forbidden: npt.NDArray[np.bool_]) -> FloatArray:
    """Hill-climb the pose (turn, then shift) while the fit score improves: the first
    guess's angle comes from a possibly ragged region."""
    centre = corners.mean(axis=0)
    best = crop.score(corners, region, forbidden)
    for step_deg, step_mm in ((3.0, 2.0), (1.0, 1.0), (0.5, 0.5)):
        improved = True
        while improved:
            improved = False
            for d_angle, dx, dy in ((step_deg, 0, 0), (-step_deg, 0, 0), (0, step_mm, 0),
                                    (0, -step_mm, 0), (0, 0, step_mm), (0, 0, -step_mm)):
                trial_centre = centre + np.array([dx, dy])
                trial = card_corners((float(trial_centre[0]), float(trial_centre[1])),
                                     angle + d_angle, (CARD_W_MM, CARD_H_MM))
                score = crop.score(trial, region, forbidden)
                if score > best:
                    best, centre, angle, improved = score, trial_centre, angle + d_angle, True
    return card_corners((float(centre[0]), float(centre[1])), angle, (CARD_W_MM, CARD_H_MM))


@dataclass(frozen=True)
class _Crop:
    """A window of the raster, so that scoring a candidate outline stays cheap."""

    view: TableView
    rows: slice
    cols: slice

    @classmethod
    def around(cls, view: TableView, mm: FloatArray, margin_mm: float) -> _Crop:
        raster = view.to_raster(mm)
        margin = margin_mm * view.px_per_mm
        h, w = view.shape
        c0, r0 = np.floor(raster.min(axis=0) - margin).astype(int)
        c1, r1 = np.ceil(raster.max(axis=0) + margin).astype(int)
        return cls(view, slice(max(0, int(r0)), min(h, int(r1))),
                   slice(max(0, int(c0)), min(w, int(c1))))

    def score(self, corners: FloatArray, region: npt.NDArray[np.bool_],
              forbidden: npt.NDArray[np.bool_]) -> float:
        shape = (self.rows.stop - self.rows.start, self.cols.stop - self.cols.start)
        mask = np.zeros(shape, np.uint8)
        pts = self.view.to_raster(corners) - np.array([self.cols.start, self.rows.start])
        cv2.fillPoly(mask, [np.round(pts * 4).astype(np.int32)], 1, cv2.LINE_8, shift=2)
        inside = mask.astype(bool)
        r, f = region[self.rows, self.cols], forbidden[self.rows, self.cols]
        return float(np.count_nonzero(inside & r) - 2 * np.count_nonzero(inside & f))


def _iou(view: TableView, a: FloatArray, b: FloatArray) -> float:
    ma, mb = view.polygon_mask([a]), view.polygon_mask([b])
    union = np.count_nonzero(ma | mb)
    return float(np.count_nonzero(ma & mb) / union) if union else 0.0


@dataclass
class CardObserver:
    """Holds the cards on the table (bottom first) and the empty-table background."""

    view: TableView
    cards: list[TableCard] = field(default_factory=list)
    background: Image | None = None
    reference: Image | None = None  # the last stable state
    _serial: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def new_uid(self) -> str:
        return f"card{next(self._serial)}"

    def start(self, state: Image) -> None:
        """The first stable state: the table as it is (empty, in every game here)."""
        self.background = state.copy()
        self.reference = state.copy()

    def compare(self, state: Image) -> CardChanges:
        """What changed since the last stable state (``commit`` applies it)."""
        if self.reference is None or self.background is None:
            self.start(state)
            return CardChanges((), (), ())
        seen = self.view.seen
        changed = (colour_change(state, self.reference) > CHANGE_LEVEL) & seen
        changed = cv2.morphologyEx(changed.astype(np.uint8), cv2.MORPH_OPEN,
                                   np.ones((3, 3), np.uint8)).astype(bool)
        if np.count_nonzero(changed) / self.view.px_per_mm ** 2 < 0.1 * CARD_AREA_MM2:
            return CardChanges((), (), ())
        bare = colour_change(state, self.background) <= FOREGROUND_LEVEL
        removed = self._removed(changed, bare)
        placed, nudged = self._placed(changed, removed)
        gone = tuple(c for c in removed if all(c.uid != n.uid for n, _ in nudged))
        return CardChanges(tuple(placed), gone, tuple(nudged))

    def _removed(self, changed: npt.NDArray[np.bool_], bare: npt.NDArray[np.bool_],
                 ) -> list[TableCard]:
        removed = []
        for i, card in enumerate(self.cards):
            own = self.view.polygon_mask([card.outline])
            above = [c.outline for c in self.cards[i + 1:]]
            visible = own & ~self.view.polygon_mask(above) if above else own
            below = [c.outline for c in self.cards[:i] if c not in removed]
            uncovered = visible & ~self.view.polygon_mask(below) if below else visible
            n_visible = np.count_nonzero(visible)
            if n_visible < 0.05 * CARD_AREA_MM2 * self.view.px_per_mm ** 2:
                continue  # hidden under others: it cannot have been taken alone
            if np.count_nonzero(changed & visible) / n_visible < REMOVED_CHANGED:
                continue
            n_uncovered = np.count_nonzero(uncovered)
            if n_uncovered == 0 or np.count_nonzero(bare & uncovered) / n_uncovered \
                    >= REMOVED_BARE:
                removed.append(card)
        return removed

    def _placed(self, changed: npt.NDArray[np.bool_], removed: list[TableCard],
                ) -> tuple[list[CardFit], list[tuple[TableCard, CardFit]]]:
        if removed:
            changed = changed & ~self.view.polygon_mask([c.outline for c in removed],
                                                         grow_mm=3.0)
        count, labels, stats, _ = cv2.connectedComponentsWithStats(changed.astype(np.uint8))
        kept = [c.outline for c in self.cards if c not in removed]
        forbidden = ~changed & self.view.seen
        if kept:
            forbidden &= ~self.view.polygon_mask(kept)
        min_px = MIN_NEW_FRACTION * CARD_AREA_MM2 * self.view.px_per_mm ** 2
        placed: list[CardFit] = []
        nudged: list[tuple[TableCard, CardFit]] = []
        for label in range(1, count):
            if stats[label, cv2.CC_STAT_AREA] < min_px:
                continue
            fit = fit_card(self.view, labels == label, forbidden)
            if fit is None:
                continue
            same = next((c for c in removed if _iou(self.view, c.outline, fit.corners_mm)
                         >= NUDGE_IOU), None)
            if same is not None:
                nudged.append((same, fit))
            else:
                placed.append(fit)
        return placed, nudged

    def commit(self, state: Image, placed: Sequence[TableCard], changes: CardChanges) -> None:
        """Apply a comparison's outcome: the new cards on top, the taken ones gone."""
        gone = {c.uid for c in changes.removed}
        moved = {card.uid: fit for card, fit in changes.nudged}
        kept = []
        for card in self.cards:
            if card.uid in gone:
                continue
            fit = moved.get(card.uid)
            if fit is not None:
                card = TableCard(card.uid, card.card, _tuple_corners(fit.corners_mm),
                                 card.confidence)
            kept.append(card)
        self.cards = [*kept, *placed]
        self.reference = state.copy()
        assert self.background is not None
        # Learn the bare table wherever no card lies, so lighting drift does not
        # accumulate into false "foreground".
        covered = self.view.polygon_mask([c.outline for c in self.cards], grow_mm=4.0)
        self.background[~covered] = state[~covered]


def _tuple_corners(corners: FloatArray) -> tuple[tuple[float, float], ...]:
    return tuple((round(float(x), 2), round(float(y), 2)) for x, y in corners)


def as_table_card(uid: str, fit: CardFit, reading: CardReading) -> TableCard:
    return TableCard(uid, reading.card, _tuple_corners(fit.corners_mm), reading.confidence)
