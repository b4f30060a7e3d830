"""Cards on the table, from the difference between two stable top-down states.

The newest card is on top: when a card lands it is fully visible, so the change between the
stable state before and after it is that card's whole outline (its known size, 63 x 88 mm
or the calibration's ``card_mm``, pins the fit down where it lies on another white card). A
card keeps the outline and the identity it had when it was read in full; a removed card is
one whose visible part shows the bare table again.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

import cv2
import numpy as np
import numpy.typing as npt

from referee.cards import CARD_MM
from referee.detection.outlines import Gradients, edge_lines, gradients, refine_edges
from referee.tracking.topdown import FloatArray, Image, TableView, colour_change, fill_holes

#: A colour change (largest channel, grey levels) that is real, not noise or shading.
CHANGE_LEVEL: Final = 28
#: Against the empty table: what counts as "something lies here".
FOREGROUND_LEVEL: Final = 30
#: A changed region must be at least this much of a card to be a new card.
MIN_NEW_FRACTION: Final = 0.3
#: A change this much of a card that outlines a whole card (a white card on a light table,
#: its edge showing with gaps) is a new card too.
MIN_RING_FRACTION: Final = 0.1
#: A card whose visible part changed this much and now shows bare table was taken.
REMOVED_CHANGED: Final = 0.5
REMOVED_BARE: Final = 0.6
#: A white card taken off a light table changes little inside (white to pale): one whose
#: visible part changed this much and is now bare all over was taken too (a card still
#: there changed near nothing; one nudged is matched to its new outline as before).
REMOVED_CHANGED_BARE: Final = 0.25
REMOVED_ALL_BARE: Final = 0.95
#: A placed card overlapping a just-vanished card this much is the same card, nudged.
NUDGE_IOU: Final = 0.5
#: A change fitted to the outline of a card still lying there (this IoU) is that card's
#: face changing, not a card placed.
SAME_PLACE_IOU: Final = 0.8
#: A new card fitted over a card already there by at least this share of its area, and
#: turned more than QUARTER_OFF_DEG from it, may have its pose from the card below instead
#: (``_posed_on_cards``; a card laid on another is seldom turned that much).
ON_CARD_SHARE: Final = 0.5
QUARTER_OFF_DEG: Final = 45.0
#: How far a fitted outline may be from the card's true size before it is not a card (mm).
SIZE_TOLERANCE_MM: Final = 14.0
#: A changed region shorter than the card by this much (mm) is partly white-on-white.
PARTIAL_MM: Final = 6.0
#: The cards' size is taken as measured (``CardObserver.measured_card_mm``) from this many
#: cards placed apart from the others; a change is measured when it is at most this much
#: (mm) short of the card the tracker is told of on each side (a narrower one is part of a
#: card: white on white).
SIZE_EVIDENCE: Final = 2
MEASURED_SHORT_MM: Final = 12.0
#: Pieces of one card's change this far apart (mm) are joined before fitting.
JOIN_MM: Final = 4.5
#: A change inside the top card's outline this large (of a card) is a restacking.
RESTACK_FRACTION: Final = 0.12
#: Change just outside the top card's outline (of a card) that rules out a restacking. A
#: card laid 7-8 mm off the one below shows a strip of about 0.16 of a card beside it
#: (push-out-the-pig-703, white on white: nothing else of it changed enough to fit).
RESTACK_OUTSIDE: Final = 0.25
#: The table inside a taken card's outline looks as before it came (fraction unchanged),
#: and differs from it on average by at most this share of what the card did.
UNDER_SAME: Final = 0.75
UNDER_CLOSER: Final = 0.5
#: Normalised correlation above which the top card's face is still its own.
OWN_MATCH: Final = 0.8
#: A card laid nearly squarely on another is searched from the card below's outline and
#: from starts this far off it (mm, degrees).
LAID_ON_START_MM: Final = 3.0
LAID_ON_START_DEG: Final = 3.0
#: A new card's fitted sides are moved onto its edges found within this (mm): the changed
#: region includes the card's shadow, which pulls a fit a few mm its way.
POLISH_REACH_MM: Final = 4.0
#: The edges found are kept only if they outline a card this close to its size (mm): up to
#: this much smaller (a card's dark cut edge and the blur put the strongest edge 1-2 mm
#: inside the outline on every side), or ``POLISH_LARGER_MM`` larger. Only their centre
#: and turn are taken; the card keeps its size.
POLISH_SMALLER_MM: Final = 5.5
POLISH_LARGER_MM: Final = 2.0
#: A new card's side counts as lying on bare table when no more than this share of it
#: comes within ``POLISH_REACH_MM`` of another card.
OPEN_SIDE_COVERED: Final = 0.2
#: Open sides' edges turn a new card's fit only when they agree this well (degrees),
#: and only by a turn within these bounds (less is the edges' noise: a card's print near
#: a side tilts its edge's line a few tenths of a degree).
OPEN_SIDE_AGREE_DEG: Final = 1.0
OPEN_SIDE_MIN_TURN_DEG: Final = 0.3
OPEN_SIDE_MAX_TURN_DEG: Final = 4.0
#: A side with no open side opposite it moves the fit only onto an edge found this far
#: outside it (mm): the strongest edge lies 0.5-2 mm inside a card's outline (its dark cut
#: edge; the sides ``_polish`` found on the sample footage were 1.4 mm short of the
#: card's size, median, session 17), while the changed region places most fits within a
#: mm.
OPEN_SIDE_OUTSIDE_MM: Final = 1.0


@dataclass(frozen=True)
class CardReading:
    """A voted identity: a card code (``??`` when unsure) and how sure, and the next
    likeliest codes (how sure of each, on the same scale), best first."""

    card: str
    confidence: float
    alternatives: tuple[tuple[str, float], ...] = ()


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
    """A new card's outline, before its identity is read; ``measured_mm``: the short and
    long sides of the change it was fitted to, when that was about a card's size
    (``MEASURED_SHORT_MM``)."""

    corners_mm: FloatArray
    centre_mm: tuple[float, float]
    measured_mm: tuple[float, float] | None = None


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
             forbidden: npt.NDArray[np.bool_],
             card_mm: tuple[float, float] = CARD_MM) -> CardFit | None:
    """The card's rectangle (``card_mm``: width and length) that explains a changed region,
    or None if it is not card-shaped.

    The region's minimum-area rectangle gives the pose. Where the new card lies on another
    white card, part of it does not change colour, so the region can be short of the card
    along an axis: the card is then slid along that axis to cover the region while
    covering as little as possible of ``forbidden`` (bare table that did not change)."""
    ys, xs = np.nonzero(region)
    if len(xs) < 10 or len(xs) < MIN_NEW_FRACTION * _card_area_px(view, card_mm):
        return None
    mm = view.to_mm(np.column_stack([xs, ys]).astype(np.float64))
    rect = _card_rect(mm, card_mm)
    if rect is None:
        return None
    candidates = _candidates(*rect, card_mm)
    if not candidates:
        return None
    crop = _Crop.around(view, mm, margin_mm=card_mm[1])
    scores = [crop.score(corners, region, forbidden) for corners, _, _ in candidates]
    corners, orient, partial = candidates[int(np.argmax(scores))]
    if partial:
        # Only a partial region needs the pose searched; a whole one is measured better
        # by its own rectangle (a search would lean into the card's shadow).
        corners = _refine(crop, corners, orient, region, forbidden, card_mm)
    centre = corners.mean(axis=0)
    w, h = rect[1]
    whole = w >= card_mm[0] - MEASURED_SHORT_MM and h >= card_mm[1] - MEASURED_SHORT_MM
    return CardFit(corners, (float(centre[0]), float(centre[1])), rect[1] if whole else None)


def _card_area_px(view: TableView, card_mm: tuple[float, float]) -> float:
    """A card's area (``card_mm``: width and length) in the view's pixels."""
    return card_mm[0] * card_mm[1] * view.px_per_mm ** 2


def _polish(view: TableView, slopes: Gradients, fit: CardFit) -> CardFit:
    """The fit moved to the centre and turn of the card's own edges found near its sides,
    when they outline a card of about its size (else the fit as it was)."""
    raster = view.to_raster(fit.corners_mm)
    found = view.to_mm(refine_edges(slopes, raster, reach=POLISH_REACH_MM * view.px_per_mm))
    corners = fit.corners_mm
    size = np.linalg.norm(corners - np.roll(corners, -1, axis=0), axis=1)
    sides = np.linalg.norm(found - np.roll(found, -1, axis=0), axis=1)
    off = sides - size
    if off.min() < -POLISH_SMALLER_MM or off.max() > POLISH_LARGER_MM \
            or np.allclose(found, corners):
        return fit
    along = (found[1] - found[0]) + (found[2] - found[3])
    centre = found.mean(axis=0)
    outline = card_corners((float(centre[0]), float(centre[1])),
                           float(np.degrees(np.arctan2(along[1], along[0]))),
                           (float(size[0]), float(size[1])))
    return CardFit(outline, (float(centre[0]), float(centre[1])))


def _polish_open(view: TableView, slopes: Gradients, fit: CardFit,
                 others: npt.NDArray[np.bool_]) -> CardFit:
    """For a new card lying partly on others: the fit moved onto the card's own edges
    found along its open sides, those that lie on bare table in view (no more than
    ``OPEN_SIDE_COVERED`` of the side within ``POLISH_REACH_MM`` of the ``others`` mask
    or out of view). The changed region can fall a few mm short of such a card, where it
    covers a card much like it or its edge is lost in the table's colour (else the fit
    stays as it was).

    The edges over another card may be that card's, so they are not used. The fit turns
    only when two or more open sides' edges, and more than half of those found, agree on
    the turn (``_agreed_turn``: one of them may be a frame printed on the card).
    Then two opposite open sides centre the card between them; a side with no open side
    opposite it moves the card only when its edge lies ``OPEN_SIDE_OUTSIDE_MM`` or more
    outside the fit (the region fell short there), and then onto that edge (which lies a
    little inside the card's outline)."""
    corners = fit.corners_mm
    raster = view.to_raster(corners)
    ends = np.roll(raster, -1, axis=0)
    samples = raster[:, None, :] + np.linspace(0.1, 0.9, 17)[None, :, None] \
        * (ends - raster)[:, None, :]
    cols = np.clip(np.round(samples[..., 0]).astype(int), 0, others.shape[1] - 1)
    rows = np.clip(np.round(samples[..., 1]).astype(int), 0, others.shape[0] - 1)
    covered = (others[rows, cols] | ~view.seen[rows, cols]).mean(axis=1)
    lines = {side: view.to_mm(np.array(line)) for side, line
             in enumerate(edge_lines(slopes, raster, POLISH_REACH_MM * view.px_per_mm))
             if line is not None and covered[side] <= OPEN_SIDE_COVERED}
    if not lines:
        return fit
    centre = corners.mean(axis=0)
    sides = np.roll(corners, -1, axis=0) - corners
    turns = [float((np.arctan2(b[1] - a[1], b[0] - a[0])
                    - np.arctan2(sides[k][1], sides[k][0]) + np.pi / 2) % np.pi - np.pi / 2)
             for k, (a, b) in lines.items()]
    turn = _agreed_turn(turns)
    rot = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
    turned = (corners - centre) @ rot.T + centre
    middles = (turned + np.roll(turned, -1, axis=0)) / 2
    outward = (middles - centre) / np.linalg.norm(middles - centre, axis=1)[:, None]
    offset = {}  # how far each open side's edge lies outside it (mm)
    for k, (a, b) in lines.items():
        normal = np.array([a[1] - b[1], b[0] - a[0]]) / np.linalg.norm(b - a)
        offset[k] = float((a - middles[k]) @ normal) * float(np.sign(normal @ outward[k]))
    shift = np.zeros(2)
    for near, far in ((0, 2), (1, 3)):  # the two axes: opposite sides
        if near in offset and far in offset:
            if not -POLISH_SMALLER_MM <= offset[near] + offset[far] <= POLISH_LARGER_MM:
                return fit
            step = (offset[near] - offset[far]) / 2 * outward[near]
        elif near in offset or far in offset:
            side = near if near in offset else far
            step = offset[side] * outward[side] if offset[side] >= OPEN_SIDE_OUTSIDE_MM \
                else np.zeros(2)
        else:
            continue
        if np.linalg.norm(step) > POLISH_REACH_MM:
            return fit
        shift += step
    if turn == 0.0 and not shift.any():
        return fit
    outline = turned + shift
    return CardFit(outline, (float(centre[0] + shift[0]), float(centre[1] + shift[1])))


def _agreed_turn(turns: list[float]) -> float:
    """The median of the largest group of turns (radians) within ``OPEN_SIDE_AGREE_DEG``
    of each other, when it holds two or more and more than half of them; 0 otherwise, or
    when that is less than ``OPEN_SIDE_MIN_TURN_DEG`` or more than ``OPEN_SIDE_MAX_TURN_DEG``."""
    ordered = sorted(turns)
    group: list[float] = []
    for i, low in enumerate(ordered):
        near = [t for t in ordered[i:] if np.degrees(t - low) <= OPEN_SIDE_AGREE_DEG]
        group = near if len(near) > len(group) else group
    if len(group) < 2 or 2 * len(group) <= len(turns):
        return 0.0
    turn = float(np.median(group))
    return turn if OPEN_SIDE_MIN_TURN_DEG <= abs(np.degrees(turn)) \
        <= OPEN_SIDE_MAX_TURN_DEG else 0.0


def _candidates(centre: tuple[float, float], size: tuple[float, float], angle: float,
                card_mm: tuple[float, float]) -> list[tuple[FloatArray, float, bool]]:
    """Card outlines (``card_mm``) that contain a rectangle (centre, (short, long), angle):
    slid along whichever axis the rectangle is short of a card; with whether it was
    partial."""
    (cx, cy), (w, h) = centre, size
    card_w, card_h = card_mm
    partial = w < card_w - PARTIAL_MM or h < card_h - PARTIAL_MM
    a = np.deg2rad(angle)
    axis_w, axis_h = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
    out = []
    for orient, (cw, ch) in ((angle, (card_w, card_h)), (angle + 90.0, (card_h, card_w))):
        if w > cw + SIZE_TOLERANCE_MM or h > ch + SIZE_TOLERANCE_MM:
            continue
        slack_w, slack_h = max(0.0, cw - w) / 2, max(0.0, ch - h) / 2
        for u in np.linspace(-slack_w, slack_w, 5 if slack_w > 2 else 1):
            for v in np.linspace(-slack_h, slack_h, 5 if slack_h > 2 else 1):
                c = np.array([cx, cy]) + u * axis_w + v * axis_h
                out.append((card_corners((float(c[0]), float(c[1])), angle, (cw, ch)),
                            orient, partial))
    return out


def _card_rect(mm: FloatArray, card_mm: tuple[float, float],
               ) -> tuple[tuple[float, float], tuple[float, float], float] | None:
    """Minimum-area rectangle (centre, (short, long), angle of the short side) of points,
    or None if it is too big for one card (``card_mm``)."""
    (cx, cy), (w, h), angle = cv2.minAreaRect(mm.astype(np.float32))
    if w > h:  # the long side along the rectangle's second axis
        w, h, angle = h, w, angle + 90.0
    if w > card_mm[0] + SIZE_TOLERANCE_MM or h > card_mm[1] + SIZE_TOLERANCE_MM:
        return None
    return (float(cx), float(cy)), (float(w), float(h)), float(angle)


def _refine(crop: _Crop, corners: FloatArray, angle: float, region: npt.NDArray[np.bool_],
            forbidden: npt.NDArray[np.bool_], card_mm: tuple[float, float], *,
            together: bool = False) -> FloatArray:
    """Hill-climb the pose of a card ``card_mm`` in size (turn, then shift) while the fit
    score improves: the first guess's angle comes from a possibly ragged region.
    ``together``: also try turning and shifting in one step (a card lying on another can
    often do neither alone without crossing bare table)."""
    centre = corners.mean(axis=0)
    best = crop.score(corners, region, forbidden)
    for step_deg, step_mm in ((3.0, 2.0), (1.0, 1.0), (0.5, 0.5)):
        moves = [(step_deg, 0, 0), (-step_deg, 0, 0), (0, step_mm, 0), (0, -step_mm, 0),
                 (0, 0, step_mm), (0, 0, -step_mm)]
        if together:
            moves = [(a * step_deg, x * step_mm, y * step_mm)
                     for a, x, y in itertools.product((-1, 0, 1), repeat=3) if a or x or y]
        improved = True
        while improved:
            improved = False
            for d_angle, dx, dy in moves:
                trial_centre = centre + np.array([dx, dy])
                trial = card_corners((float(trial_centre[0]), float(trial_centre[1])),
                                     angle + d_angle, card_mm)
                score = crop.score(trial, region, forbidden)
                if score > best:
                    best, centre, angle, improved = score, trial_centre, angle + d_angle, True
    return card_corners((float(centre[0]), float(centre[1])), angle, card_mm)


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


@dataclass(frozen=True)
class _Looks:
    """A card's face as it lay when placed, and what was under it before, cut from the
    top-down raster around its outline."""

    rows: slice
    cols: slice
    own: Image
    under: Image | None

    @classmethod
    def capture(cls, view: TableView, outline: FloatArray, state: Image,
                before: Image | None) -> _Looks:
        """``state`` with the card in place; ``before`` (whole raster) without it."""
        raster = view.to_raster(outline)
        h, w = view.shape
        c0, r0 = np.floor(raster.min(axis=0)).astype(int)
        c1, r1 = np.ceil(raster.max(axis=0)).astype(int) + 1
        rows, cols = slice(max(0, int(r0)), min(h, int(r1))), slice(max(0, int(c0)),
                                                                    min(w, int(c1)))
        under = before[rows, cols].copy() if before is not None else None
        return cls(rows, cols, state[rows, cols].copy(), under)

    def matches_under(self, state: Image, inside: npt.NDArray[np.bool_]) -> bool:
        """Whether the table inside the card now looks as it did before the card came, and
        much more so than the card itself did (a white card on a pale table looks nearly
        like the table: so does another white card laid on it)."""
        if self.under is None:
            return False
        mask = inside[self.rows, self.cols]
        if not mask.any():
            return False
        now = colour_change(state[self.rows, self.cols], self.under)
        same = now <= FOREGROUND_LEVEL
        if np.count_nonzero(same & mask) < UNDER_SAME * int(mask.sum()):
            return False
        card = colour_change(self.own, self.under)
        return bool(now[mask].mean() <= UNDER_CLOSER * card[mask].mean())

    def matches_own(self, state: Image) -> bool:
        """Whether the card's own face is still there, perhaps shifted a few mm."""
        h, w = self.own.shape[:2]
        m = max(2, min(h, w) // 5)
        core = self.own[m:h - m, m:w - m]
        if core.size == 0:
            return False
        rows = slice(max(0, self.rows.start - m), self.rows.stop + m)
        cols = slice(max(0, self.cols.start - m), self.cols.stop + m)
        area = state[rows, cols]
        if area.shape[0] < core.shape[0] or area.shape[1] < core.shape[1]:
            return False
        score = cv2.matchTemplate(area, core, cv2.TM_CCOEFF_NORMED)
        return bool(float(score.max()) >= OWN_MATCH)


def _iou(view: TableView, a: FloatArray, b: FloatArray) -> float:
    ma, mb = view.polygon_mask([a]), view.polygon_mask([b])
    union = np.count_nonzero(ma | mb)
    return float(np.count_nonzero(ma & mb) / union) if union else 0.0


@dataclass
class CardObserver:
    """Holds the cards on the table (bottom first) and the empty-table background; the
    cards are ``card_mm`` in size (width, length)."""

    view: TableView
    cards: list[TableCard] = field(default_factory=list)
    background: Image | None = None
    reference: Image | None = None  # the last stable state
    _serial: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _looks: dict[str, _Looks] = field(default_factory=dict)
    card_mm: tuple[float, float] = CARD_MM
    #: The sizes (short, long side, mm) of the changes that cards placed apart from the
    #: others were fitted to: what the cards measure (``measured_card_mm``).
    sizes_seen: list[tuple[float, float]] = field(default_factory=list)

    @property
    def measured_card_mm(self) -> tuple[float, float] | None:
        """The cards' size as measured (the median of ``sizes_seen``), once
        ``SIZE_EVIDENCE`` cards were placed apart from the others; else None."""
        if len(self.sizes_seen) < SIZE_EVIDENCE:
            return None
        width, length = np.median(np.array(self.sizes_seen), axis=0)
        return float(width), float(length)

    @property
    def _card_px(self) -> float:
        return _card_area_px(self.view, self.card_mm)

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
        if np.count_nonzero(changed) < 0.1 * self._card_px:
            return CardChanges((), (), ())
        bare = colour_change(state, self.background) <= FOREGROUND_LEVEL
        removed = self._removed(changed, bare)
        placed, nudged = self._placed(changed, removed)
        lying = [c.outline for c in self.cards if c not in removed]
        under = self.view.polygon_mask(lying) if lying and placed else None
        apart = [under is None or not self._overlaps(f.corners_mm, under) for f in placed]
        if placed:  # (on another card, the edges found may be that card's)
            slopes = gradients(state)
            near = self.view.polygon_mask(lying, grow_mm=POLISH_REACH_MM) \
                if under is not None else None
            placed = [_polish(self.view, slopes, f) if alone or near is None
                      else _polish_open(self.view, slopes, f, near)
                      for f, alone in zip(placed, apart, strict=True)]
        on_top, taken = self._restacked(state, changed, removed, placed, nudged)
        placed += on_top
        removed += taken
        gone = tuple(c for c in removed if all(c.uid != n.uid for n, _ in nudged))
        return CardChanges(tuple(placed), gone, tuple(nudged))

    def _posed_on_cards(self, fit: CardFit, changed: npt.NDArray[np.bool_],
                        standing: list[TableCard]) -> CardFit:
        """A new card lying mostly on a card already there changes, white on white, only
        where it sticks out and where its print differs: the rectangle of that change can
        be turned a quarter (a few corner triangles and a glyph). The card below's outline
        moved onto the change (``_laid_on``) is tried too, and taken when it lies the other
        way round and explains the change better."""
        if not standing:
            return fit
        own = self.view.polygon_mask([fit.corners_mm])
        shares = [int(np.count_nonzero(own & self.view.polygon_mask([c.outline])))
                  for c in standing]
        best = int(np.argmax(shares))
        if shares[best] < ON_CARD_SHARE * max(int(np.count_nonzero(own)), 1) \
                or _turn_between(fit.corners_mm, standing[best].outline) < QUARTER_OFF_DEG:
            return fit
        forbidden = self._bare_unchanged(changed, standing)
        other = self._laid_on(standing[best], changed, forbidden)
        if _turn_between(fit.corners_mm, other.corners_mm) < QUARTER_OFF_DEG:
            return fit
        crop = _Crop.around(self.view, np.vstack([fit.corners_mm, other.corners_mm]),
                            margin_mm=5.0)
        return other if crop.score(other.corners_mm, changed, forbidden) \
            > crop.score(fit.corners_mm, changed, forbidden) else fit

    def _overlaps(self, corners: FloatArray, others: npt.NDArray[np.bool_]) -> bool:
        """Whether an outline covers the ``others`` mask by more than 1% of a card."""
        common = self.view.polygon_mask([corners]) & others
        return bool(np.count_nonzero(common) > 0.01 * self._card_px)

    def _restacked(self, state: Image, changed: npt.NDArray[np.bool_],
                   removed: list[TableCard], placed: list[CardFit],
                   nudged: list[tuple[TableCard, CardFit]],
                   ) -> tuple[list[CardFit], list[TableCard]]:
        """Cards put squarely on the top card, or taken off a card they covered: the
        outline does not change, only the face inside it does. A change left over inside
        the top card's outline is the card below showing again (the top card was taken),
        the same card (nudged or re-lit), or a new card on top of it."""
        accounted = [c.outline for c in removed] + [f.corners_mm for f in placed] \
            + [f.corners_mm for _, f in nudged]
        leftover = changed & ~self.view.polygon_mask(accounted, grow_mm=3.0) \
            if accounted else changed
        unexplained = leftover.copy()
        card_px = self._card_px
        if np.count_nonzero(leftover) < RESTACK_FRACTION * card_px:
            return [], []
        gone = {c.uid for c in removed} | {c.uid for c, _ in nudged}
        standing = [c for c in self.cards if c.uid not in gone]
        on_top: list[CardFit] = []
        taken: list[TableCard] = []
        for i in reversed(range(len(standing))):  # topmost first
            card, above = standing[i], standing[i + 1:]
            own = self.view.polygon_mask([card.outline])
            inner = own & ~self.view.polygon_mask([c.outline for c in above]) if above \
                else own
            if np.count_nonzero(leftover & inner) < RESTACK_FRACTION * card_px:
                continue
            ring = self.view.polygon_mask([card.outline], grow_mm=15.0) & ~own
            if np.count_nonzero(leftover & ring) > RESTACK_OUTSIDE * card_px:
                break  # the new card is not squarely on this one: no outline to copy
            leftover &= ~own
            looks = self._looks.get(card.uid)
            if looks is None:  # not seen placed (before a recalibration): no evidence
                continue
            if looks.matches_under(state, inner):
                taken.append(card)
            elif not looks.matches_own(state):
                on_top.append(self._laid_on(card, unexplained,
                                            self._bare_unchanged(unexplained, standing)))
        return on_top, taken

    def _bare_unchanged(self, changed: npt.NDArray[np.bool_],
                        standing: Sequence[TableCard]) -> npt.NDArray[np.bool_]:
        """Bare table (under no card ``standing``) that did not change: no new card lies
        there."""
        return np.asarray(~changed & self.view.seen & ~self.view.polygon_mask(
            [c.outline for c in standing]), dtype=bool)

    def _laid_on(self, below: TableCard, changed: npt.NDArray[np.bool_],
                 forbidden: npt.NDArray[np.bool_]) -> CardFit:
        """A card put (nearly) squarely on ``below``: that outline, moved to explain the
        change around it (a card laid a few mm off shows as a thin strip of it beside the
        card below, too thin to fit a card to on its own); ``forbidden``: where it cannot
        lie (``_bare_unchanged``)."""
        outline = below.outline
        side = outline[1] - outline[0]
        length, angle = float(np.hypot(*side)), float(np.degrees(np.arctan2(side[1], side[0])))
        if abs(length - self.card_mm[1]) < abs(length - self.card_mm[0]):  # long side first
            angle -= 90.0
        crop = _Crop.around(self.view, outline, margin_mm=self.card_mm[0] / 2)
        # The hill-climb can stall where it starts (no single step explains more of the
        # thin strip of change): it starts again a few mm and degrees off, and the best
        # explanation of the change wins.
        centre = outline.mean(axis=0)
        starts = [(outline, angle)] + [
            (card_corners((float(centre[0] + dx), float(centre[1] + dy)), angle + turn,
                          self.card_mm), angle + turn)
            for dx, dy, turn in ((LAID_ON_START_MM, 0, 0), (-LAID_ON_START_MM, 0, 0),
                                 (0, LAID_ON_START_MM, 0), (0, -LAID_ON_START_MM, 0),
                                 (0, 0, LAID_ON_START_DEG), (0, 0, -LAID_ON_START_DEG))]
        fits = [_refine(crop, start, start_angle, changed, forbidden, self.card_mm,
                        together=True)
                for start, start_angle in starts]
        outline = max(fits, key=lambda f: crop.score(f, changed, forbidden))
        centre = outline.mean(axis=0)
        return CardFit(outline, (float(centre[0]), float(centre[1])))

    def _removed(self, changed: npt.NDArray[np.bool_], bare: npt.NDArray[np.bool_],
                 ) -> list[TableCard]:
        removed: list[TableCard] = []
        # Top down, so that a card under others taken at the same time (a row, a trick)
        # is judged by what now lies on it: nothing.
        for i in reversed(range(len(self.cards))):
            card = self.cards[i]
            own = self.view.polygon_mask([card.outline])
            above = [c.outline for c in self.cards[i + 1:] if c not in removed]
            visible = own & ~self.view.polygon_mask(above) if above else own
            below = [c.outline for c in self.cards[:i]]
            uncovered = visible & ~self.view.polygon_mask(below) if below else visible
            n_visible = np.count_nonzero(visible)
            if n_visible < 0.05 * self._card_px:
                continue  # hidden under others: it cannot have been taken alone
            changed_share = np.count_nonzero(changed & visible) / n_visible
            if changed_share < REMOVED_CHANGED_BARE:
                continue
            n_uncovered = np.count_nonzero(uncovered)
            if n_uncovered == 0:  # it lay wholly on other cards: no bare table to see
                taken = changed_share >= REMOVED_CHANGED
            else:
                bare_share = np.count_nonzero(bare & uncovered) / n_uncovered
                taken = bare_share >= (REMOVED_BARE if changed_share >= REMOVED_CHANGED
                                       else REMOVED_ALL_BARE)
            if taken:
                removed.append(card)
        return removed[::-1]  # bottom first

    def _placed(self, changed: npt.NDArray[np.bool_], removed: list[TableCard],
                ) -> tuple[list[CardFit], list[tuple[TableCard, CardFit]]]:
        if removed:
            changed = changed & ~self.view.polygon_mask([c.outline for c in removed],
                                                         grow_mm=3.0)
        # A white card on a light table changes in pieces (its print, its edge): join
        # pieces a few mm apart, unless the joined blob is no card and the pieces are.
        size = round(JOIN_MM * self.view.px_per_mm) | 1
        joined = cv2.morphologyEx(changed.astype(np.uint8), cv2.MORPH_CLOSE,
                                  cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (size, size)))
        count, labels, stats, _ = cv2.connectedComponentsWithStats(joined)
        _, labels_apart = cv2.connectedComponents(changed.astype(np.uint8))
        standing = [c for c in self.cards if c not in removed]
        kept = [c.outline for c in standing]
        forbidden = ~joined.astype(bool) & self.view.seen
        if kept:
            forbidden &= ~self.view.polygon_mask(kept)
        card_px = self._card_px
        placed: list[CardFit] = []
        nudged: list[tuple[TableCard, CardFit]] = []
        for label in range(1, count):
            area = stats[label, cv2.CC_STAT_AREA]
            if area < MIN_RING_FRACTION * card_px:
                continue
            blob = labels == label
            # A white card on a light table changes little inside (only its edge, shadow
            # and print stand out): the card is everything that change encloses, or, when
            # only its edge shows, the hull of an outline of a card's size.
            region = fill_holes(blob) if area >= MIN_NEW_FRACTION * card_px \
                else self._ring(blob, kept)
            if region is None:
                continue
            fit = fit_card(self.view, region, forbidden, self.card_mm)
            if fit is None:  # the join merged a card with something else: the pieces alone
                pieces = np.unique(labels_apart[blob & changed])
                best = max((p for p in pieces if p), default=None,
                           key=lambda p: np.count_nonzero(labels_apart == p))
                if best is not None:
                    fit = fit_card(self.view, fill_holes(labels_apart == best),
                                   forbidden, self.card_mm)
            if fit is None:
                continue
            fit = self._posed_on_cards(fit, changed, standing)
            same = next((c for c in removed if _iou(self.view, c.outline, fit.corners_mm)
                         >= NUDGE_IOU), None)
            if same is not None:
                nudged.append((same, fit))
            elif any(_iou(self.view, c.outline, fit.corners_mm) >= SAME_PLACE_IOU
                     for c in standing):
                # The change lies where a card still lies: its face changed inside its own
                # outline (a card on it taken off, or another put squarely on it). That is
                # for ``_restacked`` to tell apart, not a new card fitted to the old place.
                continue
            elif all(_iou(self.view, f.corners_mm, fit.corners_mm) < NUDGE_IOU
                     for f in placed):
                # (a card laid partly on another changes in two pieces that the join may
                # leave apart, and a card is fitted to each: the same card, found twice)
                placed.append(fit)
                if fit.measured_mm is not None and not (
                        kept and self._overlaps(fit.corners_mm, self.view.polygon_mask(kept))):
                    self.sizes_seen.append(fit.measured_mm)
        return placed, nudged

    def _ring(self, blob: npt.NDArray[np.bool_], kept: Sequence[FloatArray],
              ) -> npt.NDArray[np.bool_] | None:
        """The convex hull of a change that outlines a whole card (its bounding rectangle
        within ``PARTIAL_MM`` of the card's size) where no card lies already (``kept``:
        a card moved a mm or re-lit changes along its edge too), else None."""
        ys, xs = np.nonzero(blob)
        pixels = np.column_stack([xs, ys])
        rect = _card_rect(self.view.to_mm(pixels.astype(np.float64)), self.card_mm)
        if rect is None or abs(rect[1][0] - self.card_mm[0]) > PARTIAL_MM \
                or abs(rect[1][1] - self.card_mm[1]) > PARTIAL_MM:
            return None
        hull = self.view.to_mm(cv2.convexHull(pixels.astype(np.int32))[:, 0].astype(np.float64))
        if any(_iou(self.view, outline, hull) >= NUDGE_IOU for outline in kept):
            return None
        return self.view.polygon_mask([hull])

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
        for card in placed:
            self._looks[card.uid] = _Looks.capture(self.view, card.outline, state,
                                                   self.reference)
        for card, fit in changes.nudged:  # what lay under it before is not known now
            self._looks[card.uid] = _Looks.capture(self.view, fit.corners_mm, state, None)
        for card in changes.removed:
            self._looks.pop(card.uid, None)
        self.reference = state.copy()
        assert self.background is not None
        # Learn the bare table wherever no card lies, so lighting drift does not
        # accumulate into false "foreground".
        covered = self.view.polygon_mask([c.outline for c in self.cards], grow_mm=4.0)
        self.background[~covered] = state[~covered]


def _long_axis_deg(corners: FloatArray) -> float:
    """The direction of an outline's longer sides, in degrees modulo 180."""
    sides = np.roll(corners, -1, axis=0) - corners
    longest = sides[int(np.argmax(np.linalg.norm(sides, axis=1)))]
    return float(np.degrees(np.arctan2(longest[1], longest[0]))) % 180.0


def _turn_between(a: FloatArray, b: FloatArray) -> float:
    """How far apart (degrees, 0-90) two outlines' long sides point."""
    turn = abs(_long_axis_deg(a) - _long_axis_deg(b)) % 180.0
    return min(turn, 180.0 - turn)


def _tuple_corners(corners: FloatArray) -> tuple[tuple[float, float], ...]:
    return tuple((round(float(x), 2), round(float(y), 2)) for x, y in corners)


def as_table_card(uid: str, fit: CardFit, reading: CardReading) -> TableCard:
    return TableCard(uid, reading.card, _tuple_corners(fit.corners_mm), reading.confidence)
