"""Card outlines in an uncalibrated photo, by shape: bright, unsaturated, card-shaped regions.

A baseline finder with no learned weights: it finds cards that lie apart on a surface
darker or more colourful than card stock, and splits touching cards only when their union
is clearly two card shapes. (The tracker does not need it: on a calibrated table the
difference between stable states gives each new card's outline.)
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt
from shapely.geometry import MultiPoint, Polygon, box
from shapely.ops import unary_union

from referee.detection.crops import (
    CARD_H_MM,
    CARD_W_MM,
    SUIT_BAND_MM,
    order_corners,
    short_side,
)

Image = npt.NDArray[np.uint8]
Points = list[list[float]]
CARD_ASPECT: Final = 88.0 / 63.0
WORK_SIDE: Final = 800  # pixels on the long side while searching
#: A bright region must fill this much of its convex hull to be a card.
MIN_FILL: Final = 0.3
#: Two outlines overlapping this much (intersection over union) are the same card.
SAME_CARD_IOU: Final = 0.5
#: What shows of a card (``shown_parts``) leaves out pieces smaller than this share of it:
#: slivers where the card above is outlined a pixel or two short of its true edge.
SLIVER_SHARE: Final = 0.02
#: ... and strips narrower than twice this share of its width (``shown_parts``).
SLIVER_WIDTH: Final = 0.03
#: ``under_cards`` (a card under another, showing a strip beyond one of its sides): looked
#: for beyond the sides that a learned outline holding at least UNDER_HELD of the card
#: reaches past by UNDER_REACHED_MM (the detector outlines such a pair as one), as straight
#: edges from UNDER_MIN_SHOWN_MM out: the UNDER_PEAKS strongest edges (UNDER_EDGE_RATIO
#: times the median gradient) on each line across the side, and up to UNDER_LINES lines
#: through them within UNDER_MAX_TURN degrees of the side, UNDER_FIT_PX wide, that
#: UNDER_MIN_ROWS of the 24 lines across meet (chosen on the real photos' train split and
#: validation-design frames, models/README.md).
UNDER_HELD: Final = 0.7
UNDER_REACHED_MM: Final = 8.0
UNDER_MIN_SHOWN_MM: Final = 4.0
UNDER_PEAKS: Final = 4
UNDER_EDGE_RATIO: Final = 4.0
UNDER_LINES: Final = 3
UNDER_MAX_TURN: Final = 20.0
UNDER_FIT_PX: Final = 2.0
UNDER_MIN_ROWS: Final = 12
UNDER_MIN_SIDE_PX: Final = 8.0


@dataclass(frozen=True)
class Outline:
    corners: npt.NDArray[np.float64]  # 4 x 2 image pixels
    score: float  # how card-like: solidity times aspect agreement, 0..1
    #: Found by the learned detector (``score`` is then its confidence), not by shape.
    learned: bool = False
    #: One end of a learned box squarer than a card (``learned.split_merged``).
    split: bool = False
    #: The learned box these corners were tightened from (``learned.tighten``), if any.
    box: npt.NDArray[np.float64] | None = field(default=None, compare=False, repr=False)


def _whiteness(image: Image) -> npt.NDArray[np.uint8]:
    hsv = cv2.cvtColor(image, cv2.COLOR_BGR2HSV)
    value = hsv[:, :, 2].astype(np.int16)
    saturation = hsv[:, :, 1].astype(np.int16)
    white = np.clip(value - saturation, 0, 255).astype(np.uint8)
    return np.asarray(cv2.GaussianBlur(white, (5, 5), 0), np.uint8)


def _card_like(contour: npt.NDArray[np.int32], area_total: float,
               cut_off: Callable[[npt.NDArray[np.int32]], bool]) -> Outline | None:
    # A court card's print can reach its thin white margin, so its bright region may be
    # a broken ring: judge the shape by its convex hull, if the ring is most of it.
    hull = cv2.convexHull(contour)
    area = cv2.contourArea(hull)
    if not 0.004 * area_total <= area <= 0.7 * area_total \
            or cv2.contourArea(contour) < MIN_FILL * area:
        return None
    (cx, cy), (w, h), angle = cv2.minAreaRect(hull)
    if min(w, h) < 12:
        return None
    aspect = max(w, h) / min(w, h)
    solidity = area / (w * h)
    aspect_fit = max(0.0, 1 - abs(aspect - CARD_ASPECT) / 0.45)
    if cut_off(np.asarray(hull, dtype=np.int32)) and aspect <= CARD_ASPECT + 0.3:
        aspect_fit = max(aspect_fit, 0.8)  # cut off by the frame: only part of the card
    score = solidity * aspect_fit
    if solidity < 0.82 or aspect_fit <= 0:
        return None
    corners = _quad(contour)
    if corners is None:
        corners = cv2.boxPoints(((cx, cy), (w, h), angle)).astype(np.float64)
    return Outline(corners, float(score))


def _quad(contour: npt.NDArray[np.int32]) -> npt.NDArray[np.float64] | None:
    """Four corners from the contour's polygon when it has exactly four (perspective)."""
    hull = cv2.convexHull(contour)
    perimeter = cv2.arcLength(hull, True)
    for fraction in (0.02, 0.03, 0.045):
        poly = cv2.approxPolyDP(hull, fraction * perimeter, True)
        if len(poly) == 4:
            return np.asarray(poly.reshape(4, 2), dtype=np.float64)
    return None


Gradients = tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]

#: ``segmented_card``: the cut round a rough outline (each way, a share of its size), the
#: border of the cut taken for table for sure (pixels), the side the cut is shrunk to before
#: it is segmented, GrabCut's rounds, and what a region must be to be a card: its long side
#: over its short within SEGMENT_ASPECT (a card's is 1.4), filling at least SEGMENT_FILL of
#: the rectangle round it.
SEGMENT_MARGIN: Final = 0.25
SEGMENT_BORDER: Final = 2
SEGMENT_SIDE: Final = 64
SEGMENT_ROUNDS: Final = 2
SEGMENT_ASPECT: Final = (1.15, 1.7)
SEGMENT_FILL: Final = 0.85
#: The random state GrabCut's k-means starts from on each call (0: OpenCV's own at start).
SEGMENT_SEED: Final = 0


