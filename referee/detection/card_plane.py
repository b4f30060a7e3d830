"""The table's plane from the cards lying on it, for a picture of a table nobody calibrated.

Every card of a deck is the same rectangle on the table (63 x 88 mm, or the deck's size),
so a few cards seen whole tell how the camera sees the table: the homography (with the
lens's radial distortion, which bends a webcam's picture) that maps each of their outlines
onto that rectangle. ``card_shape`` then gives a card that shows only part of itself a
card's shape there, as it does on a calibrated table (``detect``).

The plane so found is the table's up to where on it the cards lie and how they are turned,
which no card tells and nothing here needs. One or two cards fit some plane however far off
their outlines are, so it takes three that agree (``MIN_FITTING``). Nor does a plane tell a
card's size, only its shape: cards fit the plane for a size whose length over width is
theirs (cards 44 x 67 mm fit one for bridge cards, 57 x 89, 1.35 mm off)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from referee.calibration.rectify import PlaneMap
from referee.calibration.solve import Lens
from referee.cards import CARD_MM, DECK_SIZES_MM
from referee.detection.crops import Corners, order_corners

#: A reference card fits the plane when every side and diagonal of its outline, mapped
#: onto the table, is within this of a card's (mm).
FIT_MM: Final = 3.0
#: A plane is taken only when at least this many cards fit it: one card's outline fits
#: some plane exactly, however far off its corners are, and two fit a plane and a lens bent
#: to them (with two, on 200 validation-design frames, 0.6 points fewer cards at least 40%
#: visible were outlined within IoU 0.9; models/README.md, session 55).
MIN_FITTING: Final = 3
#: Nor when those that fit it lie further off a card's shape than this on average (mm).
#: (Planes well found fit their cards to 0.1-0.6 mm; of those fitting two cards only, the
#: ones that fit them 2-3 mm off moved the cards near them 8-15 mm off their shape on
#: rendered frames; models/README.md, session 55.)
FIT_MEAN_MM: Final = 1.5
#: Of the sizes of card tried (``card_plane``), a later one must fit its cards less than
#: this many times as far off as an earlier one fitting as many (held-out frames of 63 x 88 mm
#: cards fitted a plane for bridge cards 0.38 and 0.72 mm off against 0.43 and 0.77: a
#: plane and lens bend a little either way; the partly covered cards near them, made bridge
#: cards, lay 18 of them more than 4 mm off; session 55).
OTHER_SIZE_OFF: Final = 0.5
#: Levenberg-Marquardt: at most this many steps, stopping when a step gains less than this
#: share of the squared error.
STEPS: Final = 10
STEP_GAIN: Final = 1e-4
#: The plane is refined on all cards, each weighing less the further off it lies (Cauchy's
#: weights), at each of these scales (mm) in turn (all cards pull at first, the plane from
#: one card being a poor guide far from it; then those that do not fit hardly at all),
#: before it is refined on those that fit. (With 30, 10 and 3 mm: as many planes on 400
#: rendered frames, as many covered cards within 2 mm of a card's shape, 1 ms a plane
#: later.)
ROBUST_SCALES_MM: Final = (30.0, FIT_MM)
#: So searched from each of at most this many homographies of one card, those that fit the
#: cards best, until MIN_FITTING fit (one card's homography, far from it, may fit the
#: others nearly as well the wrong way round: a card pointing away may look wider than
#: long).
STARTS: Final = 2
#: At most this many cards are left out, one at a time (``_fitted``; none for a size tried
#: after the first).
DROPS: Final = 3
#: The plane must map the whole picture onto the table (its horizon outside the picture,
#: with this margin as a share of the picture's size), and the lens must undo its bend at
#: the picture's corners: undone in LENS_ROUNDS fixed-point rounds, and bent again, they
#: lie within LENS_CHECK (normalised pixels: a pixel at 1280 across) of where they were.
HORIZON_MARGIN: Final = 0.25
LENS_ROUNDS: Final = 30
LENS_CHECK: Final = 1e-3
#: The lens's radial distortion is found with the plane (webcams bend straight lines
#: outwards), held near none by a prior: K1_PRIOR_MM of error weighs as much as a k1 of
#: K1_SCALE (in pixels normalised by the picture's longer side). Undistorting takes this
#: many fixed-point rounds.
K1_PRIOR_MM: Final = 0.1
K1_SCALE: Final = 0.1
UNDISTORT_ROUNDS: Final = 4

#: Where the cards seen whole tell no plane (fewer than MIN_FITTING, or ones that do not
#: agree), one card seen whole tells the plane near it, as a camera would see it whose
#: picture's middle is its optical centre and whose pixels are square (a webcam's or a
#: phone's; no lens bend): the camera that shows a card's rectangle (either way round)
#: nearest the outline, of those whose horizontal field of view is one of ONE_CARD_FOV_DEG.
#: The outline must then lie within ONE_CARD_RMS_PX of it (the root mean square of its
#: corners' x and y errors, as ``cv2.solvePnPGeneric`` gives it): outlines that are not one
#: card (a card under another taken for a whole one, two cards outlined as one), which a
#: homography of one card would fit exactly, lie further off.
#: (On 200 held-out and 200 validation-design frames with one or two cards seen whole, of
#: their outlines whose corners lay 15 px or more off the card's, 41 of 46 lay more than
#: 1.5 px off such a camera; of those within 5 px, 114 of 121 within it; session 56,
#: models/README.md.) One card does not tell its size: of 63 x 88 mm cards outlined 0.3-0.7
#: px off, 1-7 in 40 fitted a camera showing a bridge card (57 x 89) under half as far off,
#: by their corners' noise alone. So the first of the sizes it may be that it fits is taken.
ONE_CARD_FOV_DEG: Final = tuple(45.0 + 2.5 * k for k in range(19))
ONE_CARD_RMS_PX: Final = 1.5
#: An outline with a side shorter than this (pixels) tells no plane.
ONE_CARD_MIN_SIDE_PX: Final = 4.0

#: Where neither tells a plane, the ends of cards that show one end only (the other under
#: another card, or beyond the picture's edge) may, with the cards seen whole (``ends_plane``):
#: each such end is a card's width across and its sides at right angles to it, as a camera
#: sees them whose picture's middle is its optical centre. Its horizontal field of view is
#: searched between ONE_CARD_FOV_DEG's first and last, from their middle, in at most
#: ENDS_EVALUATIONS steps (each with 4 more evaluations for its Jacobian: 20-70 ms for a
#: search that runs to the end on a 2-core CPU; 3.5-5 ms a frame on average over rendered
#: frames, and scipy's import, 0.6-0.9 s, on the first call in a process). An end fits the
#: plane when its width, and how far each of its corners lies beyond the other along that
#: corner's side (its width times the cosine of the corner's angle), are within ENDS_FIT_MM
#: of a card's (a card seen whole: its sides and diagonals); the plane is taken when
#: MIN_FITTING fit it, ENDS_FIT_MEAN_MM off on average. Ends are outlined less well than
#: cards seen whole. (On 200 validation-design frames, cards at
#: least 40% visible outlined within IoU 0.9: 80.4% with no plane from ends; with 4 and 2
#: mm, and 5 and 2, 81.7%; with 5 and 3, and 6 and 3, 82.0%; with two fitting instead of
#: three, 81.8%, in an earlier, slower search; session 60, models/README.md.)
ENDS_FIT_MM: Final = 5.0
ENDS_FIT_MEAN_MM: Final = 3.0
ENDS_EVALUATIONS: Final = 50

FloatArray = npt.NDArray[np.float64]


def _rectangle(card_mm: tuple[float, float], lengthwise: bool) -> FloatArray:
    """A card's corners on the table, clockwise from the origin; its first side a card's
    width (``lengthwise`` False) or its length."""
    w, h = card_mm if not lengthwise else card_mm[::-1]
    return np.array([[0.0, 0.0], [w, 0.0], [w, h], [0.0, h]])


def _expected(card_mm: tuple[float, float], lengthwise: bool) -> FloatArray:
    """The four sides and two diagonals of ``_rectangle``."""
    return np.asarray(_distances(_rectangle(card_mm, lengthwise)[None])[0], dtype=np.float64)


def _distances(quads: FloatArray) -> FloatArray:
    """For (..., 4, 2) quads (or 4 x 3 points in space): (..., 6), their four sides (0-1,
    1-2, 2-3, 3-0) and diagonals."""
    pairs = quads[..., [0, 1, 2, 3, 0, 1], :] - quads[..., [1, 2, 3, 0, 2, 3], :]
    return np.asarray(np.linalg.norm(pairs, axis=-1), dtype=np.float64)


def _errors(h: FloatArray, quads: FloatArray, expected: FloatArray,
            k1: FloatArray | float = 0.0) -> FloatArray:
    """Each quad's (N x 4 x 2, normalised pixels) sides and diagonals, straightened
    (``_straightened``, ``k1``) and mapped by homography ``h``, less a card's (``expected``,
    N x 6): N x 6 mm, NaN where a corner lies on the plane's horizon. ``h`` may be B x 3 x 3
    and ``k1`` B long, for B planes at once (B x N x 6)."""
    hs, k1s = np.asarray(h, dtype=np.float64), np.asarray(k1, dtype=np.float64)
    points = quads
    if np.any(k1s != 0):
        points = _straightened(quads, k1s[..., None, None, None], UNDISTORT_ROUNDS)
    m = hs[..., None, None, :, :]  # (B x) 1 x 1 x 3 x 3, against (B x) N x 4 points
    x, y = points[..., 0], points[..., 1]
    w = m[..., 2, 0] * x + m[..., 2, 1] * y + m[..., 2, 2]
    w = np.where(np.abs(w) > 1e-12, w, np.nan)
    xy = np.stack([(m[..., 0, 0] * x + m[..., 0, 1] * y + m[..., 0, 2]) / w,
                   (m[..., 1, 0] * x + m[..., 1, 1] * y + m[..., 1, 2]) / w], axis=-1)
    return np.asarray(_distances(xy) - expected, dtype=np.float64)


def _straightened(points: FloatArray, k1: FloatArray | float, rounds: int) -> FloatArray:
    """Normalised points (..., 2) where a lens bending by ``k1`` (OpenCV's radial model:
    bent = straight * (1 + k1 r^2); ``k1`` broadcast against the points' leading axes) would
    show them straight, found in ``rounds`` fixed-point rounds."""
    straight = points
    for _ in range(rounds):
        straight = points / (1 + k1 * (straight ** 2).sum(axis=-1, keepdims=True))
    return np.asarray(straight, dtype=np.float64)


def _refined(h: FloatArray, k1: float, quads: FloatArray, expected: FloatArray,
             weights: FloatArray | None = None) -> tuple[FloatArray, float]:
    """``h`` (normalised pixels -> mm) and the lens's radial distortion ``k1`` moved by
    Levenberg-Marquardt steps to the least weighted squared error of the quads' sides and
    diagonals (and the prior on ``k1``). (Where the cards lie on the table is free: the
    damping keeps it where it starts.)"""
    scale = h[2, 2] if abs(h[2, 2]) > 1e-12 else 1.0
    params = np.append((h / scale).ravel()[:8], k1)
    root = np.ones(len(quads)) if weights is None else np.sqrt(weights)

    def residuals(p: FloatArray) -> FloatArray:
        """B x 9 parameters -> B x (6 N + 1) residuals."""
        hs = np.concatenate([p[:, :8], np.ones((len(p), 1))], axis=1).reshape(-1, 3, 3)
        errors = _errors(hs, quads, expected, p[:, 8]) * root[None, :, None]
        return np.concatenate([errors.reshape(len(p), -1),
                               K1_PRIOR_MM * p[:, 8:] / K1_SCALE], axis=1)

    current = residuals(params[None])[0]
    cost = float(current @ current)
    damping = 1e-3
    for _ in range(STEPS):
        if not np.isfinite(cost):
            break
        steps = 1e-6 * np.maximum(np.abs(params), 1e-3)
        nudged = residuals(params[None] + np.diag(steps))
        jacobian = ((nudged - current) / steps[:, None]).T
        normal = jacobian.T @ jacobian
        gradient = jacobian.T @ current
        while damping < 1e9:
            step = np.linalg.solve(normal + damping * np.diag(np.diag(normal) + 1e-12),
                                   -gradient)
            trial = residuals((params + step)[None])[0]
            trial_cost = float(trial @ trial)
            if np.isfinite(trial_cost) and trial_cost < cost:
                break
            damping *= 10
        else:
            break
        gain = (cost - trial_cost) / max(cost, 1e-12)
        params, current, cost = params + step, trial, trial_cost
        damping = max(damping / 10, 1e-9)
        if gain < STEP_GAIN:
            break
    return np.append(params[:8], 1.0).reshape(3, 3), float(params[8])


@dataclass(frozen=True)
class CardPlane:
    """The table's plane the cards tell, the size of card they tell it for (mm: width,
    length), how many of them fit it and how far off they lie on average (mm)."""

    plane: PlaneMap
    card_mm: tuple[float, float]
    fitting: int
    off_mm: float

    def beats(self, other: CardPlane | None) -> bool:
        """Whether this plane (for a later size of card) is taken over ``other``: none, or
        fewer fit it, or as many, this one less than OTHER_SIZE_OFF times as far off."""
        return other is None or self.fitting > other.fitting or (
            self.fitting == other.fitting and self.off_mm < OTHER_SIZE_OFF * other.off_mm)


def card_plane(outlines: Sequence[Corners], image_size: tuple[int, int],
               sizes: Sequence[tuple[float, float]] = DECK_SIZES_MM) -> CardPlane | None:
    """The table's plane from the outlines (4 x 2 image pixels) of cards seen whole, for a
    size of card of ``sizes`` (the deck's when it is known, else those decks come in, the
    most common first; ``_fitted``), or None when none fits. A later size is tried only when
    not all the cards fit an earlier one, and then searched without leaving any card out
    (``DROPS``: a search costs 2-5 ms); it is taken only when more cards fit it, or as many
    less than OTHER_SIZE_OFF times as far off on average."""
    best: CardPlane | None = None
    for k, size in enumerate(sizes):
        if best is not None and best.fitting == len(outlines):
            break
        found = _fitted(outlines, image_size, size, DROPS if k == 0 else 0)
        if found is not None and found.beats(best):
            best = found
    return best


def _fitted(outlines: Sequence[Corners], image_size: tuple[int, int],
            card_mm: tuple[float, float] = CARD_MM, drops: int = DROPS) -> CardPlane | None:
    """The homography and the lens's radial distortion that map the outlines best onto a
    card's rectangle (``card_mm``) on the table; or None unless at least MIN_FITTING of them
    fit it (``FIT_MM``), FIT_MEAN_MM on average, and it maps the whole picture onto the
    table.

    The search starts from the outlines' own homographies (``_starts``) and takes all the
    cards into account, those far off less and less (``_searched``). When too few then fit,
    the card furthest off is left out and the search made again, up to ``drops`` times
    (``card_plane``: DROPS for the first size, none for later ones; a card outlined wrongly
    bends a plane searched for with it)."""
    if len(outlines) < MIN_FITTING:
        return None
    width, height = image_size
    # pixels normalised about the picture's middle, so that the homography's entries are
    # of one size
    units = _Normalised.of(image_size)
    middle, unit = units.middle, units.unit
    quads = np.stack([(order_corners(q) - middle) / unit for q in outlines])
    used = np.ones(len(quads), dtype=bool)
    for dropped in range(drops + 1):
        tried = []
        for start in _starts(quads[used], card_mm):
            tried.append(_searched(start, quads[used], card_mm))
            if tried[-1][2].sum() >= MIN_FITTING:
                break
        h, k1, fits = min(tried, key=lambda f: (-f[2].sum(), _loss(
            _card_errors(f[0], quads[used][f[2]], card_mm, f[1])[0]).sum()))
        if fits.sum() >= MIN_FITTING or used.sum() <= MIN_FITTING or dropped == drops:
            break
        errors = np.full(len(quads), -np.inf)
        errors[used] = _card_errors(h, quads[used], card_mm, k1)[0]
        used[int(np.argmax(errors))] = False
    off = float(_card_errors(h, quads[used][fits], card_mm, k1)[0].mean()) \
        if fits.any() else np.inf
    if fits.sum() < MIN_FITTING or off > FIT_MEAN_MM:
        return None
    if not _sees_table(h, k1, units.half):
        return None
    image_to_table = h @ units.matrix
    lens = Lens(units.pixels, np.array([k1, 0.0, 0.0, 0.0, 0.0])) if k1 != 0.0 else None
    return CardPlane(PlaneMap(lens, image_to_table / image_to_table[2, 2], (width, height)),
                     card_mm, int(fits.sum()), off)


@dataclass(frozen=True)
class _Normalised:
    """Pixels normalised about the picture's middle (``middle``) by its longer side
    (``unit``), as the planes are searched in; ``size``, its width and height (pixels)."""

    middle: FloatArray
    unit: float
    size: tuple[int, int]

    @classmethod
    def of(cls, image_size: tuple[int, int]) -> _Normalised:
        width, height = image_size
        return cls(np.array([width / 2, height / 2]), float(max(width, height)),
                   (width, height))

    @property
    def half(self) -> tuple[float, float]:
        """The picture's half width and half height, normalised."""
        return float(self.middle[0] / self.unit), float(self.middle[1] / self.unit)

    @property
    def matrix(self) -> FloatArray:
        """Pixels -> normalised pixels."""
        m, u = self.middle, self.unit
        return np.array([[1 / u, 0, -m[0] / u], [0, 1 / u, -m[1] / u], [0, 0, 1]])

    @property
    def pixels(self) -> FloatArray:
        """Normalised pixels -> pixels (``matrix``'s inverse; a camera matrix whose focal
        length is ``unit``)."""
        m, u = self.middle, self.unit
        return np.array([[u, 0, m[0]], [0, u, m[1]], [0, 0, 1]])

    def focal(self, fov_deg: float) -> float:
        """The focal length (pixels) of a camera whose picture is ``fov_deg`` wide."""
        return float(self.middle[0] / np.tan(np.radians(fov_deg) / 2))

    def camera(self, focal: float) -> FloatArray:
        """The camera matrix of a camera with that focal length (pixels), its optical
        centre the picture's middle, its pixels square."""
        m = self.middle
        return np.array([[focal, 0.0, m[0]], [0.0, focal, m[1]], [0.0, 0.0, 1.0]])

    def plane(self, table_to_image: FloatArray) -> PlaneMap | None:
        """The plane a camera maps the table (mm) onto the picture by (``table_to_image``),
        or None when it maps no picture (its matrix singular) or the picture is not all on
        the table (the horizon in it: ``_sees_table``)."""
        if abs(np.linalg.det(table_to_image)) < 1e-12:
            return None
        image_to_table = np.linalg.inv(table_to_image)
        if not _sees_table(image_to_table @ self.pixels, 0.0, self.half):
            return None
        return PlaneMap(None, image_to_table / image_to_table[2, 2], self.size)


