"""Piecepack coins on the Shove board: where each one rests, and which one is which.

Coins are found against the empty board (the first stable state): each blob of changed
colour is one coin, or several touching coins, split by their known size; a coin printed in
nearly the board's colours (beige on a carpet) changes it only in patches, and is found by
its change averaged over part of its size. Between two stable states coins that did not
move keep their ids (same place, same colour); a coin a few mm off with its colour was
nudged; any other coin that moved was knocked by the shoved coin, which stops behind the
coins it hit (it came from the front of the board).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from referee.tracking.topdown import Image, TableView, colour_change, fill_holes

COIN_MM: Final = 19.0
COIN_AREA_MM2: Final = math.pi * (COIN_MM / 2) ** 2
FOREGROUND_LEVEL: Final = 30
#: A coin whose print mixes with a patterned board changes only in patches; averaged over
#: this share of its diameter, its change is still this high (the still board's is ~3).
PATCH_FRACTION: Final = 0.4
PATCH_LEVEL: Final = 14
#: A coin within this distance of where it was has not moved (mm).
SAME_PLACE_MM: Final = 3.0
#: A coin whose disc changed less than this (90th percentile of the colour change since
#: the last stable state) lies where it lay, however its centre reads this time.
STILL_LEVEL: Final = 10
#: A coin seen stopping whose disc still changed this much (90th percentile of the colour
#: change) between the first and the last frame of the still run was still creeping: far
#: from the camera a pale coin slowing down moves too faintly for the motion gate
#: (shove-piecepack-1501: taken 80 mm short of where it stopped, p90 25; coins read 1-2 mm
#: short and 0.3-0.5 s early, p90 16-35). Coins at rest: at most 13, mostly under 8.
SETTLING_LEVEL: Final = 15
#: A coin missing from its place, and one of its colour this near it, was nudged (mm).
NUDGED_MM: Final = 6.0
#: A coin's centre is a distance-map peak at least this share of its radius deep, and
#: the next coin's centre is at least this many radii away.
PEAK_FRACTION: Final = 0.6
SEPARATION: Final = 1.4
#: Closing kernel, as a share of the coin's diameter.
CLOSE_FRACTION: Final = 0.6
#: A coin's unshadowed strong change is a whole disc when this share of the coin's area
#: lies within DISC_REACH radii of its centre; its unshadowed faint change (which may
#: lose the rim) is the coin when it holds MOST_OF_DISC.
WHOLE_DISC: Final = 0.85
MOST_OF_DISC: Final = 0.6
DISC_REACH: Final = 1.15
#: A coin's colour is measured within this share of its radius (inside its rim and shadow).
FACE_FRACTION: Final = 0.6
#: Two sightings of a coin in one place differ by at most ~5 in mean Lab colour (8-bit
#: OpenCV Lab); two different coins of this set by at least ~18.
SAME_COLOUR: Final = 10.0
#: A shadow: every channel at most this share of the board's, all within this of each other.
#: 0.95 takes in a soft shadow's faint outer part too, which on a pale coin close to the
#: board's colour pulled the centre 1-2 mm towards it at 0.9 (session 24: rms error of 261
#: coins at rest on 23 fresh clips 0.94 -> 0.72 mm; rulings of the 44 piecepack clips
#: 99.02% -> 99.67%).
SHADOW_DARKER: Final = 0.95
SHADOW_TINT: Final = 0.1

Colour = tuple[float, float, float]  # mean Lab (8-bit OpenCV scale)
Place = tuple[float, float]  # a coin's centre, table mm


@dataclass(frozen=True)
class Coin:
    id: str
    center: tuple[float, float]
    radius: float = COIN_MM / 2
    #: Mean Lab colour of the coin's face where it was seen (None: not measured).
    colour: Colour | None = field(default=None, compare=False)


@dataclass(frozen=True)
class CoinChanges:
    stopped: tuple[Coin, ...]  # the shoved coin first, then any it knocked
    removed: tuple[Coin, ...]

    @property
    def empty(self) -> bool:
        return not (self.stopped or self.removed)


def _filled_open(mask: npt.NDArray[np.bool_], view: TableView) -> npt.NDArray[np.uint8]:
    """Holes filled (a coin's glyph), then specks opened away, within the seen table."""
    filled = fill_holes(mask & view.seen).astype(np.uint8)
    return np.asarray(cv2.morphologyEx(filled, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8)),
                      np.uint8)


def _hysteresis(weak: npt.NDArray[np.bool_], strong: npt.NDArray[np.bool_],
                ) -> npt.NDArray[np.bool_]:
    """Weakly changed regions that hold a strongly changed pixel."""
    count, labels = cv2.connectedComponents(weak.astype(np.uint8))
    keep = np.zeros(count, bool)
    keep[np.unique(labels[strong & weak])] = True
    keep[0] = False
    return np.asarray(keep[labels], dtype=bool)