def segmented_card(image: Image, corners: npt.ArrayLike) -> npt.NDArray[np.float64] | None:
    """The card a rough outline (``corners``, image pixels) lies on, told from what lies
    round it by its colours (GrabCut on a cut shrunk to SEGMENT_SIDE, seeded with the
    outline as likely card, the rest of the cut as likely table and its border,
    SEGMENT_BORDER pixels, as table for sure, the picture's edge too): the
    four corners of the smallest rectangle round the largest region so found, or None when
    that region is no card's shape. For a card no outline of edges fits: a back printed to
    its edge, boxed loosely by a detector that never saw its design."""
    quad = np.asarray(corners, dtype=np.float64).reshape(4, 2)
    low, high = quad.min(axis=0), quad.max(axis=0)
    grow = SEGMENT_MARGIN * (high - low)
    height, width = image.shape[:2]
    x0, y0 = np.maximum(np.floor(low - grow), 0).astype(int)
    x1, y1 = np.minimum(np.ceil(high + grow), [width, height]).astype(int)
    if x1 - x0 < 8 or y1 - y0 < 8:
        return None
    scale = min(1.0, SEGMENT_SIDE / max(x1 - x0, y1 - y0))
    cut = cv2.resize(image[y0:y1, x0:x1], None, fx=scale, fy=scale,
                     interpolation=cv2.INTER_AREA)
    # The cut's border is table for sure, also where the picture's edge cuts the cut: there
    # the frame would cut a floor tile or a calendar into a card's shape (real photos read
    # on onnxruntime, session 49).
    mask = np.full(cut.shape[:2], cv2.GC_BGD, np.uint8)
    mask[SEGMENT_BORDER:-SEGMENT_BORDER, SEGMENT_BORDER:-SEGMENT_BORDER] = cv2.GC_PR_BGD
    cv2.fillConvexPoly(mask, np.round((quad - [x0, y0]) * scale).astype(np.int32),
                       cv2.GC_PR_FGD)
    if not (mask == cv2.GC_BGD).any() or not (mask == cv2.GC_PR_FGD).any():
        return None
    models = (np.zeros((1, 65)), np.zeros((1, 65)))
    # GrabCut starts its colour models from k-means centres drawn from the calling thread's
    # random state, which every call moves on: a box was outlined one way in a fresh process
    # and another after other boxes (a quarter of the cards tried). Seeded, a box is outlined
    # the same whenever, in whichever thread, it is.
    cv2.setRNGSeed(SEGMENT_SEED)
    cv2.grabCut(cut, mask, (0, 0, 0, 0), *models, SEGMENT_ROUNDS,  # (no rectangle: the mask)
                cv2.GC_INIT_WITH_MASK)
    card = ((mask == cv2.GC_FGD) | (mask == cv2.GC_PR_FGD)).astype(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(card)
    if count < 2:
        return None
    largest = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    contours, _ = cv2.findContours((labels == largest).astype(np.uint8), cv2.RETR_EXTERNAL,
                                   cv2.CHAIN_APPROX_SIMPLE)
    contour = max(contours, key=cv2.contourArea)
    rect = cv2.minAreaRect(contour)
    short, long = sorted(rect[1])
    if short <= 0 or not SEGMENT_ASPECT[0] <= long / short <= SEGMENT_ASPECT[1] \
            or cv2.contourArea(contour) < SEGMENT_FILL * short * long:
        return None
    # (a pixel's centre is half a pixel in from its corner, in the cut and in the picture)
    found = (order_corners(cv2.boxPoints(rect)) + 0.5) / scale - 0.5
    return np.asarray(found + np.array([x0, y0]), dtype=np.float64)


def find_cards(image: Image, slopes: Gradients | None = None) -> list[Outline]:
    """Card outlines in ``image`` (BGR), best first (``slopes``: the image's ``gradients``,
    when the caller has them already)."""
    height, width = image.shape[:2]
    scale = min(1.0, WORK_SIDE / max(height, width))
    small: Image = np.asarray(
        cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        if scale < 1 else image, dtype=np.uint8)
    white = _whiteness(small)
    area_total = float(small.shape[0] * small.shape[1])

    def at_border(points: npt.NDArray[np.int32]) -> bool:
        xy = points.reshape(-1, 2)
        return bool((xy.min(axis=0) <= 2).any() or (xy[:, 0] >= small.shape[1] - 3).any()
                    or (xy[:, 1] >= small.shape[0] - 3).any())

    otsu_level, otsu = cv2.threshold(white, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    masks = [otsu]
    for level in (float(otsu_level) + 25, float(otsu_level) + 50):
        masks.append(cv2.threshold(white, min(level, 250), 255, cv2.THRESH_BINARY)[1])
    # Brighter than the surroundings: a card in shade next to sunlit wood, or on cream.
    block = (max(small.shape[:2]) // 6) | 1
    for offset in (-15, -35):
        masks.append(cv2.adaptiveThreshold(white, 255, cv2.ADAPTIVE_THRESH_MEAN_C,
                                           cv2.THRESH_BINARY, block, offset))
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))
    # Cards that touch or overlap, or lie on something light, merge into one bright blob;
    # their edges part them again.
    grey_small = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    edges = cv2.dilate(cv2.Canny(cv2.GaussianBlur(grey_small, (5, 5), 0), 40, 110),
                       np.ones((3, 3), np.uint8))
    cleaned: list[Image] = []
    for mask in masks:
        mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, kernel, iterations=2)
        cleaned.append(np.asarray(cv2.morphologyEx(mask, cv2.MORPH_OPEN, kernel), np.uint8))
    parted: list[Image] = [
        np.asarray(cv2.morphologyEx(cv2.bitwise_and(m, cv2.bitwise_not(edges)),
                                    cv2.MORPH_OPEN, kernel), np.uint8) for m in cleaned]

    def outlines_in(masks: list[Image]) -> list[Outline]:
        out = []
        for mask in masks:
            contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
            for contour in contours:
                outline = _card_like(np.asarray(contour, dtype=np.int32), area_total,
                                     at_border)
                if outline is not None:
                    out.append(outline)
        return out

    found = outlines_in(cleaned)
    # Parted regions lose a little of the card at each edge: only for cards not found
    # whole.
    found += [o for o in outlines_in(parted)
              if all(quad_iou(o.corners, f.corners) < SAME_CARD_IOU for f in found)]
    kept = [found[i] for i in distinct(found, [o.score for o in found])]
    if slopes is None:
        slopes = gradients(image)
    refined = refine_many(slopes, [o.corners / scale for o in kept], [8.0] * len(kept),
                          [None] * len(kept))
    return [Outline(corners, o.score) for o, corners in zip(kept, refined, strict=True)]


#: A side of an outline whose both ends lie this close to one edge of the picture (pixels)
#: runs along that edge: the picture cuts the card there.
ALONG_EDGE_PX: Final = 5.0