def _starts(quads: FloatArray, card_mm: tuple[float, float]) -> list[FloatArray]:
    """Homographies to search from: of each quad's own onto a card (both ways round: a card
    pointing away from a slanted camera may look wider than long), the STARTS that all the
    quads fit best (the least sum of Cauchy's loss of how far off each is: a count of those
    that do not fit, softened)."""
    homographies = np.stack([cv2.getPerspectiveTransform(
        quad.astype(np.float32), _rectangle(card_mm, lengthwise).astype(np.float32))
        for quad in quads for lengthwise in (False, True)]).astype(np.float64)
    worst = np.stack([np.abs(_errors(homographies, quads, _expected(card_mm, lengthwise)))
                      .max(axis=2) for lengthwise in (False, True)]).min(axis=0)
    order = np.argsort(_loss(worst).sum(axis=1), kind="stable")
    return [homographies[k] for k in order[:STARTS]]


def _loss(off: FloatArray) -> FloatArray:
    """Cauchy's loss of how far off cards are (mm; FIT_MM its scale; NaN and inf, a corner
    on the horizon: as far off as any)."""
    far = np.nan_to_num(np.asarray(off, dtype=np.float64), nan=1e6, posinf=1e6)
    return np.asarray(np.log1p((np.minimum(far, 1e6) / FIT_MM) ** 2), dtype=np.float64)