def find_coins(view: TableView, state: Image, background: Image) -> list[tuple[float, float]]:
    """Coin centres (mm) in a stable top-down state."""
    change = colour_change(state, background)
    patch = round(PATCH_FRACTION * COIN_MM * view.px_per_mm) | 1
    smooth = cv2.blur(change, (patch, patch))
    strong = _filled_open(change > FOREGROUND_LEVEL, view)
    seeds = strong | _filled_open(smooth > PATCH_LEVEL, view)
    # A coin close to the board's colour changes little: where a region changed a little
    # around a strong change, the region is the coin (its outline encloses it).
    near = cv2.dilate(seeds, cv2.getStructuringElement(
        cv2.MORPH_ELLIPSE, (round(COIN_MM * view.px_per_mm),) * 2)).astype(bool)
    radius_px = COIN_MM / 2 * view.px_per_mm
    size = round(CLOSE_FRACTION * 2 * radius_px) | 1
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (size, size))
    changed = _hysteresis((change > FOREGROUND_LEVEL // 2) & near, seeds.astype(bool))
    # Close the gaps a coin's print leaves (notches in its rim, a patchy face) before
    # specks are opened away (the fill closes only holes).
    faint = _filled_open(cv2.morphologyEx(changed.astype(np.uint8), cv2.MORPH_CLOSE, disc) > 0,
                         view)
    # The coin without its shadow: its strong change when that is a whole disc (a coin
    # unlike the board), else its faint change (a coin close to the board's colour).
    unshadowed = ~_shadow(state, background)
    discs = [(_filled_open(strong.astype(bool) & unshadowed, view), WHOLE_DISC),
             (_filled_open((faint > 0) & unshadowed, view), MOST_OF_DISC)]
    count, labels = cv2.connectedComponents(faint)
    centres: list[tuple[float, float]] = []
    for label in range(1, count):
        blob = (labels == label).astype(np.uint8)
        # Coins are the distance map's peaks: touching coins (or a coin and its faint
        # halo) part at their narrow waist; a blob too thin for a coin has no peak.
        distance = cv2.distanceTransform(blob, cv2.DIST_L2, 5)
        ys, xs = np.nonzero(blob)
        while True:
            peak = float(distance.max())
            if peak < PEAK_FRACTION * radius_px:
                break
            py, px = np.unravel_index(int(distance.argmax()), distance.shape)
            near = (xs - px) ** 2 + (ys - py) ** 2 <= radius_px ** 2
            raster = _centre(discs, (xs[near].mean(), ys[near].mean()), radius_px)
            cv2.circle(distance, (int(px), int(py)), round(SEPARATION * radius_px), 0.0, -1)
            x, y = view.to_mm(raster)[0]
            centres.append((float(x), float(y)))
    return centres


def _claim(coins: list[Coin], places: list[Place], colours: dict[Place, Colour],
           reach_mm: float, colour_blind: bool = False) -> tuple[list[tuple[Coin, Place]],
                                                                 list[Coin]]:
    """Each coin takes the nearest of ``places`` within ``reach_mm`` whose colour could be
    its own (any colour, if the coin's is unmeasured or ``colour_blind``); claimed places
    leave ``places``. Returns the (coin, place) pairs and the coins that found none."""
    claimed: list[tuple[Coin, Place]] = []
    left: list[Coin] = []
    for coin in coins:
        alike = [p for p in places if coin.colour is None or colour_blind
                 or math.dist(coin.colour, colours[p]) <= SAME_COLOUR]
        near = min(alike, key=lambda p: math.dist(p, coin.center), default=None)
        if near is not None and math.dist(near, coin.center) <= reach_mm:
            places.remove(near)
            claimed.append((coin, near))
        else:
            left.append(coin)
    return claimed, left


def _shadow(state: Image, background: Image) -> npt.NDArray[np.bool_]:
    """Where the board is darker but keeps its colour: a shadow, not a coin."""
    ratio = (cv2.GaussianBlur(state, (5, 5), 0).astype(np.float32) + 4) / \
        (cv2.GaussianBlur(background, (5, 5), 0).astype(np.float32) + 4)
    high, low = ratio.max(axis=2), ratio.min(axis=2)
    return np.asarray((high < SHADOW_DARKER) & (high - low < SHADOW_TINT), dtype=bool)


def _centre(masks: list[tuple[npt.NDArray[np.uint8], float]], rough: tuple[float, float],
            radius_px: float) -> npt.NDArray[np.float64]:
    """A coin's centre (raster): the middle of the first of ``masks`` that holds the coin
    as a disc (at least its share of the coin's area within DISC_REACH radii), else
    ``rough``. The faint change around a coin holds its shadow, on the side away from the
    light, which pulls a centre taken from it by up to 4 mm; the masks leave shadows out."""
    for mask, share in masks:
        centre = np.array(rough, np.float64)
        x0, y0 = (max(0, int(v - 2 * radius_px)) for v in centre)
        window = mask[y0:y0 + int(4 * radius_px) + 1, x0:x0 + int(4 * radius_px) + 1]
        ys, xs = np.nonzero(window)
        xs, ys = xs + x0, ys + y0
        for _ in range(3):
            reach = (xs - centre[0]) ** 2 + (ys - centre[1]) ** 2 <= \
                (DISC_REACH * radius_px) ** 2
            if reach.sum() < share * math.pi * radius_px ** 2:
                break
            centre = np.array([xs[reach].mean(), ys[reach].mean()])
        else:
            return centre[None]
    return np.array([rough], np.float64)


@dataclass
class CoinObserver:
    view: TableView
    coins: list[Coin] = field(default_factory=list)
    background: Image | None = None
    _serial: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    #: The stable state the coins were last committed on, and the one being compared.
    _last: Image | None = None
    _comparing: Image | None = None

    def start(self, state: Image) -> None:
        self.background = state.copy()
        self._last = self.background

    def compare(self, state: Image, first: Image | None = None) -> CoinChanges | None:
        """The coins that stopped and were removed since the last commit; None when a
        coin found at a new place still changed since ``first`` (the still run's first
        frame, warped): it has not stopped yet."""
        if self.background is None:
            self.start(state)
            return CoinChanges((), ())
        found = find_coins(self.view, state, self.background)
        lab = np.asarray(cv2.cvtColor(state, cv2.COLOR_BGR2LAB), np.uint8)
        colours = {p: self._colour(lab, p) for p in found}
        unmatched = list(found)
        self._comparing = state
        # A coin whose picture did not change lies where it lay: its centre, read afresh
        # from a faint or shadowed blob, may wander a few mm, which is no move.
        untouched = self._untouched(state)
        _, left = _claim(untouched, unmatched, colours, NUDGED_MM, colour_blind=True)
        # Still where it was, and still the same coin: a shoved coin that stops where a
        # knocked one lay takes its place but not its colour.
        others = [c for c in self.coins if c not in untouched or c in left]
        _, missing = _claim(others, unmatched, colours, SAME_PLACE_MM)
        # A coin a little off where it was, and still its colour, was nudged (or its
        # centre read a little differently): the same coin.
        moved, missing = _claim(missing, unmatched, colours, NUDGED_MM)
        # A coin whose disc looks as it did was neither taken nor knocked: at the faint
        # limit (a pale coin on a pale board, 2 px/mm) the finder can miss on one state a
        # coin it found on the last (shove-piecepack-1301). It stays where it lay.
        missing = [c for c in missing if c not in untouched]
        nudged = [Coin(coin.id, place, colour=colours[place]) for coin, place in moved]
        if first is not None and unmatched:
            creep = colour_change(state, first)
            if any(np.percentile(creep[self._disc(creep.shape, place, COIN_MM / 2 + 2)
                                       .astype(bool)], 90) >= SETTLING_LEVEL
                   for place in unmatched):
                self._comparing = None
                return None
        # The shoved coin stops behind (nearer the front than) every coin it knocked.
        unmatched.sort(key=lambda p: p[1])
        stopped: list[Coin] = []
        knocked = list(missing)
        for place in unmatched:
            if stopped and knocked:
                old = min(knocked, key=lambda c: math.dist(c.center, place))
                knocked.remove(old)
                stopped.append(Coin(old.id, place, colour=colours[place]))
            else:
                stopped.append(Coin(f"coin{next(self._serial)}", place, colour=colours[place]))
        return CoinChanges((*stopped[:1], *nudged, *stopped[1:]), tuple(knocked))

    def _untouched(self, state: Image) -> list[Coin]:
        """The coins whose disc looks as it did in the last committed stable state."""
        if self._last is None or not self.coins:
            return []
        change = colour_change(state, self._last)
        still = []
        for coin in self.coins:
            inside = change[self._disc(change.shape, coin.center, coin.radius).astype(bool)]
            if inside.size and np.percentile(inside, 90) < STILL_LEVEL:
                still.append(coin)
        return still

    def _disc(self, shape: tuple[int, ...], place: Place, radius_mm: float) -> Image:
        """A raster mask (1 inside) of the disc of ``radius_mm`` around ``place``."""
        mask = np.zeros(shape[:2], np.uint8)
        (x, y), = self.view.to_raster(place)
        cv2.circle(mask, (round(x), round(y)), max(1, round(radius_mm * self.view.px_per_mm)),
                   1, -1)
        return mask

    def _colour(self, lab: Image, place: Place) -> Colour:
        """Mean Lab colour within FACE_FRACTION of a coin's radius around ``place``."""
        mean = cv2.mean(lab, self._disc(lab.shape, place, FACE_FRACTION * COIN_MM / 2))
        return (float(mean[0]), float(mean[1]), float(mean[2]))

    def commit(self, changes: CoinChanges, *, keep: tuple[Coin, ...] = ()) -> None:
        """Apply a comparison; ``keep`` are coins that vanished impossibly (still held)."""
        moved = {c.id: c for c in changes.stopped}
        gone = {c.id for c in changes.removed} - {c.id for c in keep}
        kept = [moved.pop(c.id, c) for c in self.coins if c.id not in gone]
        self.coins = [*kept, *moved.values()]
        if self._comparing is not None:
            self._last, self._comparing = self._comparing, None