def near_edge(corners: npt.ArrayLike, width: int, height: int) -> bool:
    """Whether a corner of an outline lies within ALONG_EDGE_PX of the picture's edge (or
    beyond it): only then may ``beyond_edge`` complete it."""
    pts = np.asarray(corners, dtype=np.float64).reshape(-1, 2)
    (left, top), (right, bottom) = pts.min(axis=0), pts.max(axis=0)
    return bool(min(left, top, width - 1 - right, height - 1 - bottom) <= ALONG_EDGE_PX)


def beyond_edge(corners: npt.ArrayLike, width: int, height: int,
                card_px: float | None = None) -> npt.NDArray[np.float64] | None:
    """A card the picture's edge cuts, outlined by the part that shows (one side along the
    edge), completed beyond the edge: the side facing the edge is a whole side of the card,
    and the two sides that meet it run on to a card's proportions. Which side of the card it
    is (short or long) is plain when more than a short side's worth shows; else ``card_px``
    (the picture's cards' short side, pixels) tells. None when the outline is not so cut, or
    its far side is cut too, or it is already a whole card long."""
    pts = np.asarray(corners, dtype=np.float64).reshape(4, 2)
    if not near_edge(pts, width, height):
        return None  # (most outlines: checked first)
    hull = cv2.convexHull(pts.astype(np.float32), returnPoints=False).ravel()
    if len(hull) != 4:
        return None
    pts = pts[hull]
    limits = ((0, 0.0), (0, width - 1.0), (1, 0.0), (1, height - 1.0))
    for k in range(4):
        ends = pts[[k, (k + 1) % 4]]
        if not any(np.all(np.abs(ends[:, axis] - at) <= ALONG_EDGE_PX) for axis, at in limits):
            continue
        # the side facing the edge: from corner k + 2 to k + 3, whole when inside the picture
        near, far = pts[(k + 1) % 4], pts[k]  # the ends along the edge, k + 1 beside k + 2
        first, second = pts[(k + 2) % 4], pts[(k + 3) % 4]
        if any(x < ALONG_EDGE_PX or y < ALONG_EDGE_PX or x > width - 1 - ALONG_EDGE_PX
               or y > height - 1 - ALONG_EDGE_PX for x, y in (first, second)):
            return None
        whole = float(np.linalg.norm(second - first))
        shown = (np.linalg.norm(near - first) + np.linalg.norm(far - second)) / 2
        short_to_long = CARD_H_MM / CARD_W_MM
        if shown > whole / short_to_long * 1.05:
            length = whole * short_to_long  # more than a short side shows: it is a short side
        elif card_px is not None:
            is_short = abs(whole - card_px) <= abs(whole - card_px * short_to_long)
            length = whole * short_to_long if is_short else whole / short_to_long
        else:
            return None
        if shown >= 0.95 * length:
            return None
        out: npt.NDArray[np.float64] = pts.copy()
        out[(k + 1) % 4] = first + (near - first) / max(np.linalg.norm(near - first), 1e-9) * length
        out[k] = second + (far - second) / max(np.linalg.norm(far - second), 1e-9) * length
        return out
    return None


def gradients(image: Image) -> Gradients:
    """Horizontal and vertical brightness gradients (Sobel) of a BGR image, once per image
    for every outline refined in it."""
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float32)
    return (np.asarray(cv2.Sobel(gray, cv2.CV_32F, 1, 0, ksize=3), np.float32),
            np.asarray(cv2.Sobel(gray, cv2.CV_32F, 0, 1, ksize=3), np.float32))


def refine_edges(slopes: Gradients, corners: npt.NDArray[np.float64],
                 reach: float = 8.0, spread: float | None = None) -> npt.NDArray[np.float64]:
    """Move each side of a card quad onto the strongest edge within ``reach`` pixels along
    its normal (sub-pixel line fit, ``edge_lines``), and take the new corners where the
    sides meet (the quad as it was if they meet too far off)."""
    return refine_many(slopes, [corners], [reach], [spread])[0]


def refine_many(slopes: Gradients, quads: Sequence[npt.ArrayLike], reaches: Sequence[float],
                spreads: Sequence[float | None]) -> list[npt.NDArray[np.float64]]:
    """``refine_edges`` of each quad, with its own reach and spread: the same corners, the
    gradients of all sampled at once (a frame's dozens or hundreds of detector boxes; each
    sampled as far as the farthest reach among them, which its choice leaves out)."""
    out = []
    for corners, found, reach in zip(quads, edge_lines_many(slopes, quads, reaches, spreads),
                                     reaches, strict=True):
        pts = np.asarray(corners, dtype=np.float64)
        lines = [line if line is not None else (pts[side], pts[(side + 1) % 4])
                 for side, line in enumerate(found)]
        refined = []
        for (p1, p2), (q1, q2) in zip(np.roll(np.array(lines), 1, axis=0), lines,
                                      strict=True):
            refined.append(_intersect(p1, p2, q1, q2))
        result = np.array(refined)
        out.append(pts if not np.isfinite(result).all() or np.abs(result - pts).max()
                   > 3 * reach else result)
    return out


Line = tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]


def edge_lines(slopes: Gradients, corners: npt.NDArray[np.float64], reach: float = 8.0,
               spread: float | None = None) -> list[Line | None]:
    """For each side of a card quad (corner i to i + 1), the line (two points on it) of the
    strongest edge within ``reach`` pixels along its normal, or None where too few of its
    samples find a clear edge. With ``spread`` (pixels), an edge's strength is weighed by
    how near the side it lies (a Gaussian of that width), so a far edge must be much
    stronger to be taken."""
    return edge_lines_many(slopes, [corners], [reach], [spread])[0]