def _searched(h: FloatArray, quads: FloatArray, card_mm: tuple[float, float]
              ) -> tuple[FloatArray, float, npt.NDArray[np.bool_]]:
    """From the homography ``h``: the plane and lens (``k1``) refined on all quads, those
    far off weighing less (one card's homography is a poor guide far from it, and a card
    outlined wrongly fits no plane), then on those that fit it; and which fit it then."""
    k1 = 0.0
    for scale in ROBUST_SCALES_MM:
        errors, expected = _card_errors(h, quads, card_mm, k1)
        h, k1 = _refined(h, k1, quads, expected, 1 / (1 + (errors / scale) ** 2))
    errors, expected = _card_errors(h, quads, card_mm, k1)
    fits = errors <= FIT_MM
    if fits.sum() >= MIN_FITTING:
        h, k1 = _refined(h, k1, quads[fits], expected[fits])
        fits = _card_errors(h, quads, card_mm, k1)[0] <= FIT_MM
    return h, k1, fits


def _card_errors(h: FloatArray, quads: FloatArray, card_mm: tuple[float, float],
                 k1: float = 0.0) -> tuple[FloatArray, FloatArray]:
    """How far off a card's each quad is on the table (its sides' and diagonals' largest
    error, mm; each quad either way round, whichever is nearer; inf where a corner lies on
    the horizon), and the sides and diagonals it should have so."""
    options = [_expected(card_mm, lengthwise) for lengthwise in (False, True)]
    errors = [np.abs(_errors(h, quads, e, k1)).max(axis=1) for e in options]
    errors = [np.where(np.isfinite(e), e, np.inf) for e in errors]
    lengthwise = errors[1] < errors[0]
    expected = np.where(lengthwise[:, None], options[1], options[0])
    return np.minimum(*errors), np.asarray(expected, dtype=np.float64)


def _sees_table(h: FloatArray, k1: float, half: tuple[float, float]) -> bool:
    """Whether the lens (``k1``) undoes its bend all over the picture (normalised pixels,
    ``half`` its half width and height: a barrel bend too strong has no straight picture
    for its corners) and the plane ``h`` maps the picture, and a margin round it, onto the
    table in front of the camera (the horizon beyond it)."""
    x, y = half
    corners = np.array([[-x, -y], [x, -y], [x, y], [-x, y]])
    straight = _straightened(corners, k1, LENS_ROUNDS)
    bent = straight * (1 + k1 * (straight ** 2).sum(axis=1, keepdims=True))
    if not np.all(np.isfinite(bent)) or np.abs(bent - corners).max() > LENS_CHECK:
        return False
    around = np.concatenate([straight * (1 + HORIZON_MARGIN), [[0.0, 0.0]]])
    w = around @ h[2, :2] + h[2, 2]
    return bool(np.all(w > 0) or np.all(w < 0))


def one_card_plane(outline: Corners, image_size: tuple[int, int],
                   sizes: Sequence[tuple[float, float]] = DECK_SIZES_MM) -> CardPlane | None:
    """The table's plane as a camera sees it (``ONE_CARD_FOV_DEG``) that shows a card of
    the first of ``sizes`` it can where ``outline`` (4 x 2 image pixels) lies, a corner of
    the card at the table's origin: within ONE_CARD_RMS_PX, the whole picture on the table
    (the horizon beyond it, as ``card_plane`` takes it). None when no size fits so, or the
    outline is no quad with sides ONE_CARD_MIN_SIDE_PX long. (Its ``fitting`` is 1; its
    ``off_mm``, how far the outline's sides and diagonals lie off the card's on it.)"""
    pixels = order_corners(np.asarray(outline, dtype=np.float64).reshape(4, 2))
    if not np.all(np.isfinite(pixels)) or np.linalg.norm(
            pixels - np.roll(pixels, -1, axis=0), axis=1).min() < ONE_CARD_MIN_SIDE_PX:
        return None
    units = _Normalised.of(image_size)
    cameras = [units.camera(units.focal(fov)) for fov in ONE_CARD_FOV_DEG]
    for size in sizes:
        # the camera nearest the outline: how far off (px), the card's turn (Rodrigues'
        # vector) and shift (mm), the camera matrix
        nearest: tuple[float, FloatArray, FloatArray, FloatArray] | None = None
        for lengthwise in (False, True):
            card = np.column_stack([_rectangle(size, lengthwise), np.zeros(4)])
            for camera in cameras:
                try:
                    _, turns, shifts, errors = cv2.solvePnPGeneric(
                        card, pixels, camera, None, flags=cv2.SOLVEPNP_IPPE)
                except cv2.error:
                    continue
                if errors is None:  # (no pose found)
                    continue
                for turn, shift, rms in zip(turns, shifts, np.ravel(errors), strict=True):
                    if np.isfinite(rms) and (nearest is None or rms < nearest[0]):
                        nearest = (float(rms), np.asarray(turn, dtype=np.float64),
                                   np.asarray(shift, dtype=np.float64), camera)
        if nearest is None or nearest[0] > ONE_CARD_RMS_PX:
            continue
        _, turn, shift, camera = nearest
        rotation = cv2.Rodrigues(turn)[0]
        plane = units.plane(camera @ np.column_stack([rotation[:, 0], rotation[:, 1],
                                                       shift.ravel()]))
        if plane is None:
            continue
        off = _card_errors(np.eye(3), plane.to_table(pixels)[None], size)[0]
        return CardPlane(plane, size, 1, float(off[0]))
    return None