def edge_lines_many(slopes: Gradients, quads: Sequence[npt.ArrayLike],
                    reaches: Sequence[float], spreads: Sequence[float | None],
                    ) -> list[list[Line | None]]:
    """``edge_lines`` of each quad, with its own reach and spread; every side of every quad
    sampled in two remaps (quads x 4 sides x 24 points x offsets, the offsets of a shorter
    reach padded and left out of its choice)."""
    if not quads:
        return []
    ranges = [np.arange(-reach, reach + 0.01, 0.5) for reach in reaches]
    width = max(len(r) for r in ranges)
    offsets = np.zeros((len(quads), width))
    weights = np.zeros((len(quads), width))
    valid = np.zeros((len(quads), width), dtype=bool)
    for i, (steps, spread) in enumerate(zip(ranges, spreads, strict=True)):
        offsets[i, :len(steps)] = steps
        weights[i, :len(steps)] = np.exp(-0.5 * (steps / spread) ** 2) if spread \
            else np.ones_like(steps)
        valid[i, :len(steps)] = True
    samples, normals = _sides_sampled(np.asarray(quads, dtype=np.float64).reshape(-1, 4, 2))
    across = _across(slopes, samples[:, :, :, None, :]
                     + offsets[:, None, None, :, None] * normals[:, :, None, None, :],
                     normals[:, :, None, None, :])  # quads x 4 x 24 x offsets
    shown = np.broadcast_to(valid[:, None, None, :], across.shape)
    # (gradients are unsigned: -1 at a padded offset is never the strongest)
    choice = np.argmax(np.where(shown, across * weights[:, None, None, :], -1.0), axis=3)
    best_all = np.take_along_axis(offsets, choice.reshape(len(quads), -1), axis=1
                                  ).reshape(choice.shape)  # quads x 4 x 24
    peaks = np.where(shown, across, -1.0).max(axis=3)
    # each side's median over its own offsets (the padded ones sorted last)
    ordered = np.sort(np.where(shown, across, np.inf).reshape(len(quads), 4, -1), axis=2)
    counts = np.array([samples.shape[2] * len(r) for r in ranges])[:, None, None]
    middle = (np.take_along_axis(ordered, (counts - 1) // 2, axis=2)
              + np.take_along_axis(ordered, counts // 2, axis=2)) / 2
    strong_all = peaks > 4 * middle + 1e-3
    out: list[list[Line | None]] = []
    for best_sides, strong_sides, points, outward in zip(best_all, strong_all, samples, normals,
                                                         strict=True):
        lines: list[Line | None] = []
        for best, strong, side_points, normal in zip(best_sides, strong_sides, points, outward,
                                                     strict=True):
            if strong.sum() < 6:
                lines.append(None)
                continue
            moved = side_points[strong] + best[strong, None] * normal
            vx, vy, x0, y0 = cv2.fitLine(moved.astype(np.float32), cv2.DIST_HUBER, 0, 0.01,
                                         0.01)
            point, heading = np.array([x0[0], y0[0]]), np.array([vx[0], vy[0]])
            lines.append((point, point + heading))
        out.append(lines)
    return out


def edge_support(slopes: Gradients, corners: npt.ArrayLike) -> float:
    """How strongly an outline lies on edges: the median gradient across its sides, at the
    points ``edge_lines`` starts from."""
    samples, normals = _side_samples(corners)
    return float(np.median(_across(slopes, samples, normals[:, None, :])))


#: ``side_contrast``: the gradient across a side is taken within SIDE_NEAR of it (a share of
#: the outline's shortest side, at least SIDE_NEAR_PX) and, for what lies round it, from
#: SIDE_FAR[0] to SIDE_FAR[1] in and out (shares of the shortest side), at SIDE_OFFSETS
#: offsets in all.
SIDE_NEAR: Final = 0.02
SIDE_NEAR_PX: Final = 1.5
SIDE_FAR: Final = (0.05, 0.12)
SIDE_OFFSETS: Final = 25


def side_contrast(slopes: Gradients, corners: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """How much each side of an outline stands out as an edge (4 numbers): the strongest
    gradient across it near the side (SIDE_NEAR; each the median of the gradients along
    the side), over the median of those a little farther in and out (SIDE_FAR) plus one.
    Only what lies in the picture counts: a side with nothing near it there scores 0 (the
    picture's edge is no card's). A card lying apart has four sides standing out from the
    table round it and from its own print; a card-shaped patch of carpet, wood or print has
    sides no stronger than what lies round them."""
    quad = np.asarray(corners, dtype=np.float64).reshape(4, 2)
    short = short_side(quad)
    samples, normals = _side_samples(quad)
    offsets = np.linspace(-SIDE_FAR[1], SIDE_FAR[1], SIDE_OFFSETS) * short
    # (sides x offsets x points along a side x 2)
    points = samples[:, None, :, :] + offsets[None, :, None, None] * normals[:, None, None, :]
    across = _across(slopes, points, normals[:, None, None, :])
    height, width = slopes[0].shape[:2]
    inside = (points[..., 0] >= 0) & (points[..., 0] <= width - 1) \
        & (points[..., 1] >= 0) & (points[..., 1] <= height - 1)
    near = np.abs(offsets) <= max(SIDE_NEAR * short, SIDE_NEAR_PX)
    far = np.abs(offsets) >= SIDE_FAR[0] * short
    out = np.zeros(4)
    for side in range(4):
        # (the median along the side at each offset, of the points in the picture: at every
        # offset at once when all lie in it, as they mostly do)
        if inside[side].all():
            along = dict(enumerate(np.median(across[side], axis=1).tolist()))
        else:
            along = {k: float(np.median(across[side, k][inside[side, k]]))
                     for k in range(len(offsets)) if inside[side, k].any()}
        peak = [along[k] for k in map(int, np.flatnonzero(near)) if k in along]
        round_it = [along[k] for k in map(int, np.flatnonzero(far)) if k in along]
        if peak and round_it:
            out[side] = max(peak) / (float(np.median(round_it)) + 1.0)
    return out


def _across(slopes: Gradients, points: npt.NDArray[np.float64],
            normal: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """The gradient across ``normal`` (a unit vector, or one for each row of ``points``) at
    ``points`` (... x 2 image pixels; 0 beyond the picture), unsigned."""
    gx, gy = slopes
    shape = points.shape[:-1]
    # (a map row a line of the points' last axis: OpenCV's maps are under 32767 wide)
    columns = shape[-1] if len(shape) else 1
    xs = np.ascontiguousarray(points[..., 0].reshape(-1, columns), dtype=np.float32)
    ys = np.ascontiguousarray(points[..., 1].reshape(-1, columns), dtype=np.float32)
    n = np.asarray(normal, dtype=np.float64)
    return np.abs(_sampled(gx, xs, ys).reshape(shape).astype(np.float64) * n[..., 0]
                  + _sampled(gy, xs, ys).reshape(shape).astype(np.float64) * n[..., 1])


#: OpenCV remaps maps of fewer rows than this (SHRT_MAX); a frame's hundreds of boxes, their
#: sides sampled at once, may need more.
MAP_ROWS: Final = 32767


def _sampled(plane: npt.NDArray[np.float32], xs: npt.NDArray[np.float32],
             ys: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """``plane`` at (``xs``, ``ys``), bilinearly (0 beyond it), in maps of under MAP_ROWS
    rows (each point on its own: the same values however the maps are cut)."""
    parts = [cv2.remap(plane, xs[k:k + MAP_ROWS - 1], ys[k:k + MAP_ROWS - 1], cv2.INTER_LINEAR)
             for k in range(0, len(xs), MAP_ROWS - 1)]
    return np.asarray(parts[0] if len(parts) == 1 else np.concatenate(parts), np.float32)


def under_cards(slopes: Gradients, corners: npt.ArrayLike,
                others: Sequence[npt.ArrayLike] | None = None,
                ) -> list[npt.NDArray[np.float64]]:
    """Outlines where a card of the same size may lie under the card ``corners`` outlines,
    showing a strip beyond one of its sides (a fan, a pile pushed askew): for each side, the
    straight edges found beyond it, nearly parallel to it (``_far_edges``), each the far side
    of a card a card's width or length deep, where along it the edge is strongest
    (``_along_edge``). The best-supported first. With ``others`` (outlines found round it),
    only beyond the sides one holding most of the card reaches past (``_reached``)."""
    pts = np.asarray(corners, dtype=np.float64).reshape(4, 2)
    lengths = np.linalg.norm(np.roll(pts, -1, axis=0) - pts, axis=1)
    if lengths.min() < UNDER_MIN_SIDE_PX:
        return []  # (no card there to lie on another)
    px_per_mm = float(lengths.min()) / CARD_W_MM
    samples, normals = _side_samples(pts)
    found: list[tuple[float, npt.NDArray[np.float64]]] = []
    open_sides = range(4) if others is None else _reached(pts, normals, others,
                                                          UNDER_REACHED_MM * px_per_mm)
    least = UNDER_MIN_SHOWN_MM * px_per_mm
    for side in open_sides:
        start, end = pts[side], pts[(side + 1) % 4]
        depth = float(lengths[(side + 1) % 4])  # across this side: the card's other dimension
        for support, (t0, t1) in _far_edges(slopes, samples[side], normals[side], least,
                                            depth - least):
            p, q = start + t0 * normals[side], end + t1 * normals[side]
            heading = (q - p) / max(float(np.linalg.norm(q - p)), 1e-9)
            middle = _along_edge(slopes, (p + q) / 2, heading, float(lengths[side]))
            half = heading * float(lengths[side]) / 2
            inward = np.array([heading[1], -heading[0]])
            if inward @ normals[side] > 0:
                inward = -inward
            far = (middle - half, middle + half)
            found.append((support, np.array([*far, far[1] + depth * inward,
                                          far[0] + depth * inward])))
    found.sort(key=lambda item: -item[0])
    return [outline for _, outline in found]


def _reached(pts: npt.NDArray[np.float64], normals: npt.NDArray[np.float64],
             others: Sequence[npt.ArrayLike], margin: float) -> list[int]:
    """The sides of the quad ``pts`` (outward ``normals``) that some outline of ``others``
    holding most of it (UNDER_HELD) reaches past by ``margin`` pixels or more."""
    if not len(others):
        return []
    quads = np.asarray(others, dtype=np.float64).reshape(-1, 4, 2)
    middles = (pts + np.roll(pts, -1, axis=0)) / 2
    # how far each outline's corners reach past each side (outlines x sides)
    beyond = np.einsum("nkj,sj->nsk", quads, normals).max(axis=2) - (middles * normals).sum(1)
    reaching = beyond >= margin
    # (an outline holding most of the card reaches no more than a margin short of its sides)
    holding = (beyond >= -margin).all(axis=1)
    hull = _Hull.of(pts)
    reached: set[int] = set()
    for n in np.flatnonzero(reaching.any(axis=1) & holding):
        if not set(np.flatnonzero(reaching[n])) <= reached \
                and hull.intersection(_Hull.of(quads[n])) >= UNDER_HELD * hull.area:
            reached.update(int(k) for k in np.flatnonzero(reaching[n]))
    return sorted(reached)


def _along_edge(slopes: Gradients, middle: npt.NDArray[np.float64],
                heading: npt.NDArray[np.float64], length: float) -> npt.NDArray[np.float64]:
    """Where along its line a card's side ``length`` long lies: the middle of the stretch of
    that length, within one length either way of ``middle``, where the edge is strongest."""
    steps = np.arange(-length, length + 0.5, 1.0)
    points = middle[None] + steps[:, None] * heading[None]
    # (beyond the picture no edge)
    across = _across(slopes, points, (-heading[1], heading[0]))
    window = max(1, round(length))
    sums = np.convolve(across, np.ones(window), mode="valid")
    best = int(np.argmax(sums))
    return np.asarray(middle + (steps[best] + (window - 1) / 2) * heading, np.float64)


def _far_edges(slopes: Gradients, samples: npt.NDArray[np.float64],
               normal: npt.NDArray[np.float64], near: float, far: float,
               ) -> list[tuple[float, tuple[float, float]]]:
    """Straight edges beyond one side of a card: ``samples`` along the side (24 x 2, from
    ``_side_samples``), each searched outward along ``normal`` from ``near`` to ``far``
    pixels for its edges (local maxima of the gradient across, UNDER_EDGE_RATIO times the
    median), and lines through them within UNDER_MAX_TURN of the side's direction that at
    least UNDER_MIN_ROWS of the samples find. For each, that count and its offsets at the
    side's two ends (extrapolated from the samples' span, 15-85% of the side)."""
    if far <= near + 2:
        return []
    offsets = np.arange(near, far, 1.0)
    across = _across(slopes, samples[:, None, :] + offsets[None, :, None] * normal, normal)
    bar = UNDER_EDGE_RATIO * float(np.median(across)) + 1e-3
    peak = np.zeros_like(across, dtype=bool)
    peak[:, 1:-1] = ((across[:, 1:-1] >= across[:, :-2]) & (across[:, 1:-1] >= across[:, 2:])
                     & (across[:, 1:-1] > bar))
    # each sample's UNDER_PEAKS strongest edges
    strength = np.where(peak, across, 0.0)
    top = np.argsort(-strength, axis=1)[:, :UNDER_PEAKS]
    rows = np.repeat(np.arange(len(samples)), top.shape[1])
    cols = top.ravel()
    keep = strength[rows, cols] > 0
    rows, cols = rows[keep], cols[keep]
    if rows.size < UNDER_MIN_ROWS:
        return []
    step = float(np.linalg.norm(samples[-1] - samples[0])) / (len(samples) - 1)
    s, t = rows * step, offsets[cols]
    # Lines t = a + b s (Hough): for each slope b within UNDER_MAX_TURN, the samples with an
    # edge in each UNDER_FIT_PX bin of a (and in bins shifted half a bin, so that a line on a
    # bin's border is counted whole).
    slopes_b = np.tan(np.radians(np.linspace(-UNDER_MAX_TURN, UNDER_MAX_TURN, 21)))
    out: list[tuple[float, tuple[float, float]]] = []
    free = np.ones(rows.size, dtype=bool)
    span = step * (len(samples) - 1) / 0.7  # the whole side: the samples span 70% of it
    first = -0.15 * span
    for _ in range(UNDER_LINES):
        if free.sum() < UNDER_MIN_ROWS:
            break
        best: tuple[int, float, float] = (0, 0.0, 0.0)
        for shift in (0.0, UNDER_FIT_PX / 2):
            bins = np.floor((t[None, free] - slopes_b[:, None] * s[None, free] + shift)
                            / UNDER_FIT_PX).astype(np.int64)
            low = int(bins.min())
            width = int(bins.max()) - low + 1
            keys = ((np.arange(len(slopes_b))[:, None] * width + (bins - low))
                    * len(samples) + rows[None, free])
            keys = np.sort(keys.ravel())
            once = keys[np.r_[True, keys[1:] != keys[:-1]]]  # a sample counts once in a cell
            counts = np.bincount(once // len(samples))
            cell = int(np.argmax(counts))
            if counts[cell] > best[0]:
                b = float(slopes_b[cell // width])
                a = ((cell % width) + low + 0.5) * UNDER_FIT_PX - shift
                best = (int(counts[cell]), a, b)
        hits, a, b = best
        if hits < UNDER_MIN_ROWS:
            break
        members = free & (np.abs(t - (a + b * s)) <= UNDER_FIT_PX)
        # refit on the edges it holds (least squares)
        sm, tm = s[members] - s[members].mean(), t[members] - t[members].mean()
        b = float((sm * tm).sum() / max(float((sm * sm).sum()), 1e-9))
        a = float(t[members].mean() - b * s[members].mean())
        out.append((float(hits), (a + b * first, a + b * (first + span))))
        free &= ~members
    return out


def _side_samples(corners: npt.ArrayLike,
                  ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """24 points along the middle 70% of each side of a quad (corner i to i + 1; 4 x 24 x 2)
    and each side's outward unit normal (4 x 2)."""
    samples, normals = _sides_sampled(np.asarray(corners, dtype=np.float64).reshape(1, 4, 2))
    return samples[0], normals[0]


def _sides_sampled(quads: npt.NDArray[np.float64],
                   ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """``_side_samples`` of each of N quads (N x 4 x 2): N x 4 x 24 x 2 and N x 4 x 2."""
    ends = np.roll(quads, -1, axis=1)
    directions = (ends - quads) / np.maximum(np.linalg.norm(ends - quads, axis=2),
                                             1e-9)[:, :, None]
    normals = np.stack([-directions[:, :, 1], directions[:, :, 0]], axis=2)
    outward = np.einsum("nij,nij->ni", normals,
                        (quads + ends) / 2 - quads.mean(axis=1)[:, None, :]) >= 0
    normals = np.where(outward[:, :, None], normals, -normals)
    samples = quads[:, :, None, :] + np.linspace(0.15, 0.85, 24)[None, None, :, None] \
        * (ends - quads)[:, :, None, :]
    return samples, normals


def _intersect(p1: npt.NDArray[np.float64], p2: npt.NDArray[np.float64],
               q1: npt.NDArray[np.float64], q2: npt.NDArray[np.float64]
               ) -> npt.NDArray[np.float64]:
    d1, d2 = p2 - p1, q2 - q1
    denominator = d1[0] * d2[1] - d1[1] * d2[0]
    if abs(denominator) < 1e-9:
        return np.array([np.nan, np.nan])
    u = ((q1[0] - p1[0]) * d2[1] - (q1[1] - p1[1]) * d2[0]) / denominator
    return np.asarray(p1 + u * d1, dtype=np.float64)


def distinct(outlines: list[Outline], priority: list[float]) -> list[int]:
    """Indices of the outlines kept when, of two overlapping as the same card (IoU >=
    SAME_CARD_IOU), only the one of higher priority stays; highest priority first."""
    order = sorted(range(len(outlines)), key=lambda i: -priority[i])
    quads = [np.asarray(outlines[i].corners, dtype=np.float64) for i in order]
    return [order[k] for k in greedy_distinct(quads, SAME_CARD_IOU, at_limit=True)]


def greedy_distinct(quads: Sequence[npt.NDArray[np.float64]], limit: float, *,
                    at_limit: bool = False,
                    compared: Callable[[int, int], bool] | None = None) -> list[int]:
    """Indices of the 4-corner outlines ``quads`` (best first), each kept unless it overlaps one
    kept before it by more than ``limit`` (intersection over union of their convex hulls: a
    card is convex, and a quad whose sides cross has no area of its own; ``at_limit``: or
    exactly that much; ``compared``: only pairs (kept, later) it allows). Only outlines whose
    bounding boxes and areas allow that much overlap (``_Hull.most_iou``) are compared, by
    clipping one convex hull to the other (a frame's detector boxes may number a hundred before
    suppression; shapely's overlay took 0.1 ms a pair)."""
    hulls = [_Hull.of(q) for q in quads]
    kept: list[int] = []
    for i, hull in enumerate(hulls):
        # (clipped only when their bounding boxes and areas allow as much overlap: a frame's
        # boxes overlap, but mostly little)
        values = (hull.iou(hulls[j]) for j in kept if hull.most_iou(hulls[j]) >= limit - 1e-9
                  and (compared is None or compared(j, i)))
        if not any((v >= limit) if at_limit else (v > limit) for v in values):
            kept.append(i)
    return kept


def shared_areas(quads: Sequence[npt.ArrayLike],
                 ) -> tuple[list[float], list[list[float]]]:
    """The area of each 4-corner outline's convex hull, and the area each two of them share
    (0 for an outline with itself), clipped as ``quad_iou`` clips them."""
    hulls = [_Hull.of(q) for q in quads]
    shared = [[0.0] * len(hulls) for _ in hulls]
    for i, hull in enumerate(hulls):
        for j in range(i + 1, len(hulls)):
            shared[i][j] = shared[j][i] = hull.intersection(hulls[j])
    return [hull.area for hull in hulls], shared


def quad_iou(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    """Intersection over union of the convex hulls of two 4-corner outlines (``overlap``
    for convex ones, in about half the time)."""
    return _Hull.of(a).iou(_Hull.of(b))


@dataclass(frozen=True)
class _Hull:
    """A convex polygon, corners counter-clockwise (positive shoelace area), in float64
    (plain lists: a few corners go faster through Python than through numpy)."""

    points: Points
    area: float
    bounds: tuple[float, float, float, float]  # left, top, right, bottom

    @classmethod
    def of(cls, quad: npt.ArrayLike) -> _Hull:
        corners = np.asarray(quad, dtype=np.float64).reshape(-1, 2)
        order = cv2.convexHull(corners.astype(np.float32), returnPoints=False).ravel()
        points: Points = corners[order].tolist()
        area = _shoelace(points)
        if area < 0:
            points, area = points[::-1], -area
        xs, ys = [x for x, _ in points], [y for _, y in points]
        return cls(points, area, (min(xs), min(ys), max(xs), max(ys)))

    def iou(self, other: _Hull) -> float:
        inter = self.intersection(other)
        union = self.area + other.area - inter
        return inter / union if union > 0 else 0.0

    def most_iou(self, other: _Hull) -> float:
        """At least ``iou`` (up to rounding): the hulls share no more than their bounding
        boxes do, nor more than the smaller hull."""
        (l1, t1, r1, b1), (l2, t2, r2, b2) = self.bounds, other.bounds
        shared = min(max(0.0, min(r1, r2) - max(l1, l2)) * max(0.0, min(b1, b2) - max(t1, t2)),
                     self.area, other.area)
        union = self.area + other.area - shared
        return shared / union if union > 0 else 0.0

    def intersection(self, other: _Hull) -> float:
        """The area the two hulls share."""
        (l1, t1, r1, b1), (l2, t2, r2, b2) = self.bounds, other.bounds
        if l2 > r1 or l1 > r2 or t2 > b1 or t1 > b2 \
                or min(len(self.points), len(other.points)) < 3:
            return 0.0
        return _shoelace(_clip(self.points, other.points))


def _clip(subject: Points, clip: Points) -> Points:
    """The part of convex polygon ``subject`` inside convex polygon ``clip`` (both
    counter-clockwise), clipped side by side (Sutherland-Hodgman). In float64, and exact
    where the two share a side: OpenCV's intersectConvexConvex works in float32 and can
    miss most of the overlap of two nearly equal boxes (opencv#22812)."""
    polygon = subject
    for k, (ax, ay) in enumerate(clip):
        bx, by = clip[(k + 1) % len(clip)]
        ex, ey = bx - ax, by - ay
        result: Points = []
        for i, (px, py) in enumerate(polygon):
            qx, qy = polygon[(i + 1) % len(polygon)]
            sp = ex * (py - ay) - ey * (px - ax)  # >= 0: on the inner side of a-b
            sq = ex * (qy - ay) - ey * (qx - ax)
            if sp >= 0:
                result.append([px, py])
            if (sp >= 0) != (sq >= 0):
                t = sp / (sp - sq)
                result.append([px + t * (qx - px), py + t * (qy - py)])
        if len(result) < 3:
            return []
        polygon = result
    return polygon


def _shoelace(polygon: Points) -> float:
    """Signed area: positive when the corners run counter-clockwise."""
    return 0.5 * sum(px * qy - qx * py for (px, py), (qx, qy)
                     in zip(polygon, polygon[1:] + polygon[:1], strict=True))


#: A card another outline overlaps by more than this share of its area may be covered.
COVERED_SHARE: Final = 0.01


#: Of two overlapping outlines, one lies over the other when its edge, where it crosses the
#: other, is at least this much stronger than the other's edge where that crosses it (median
#: gradient across the edge): a card's edge shows on the card beneath it, and hides that
#: card's own edge. Chosen on validation designs' rendered scenes, where ratios 1.25 to 3
#: read the same cards right (models/README.md, session 30).
OVER_RATIO: Final = 1.5
#: Edge samples are taken this far inside the other outline (its own edge is no evidence),
#: every OVER_STEP_PX along the sides (their middle 84%: not the rounded corners), and
#: judged on at least OVER_MIN_SAMPLES of them.
OVER_MARGIN_PX: Final = 3.0
OVER_STEP_PX: Final = 2.0
OVER_MIN_SAMPLES: Final = 6

#: For two outlines: True when the first lies over the second, False when under it, None
#: when they do not overlap (by more than COVERED_SHARE) or the edges do not tell (one of
#: them runs too little inside the other to be measured, or neither is 1.5 times the other).
Stacking = list[list[bool | None]]


def alone(outlines: Sequence[npt.ArrayLike], over: Stacking | None = None) -> list[bool]:
    """For each 4-corner outline, whether no other outline lies on it: none overlaps it (by
    more than ``COVERED_SHARE`` of its area), or (``over``, from ``stacking``) it lies over
    every one that does. Its face is then its own."""
    # Cards are convex: their hull is a valid polygon whatever order the corners come in.
    shapes = _hulls(outlines)
    return [all(j == i or not _covers(b, a) or (over is not None and over[i][j] is True)
                for j, b in enumerate(shapes)) for i, a in enumerate(shapes)]


def hidden_shares(outlines: Sequence[npt.ArrayLike], by: Sequence[bool],
                  over: Stacking, only: Collection[int] | None = None) -> list[float]:
    """For each 4-corner outline, the share of its area that the outlines ``by`` marks cover
    together, leaving out those it lies over (``over``, from ``stacking``); with ``only``,
    for the outlines it names (the others' shares are 0)."""
    shapes = _hulls(outlines)
    shares = []
    for i, shape in enumerate(shapes):
        if only is not None and i not in only:
            shares.append(0.0)
            continue
        cover = [shapes[j] for j in range(len(shapes))
                 if j != i and by[j] and over[i][j] is not True]
        shares.append(float(shape.intersection(unary_union(cover)).area / shape.area)
                      if cover and shape.area > 0 else 0.0)
    return shares


def shown_parts(outlines: Sequence[npt.ArrayLike], over: Stacking, width: int,
                height: int) -> list[list[npt.NDArray[np.float64]]]:
    """For each 4-corner outline, what of it shows in a picture ``width`` x ``height``: its
    area less the outlines lying over it (``over``, from ``stacking``; an overlap whose order
    the edges do not tell hides nothing) and less what lies beyond the picture's edges. As
    polygons (their outer rings, image pixels), the largest first; none when nothing shows."""
    shapes = _hulls(outlines)
    picture = box(0.0, 0.0, float(width), float(height))
    out: list[list[npt.NDArray[np.float64]]] = []
    for i, shape in enumerate(shapes):
        above = [shapes[j] for j in range(len(shapes)) if j != i and over[j][i] is True]
        x0, y0, x1, y1 = shape.bounds
        inside = x0 >= 0 and y0 >= 0 and x1 <= width and y1 <= height
        part = shape if inside else shape.intersection(picture)
        if above:
            # (opened: a strip a pixel or two wide where the card above is outlined a little
            # short of its true edge is none of what shows)
            thin = SLIVER_WIDTH * float(np.sqrt(shape.area / CARD_ASPECT))
            part = part.difference(unary_union(above))
            part = part.buffer(-thin, join_style="mitre").buffer(thin, join_style="mitre") \
                .intersection(part)
        pieces = [p for p in getattr(part, "geoms", [part])
                  if isinstance(p, Polygon) and p.area > SLIVER_SHARE * shape.area]
        pieces.sort(key=lambda p: p.area, reverse=True)
        out.append([np.asarray(p.exterior.coords, dtype=np.float64)[:-1] for p in pieces])
    return out


def _hulls(outlines: Sequence[npt.ArrayLike]) -> list[Polygon]:
    return [MultiPoint(np.asarray(o, dtype=np.float64).reshape(4, 2)).convex_hull
            for o in outlines]


def _covers(other: Polygon, part: Polygon) -> bool:
    """Whether ``other`` overlaps more than COVERED_SHARE of ``part``."""
    return bool(other.intersects(part)
                and other.intersection(part).area > COVERED_SHARE * part.area)


def stacking(slopes: Gradients, outlines: Sequence[npt.ArrayLike]) -> Stacking:
    """Which of each two overlapping outlines lies on top (``Stacking``), from their edges
    (``slopes``: the image's ``gradients``): where the top card's edge crosses the card
    beneath, it shows; where the card beneath has its edge, the top card's face hides it.
    So a card on top of a pile has its face and both end bands read (``alone``,
    ``clear_bands``), as one lying apart does."""
    shapes = _hulls(outlines)
    hulls = [_Hull.of(o) for o in outlines]
    over: Stacking = [[None] * len(outlines) for _ in outlines]
    for i, j in itertools.combinations(range(len(outlines)), 2):
        if not (_covers(shapes[i], shapes[j]) or _covers(shapes[j], shapes[i])):
            continue
        first = _edge_inside(slopes, hulls[i], hulls[j])
        second = _edge_inside(slopes, hulls[j], hulls[i])
        if first is None or second is None:
            continue  # one edge cannot be seen there: nothing to compare it with
        if first > OVER_RATIO * second and first > 0:
            over[i][j], over[j][i] = True, False
        elif second > OVER_RATIO * first and second > 0:
            over[i][j], over[j][i] = False, True
    return over


def _edge_inside(slopes: Gradients, outline: _Hull, other: _Hull) -> float | None:
    """How strong ``outline``'s edge is where it runs inside ``other`` (the median over
    samples of the strongest gradient across the side within 2 px of it), or None where too
    little of it does (its sides walked round its hull: in whatever order its corners came)."""
    height_width = slopes[0].shape
    pts = np.asarray(outline.points, dtype=np.float64).reshape(-1, 2)
    ring = np.asarray(other.points, dtype=np.float64)
    ends = np.roll(ring, -1, axis=0)
    edges = ends - ring
    lengths = np.maximum(np.linalg.norm(edges, axis=1), 1e-9)
    offsets = np.arange(-2.0, 2.01, 0.5)
    values: list[npt.NDArray[np.float64]] = []
    for side in range(len(pts)):
        start, stop = pts[side], pts[(side + 1) % len(pts)]
        length = float(np.linalg.norm(stop - start))
        if length < 1.0:
            continue
        along = (stop - start) / length
        normal = np.array([-along[1], along[0]])
        span = _in_picture(start, along, 0.08 * length, 0.92 * length, height_width)
        if span is None:
            continue
        samples = start + np.arange(*span, OVER_STEP_PX)[:, None] * along
        # distance inside each side of the other hull (counter-clockwise: inside is >= 0)
        depth = (edges[None, :, 0] * (samples[:, None, 1] - ring[None, :, 1])
                 - edges[None, :, 1] * (samples[:, None, 0] - ring[None, :, 0])) / lengths
        samples = samples[(depth >= OVER_MARGIN_PX).all(axis=1)]
        if not len(samples):
            continue
        across = _across(slopes, samples[:, None, :] + offsets[None, :, None] * normal, normal)
        values.append(across.max(axis=1))
    found = np.concatenate(values) if values else np.empty(0)
    return float(np.median(found)) if found.size >= OVER_MIN_SAMPLES else None


def _in_picture(start: npt.NDArray[np.float64], along: npt.NDArray[np.float64], first: float,
                last: float, shape: tuple[int, ...]) -> tuple[float, float] | None:
    """The part [first, last] of the line ``start + t * along`` that lies in a picture of
    ``shape`` (an outline may reach far outside it), or None (Liang-Barsky clipping)."""
    height, width = shape[:2]
    for origin, step, high in ((start[0], along[0], width - 1.0),
                               (start[1], along[1], height - 1.0)):
        if abs(step) < 1e-12:
            if not 0.0 <= origin <= high:
                return None
            continue
        enter, leave = sorted(((0.0 - origin) / step, (high - origin) / step))
        first, last = max(first, enter), min(last, leave)
    return (first, last) if first < last else None


def clear_bands(outlines: Sequence[npt.ArrayLike],
                over: Stacking | None = None) -> list[tuple[bool, bool]]:
    """For each 4-corner outline, whether each of its two end bands (``SUIT_BAND_MM`` of its
    length, in the order ``crops.band_crops`` cuts them) is clear of every other outline
    (overlapped by at most ``COVERED_SHARE`` of its area) or (``over``) lies over every one
    that overlaps it: its pixels are the card's own."""
    share = SUIT_BAND_MM / CARD_H_MM
    shapes = _hulls(outlines)
    out: list[tuple[bool, bool]] = []
    for i, outline in enumerate(outlines):
        p = order_corners(outline)  # corner 0 -> 1 is the short side of the first band
        bands = (Polygon([p[0], p[1], p[1] + share * (p[2] - p[1]), p[0] + share * (p[3] - p[0])]),
                 Polygon([p[2], p[3], p[3] + share * (p[0] - p[3]), p[2] + share * (p[1] - p[2])]))
        first, second = (all(j == i or not _covers(other, band)
                             or (over is not None and over[i][j] is True)
                             for j, other in enumerate(shapes)) for band in bands)
        out.append((first, second))
    return out


def overlap(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    """Intersection over union of two 4-corner outlines."""
    return polygon_iou(Polygon(np.asarray(a)), Polygon(np.asarray(b)))


def polygon_iou(a: Polygon, b: Polygon) -> float:
    if not a.intersects(b):
        return 0.0
    inter = a.intersection(b).area
    return float(inter / (a.area + b.area - inter))