def ends_plane(ends: Sequence[Corners], wholes: Sequence[Corners],
               image_size: tuple[int, int], card_mm: tuple[float, float] = CARD_MM
               ) -> CardPlane | None:
    """The table's plane, for cards ``card_mm`` in size, from the ends of cards that show one
    end only (each 4 x 2 image pixels, as ``card_shape.shown_end`` gives it: the end's two
    corners, then the corner each leads to along the card's side) and the outlines of cards
    seen whole: the plane a camera sees it on whose picture's middle is its optical centre
    and whose pixels are square (no lens bend; its field of view searched: see ``ENDS_FIT_MM``),
    on which each end is a card's width across and its sides at right angles to it, and
    each card seen whole a card's rectangle. None unless MIN_FITTING of them fit it, within
    ENDS_FIT_MEAN_MM on average, and it maps the whole picture onto the table (the horizon
    beyond it, as ``card_plane`` takes it)."""
    from scipy.optimize import least_squares  # (imported here: it takes a second)

    units = _Normalised.of(image_size)
    middle = units.middle
    shown = np.asarray(ends, dtype=np.float64).reshape(-1, 4, 2)
    # (an end with a corner not finite, or a side of no length, tells nothing)
    shown = shown[np.all(np.isfinite(shown), axis=(1, 2))
                  & (np.linalg.norm(shown[:, 0] - shown[:, 1], axis=1) > 0)
                  & (np.linalg.norm(shown[:, 2] - shown[:, 0], axis=1) > 0)
                  & (np.linalg.norm(shown[:, 3] - shown[:, 1], axis=1) > 0)]
    seen = np.stack([order_corners(q) for q in wholes]) if len(wholes) else np.zeros((0, 4, 2))
    if len(shown) + len(seen) < MIN_FITTING or not np.all(np.isfinite(seen)):
        return None
    low, high = min(ONE_CARD_FOV_DEG), max(ONE_CARD_FOV_DEG)
    widest, focal, narrowest = (units.focal(fov) for fov in (high, (low + high) / 2, low))
    # Start from the table square to the camera, as far off as the cards' ends are wide.
    ends_px = float(np.median([*np.linalg.norm(shown[:, 0] - shown[:, 1], axis=1),
                               *np.linalg.norm(seen[:, 0] - seen[:, 1], axis=1)]))
    if not ends_px > 0:
        return None
    distance = card_mm[0] * focal / ends_px
    start = np.array([0.0, 0.0, 1 / distance, np.log(focal)])
    if not np.all(np.isfinite(_ends_errors(start, shown, seen, middle, card_mm))):
        return None
    try:
        found = least_squares(
            _ends_errors, start, args=(shown, seen, middle, card_mm), loss="cauchy",
            f_scale=ENDS_FIT_MM, x_scale=[1 / distance] * 3 + [1.0],
            bounds=([-np.inf] * 3 + [np.log(widest)], [np.inf] * 3 + [np.log(narrowest)]),
            max_nfev=ENDS_EVALUATIONS)
    except ValueError:  # (numpy's LinAlgError among them)
        return None
    if not np.all(np.isfinite(found.x)):
        return None
    off = _ends_off(found.x, shown, seen, middle, card_mm)
    fits = off <= ENDS_FIT_MM
    if fits.sum() < MIN_FITTING or off[fits].mean() > ENDS_FIT_MEAN_MM:
        return None
    normal, focal = found.x[:3], float(np.exp(found.x[3]))
    # the table's axes: two at right angles on the plane, from the point on it nearest the
    # camera
    unit = normal / np.linalg.norm(normal)
    helper = np.eye(3)[int(np.argmin(np.abs(unit)))]
    first = np.cross(unit, helper)
    first /= np.linalg.norm(first)
    plane = units.plane(units.camera(focal) @ np.column_stack(
        [first, np.cross(unit, first), normal / (normal @ normal)]))
    if plane is None:
        return None
    return CardPlane(plane, card_mm, int(fits.sum()), float(off[fits].mean()))


def _rays(pixels: FloatArray, focal: float, middle: FloatArray) -> FloatArray:
    """N x 2 pixels -> N x 3 directions from the camera (its depth 1)."""
    return np.column_stack([(pixels - middle) / focal, np.ones(len(pixels))])


def _ends_errors(params: FloatArray, ends: FloatArray, wholes: FloatArray,
                 middle: FloatArray, card_mm: tuple[float, float]) -> FloatArray:
    """For the plane ``params`` (its normal n, the table the points X with n . X = 1 in the
    camera's frame, in mm; the log of the focal length in pixels): each end's (N x 4 x 2
    pixels, ``ends_plane``) width less a card's, and how far each of its corners lies beyond
    the other along that corner's side (mm: the end's width times the cosine of the angle);
    then each card seen whole's (M x 4 x 2) sides and diagonals less a card's, either way
    round (3 N + 6 M, as 3 rows of N then 6 of M)."""
    normal, focal = params[:3], np.exp(params[3])

    def on_table(quads: FloatArray) -> FloatArray:
        rays = _rays(quads.reshape(-1, 2), focal, middle)
        return np.asarray((rays / (rays @ normal)[:, None]).reshape(-1, 4, 3),
                          dtype=np.float64)

    errors = []
    if len(ends):
        points = on_table(ends)
        across = points[:, 1] - points[:, 0]
        sides = (points[:, 2] - points[:, 0], points[:, 3] - points[:, 1])
        errors += [np.linalg.norm(across, axis=1) - card_mm[0],
                   *((side * across).sum(axis=1) / np.linalg.norm(side, axis=1)
                     for side in sides)]
    if len(wholes):
        distances = _distances(on_table(wholes))
        either = [distances - _expected(card_mm, lengthwise) for lengthwise in (False, True)]
        nearer = np.abs(either[0]).max(axis=1) <= np.abs(either[1]).max(axis=1)
        errors += list(np.where(nearer[:, None], either[0], either[1]).T)
    return np.concatenate(errors)


def _ends_off(params: FloatArray, ends: FloatArray, wholes: FloatArray, middle: FloatArray,
              card_mm: tuple[float, float]) -> FloatArray:
    """How far each end lies off a card's end, and each card seen whole off a card's
    rectangle, on the plane ``params`` (``_ends_errors``: its largest error, mm; inf where
    not finite)."""
    errors = np.abs(_ends_errors(params, ends, wholes, middle, card_mm))
    k = len(ends)
    off = np.concatenate([errors[:3 * k].reshape(3, k).max(axis=0, initial=0.0),
                          errors[3 * k:].reshape(6, -1).max(axis=0, initial=0.0)])
    return np.asarray(np.where(np.isfinite(off), off, np.inf), dtype=np.float64)
