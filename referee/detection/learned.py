"""Whole-card outlines from the learned oriented-box detector, run by onnxruntime or OpenVINO.

The model (``models/card_detector.onnx``, YOLOv8n-obb trained from scratch on rendered
scenes, see models/README.md) has one class, "card", and gives each card's whole outline,
the covered part too. Its raw output is decoded here (letterbox undone, rotated boxes to
corners, overlapping boxes suppressed), so the runtime needs neither torch nor ultralytics.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import cache, cached_property
from pathlib import Path
from typing import Any, Final, TypeVar

import cv2
import numpy as np
import numpy.typing as npt

from referee.detection.crops import CARD_H_MM, CARD_W_MM, short_side
from referee.detection.onnx_model import (
    MODELS_DIR,
    RuntimeUnavailableError,
    cores,
    detector_runtime,
    detector_session,
    read_meta,
    start,
)
from referee.detection.outlines import (
    Gradients,
    Outline,
    edge_support,
    gradients,
    greedy_distinct,
    refine_many,
)

Image = npt.NDArray[np.uint8]
DEFAULT_DETECTOR: Final = MODELS_DIR / "card_detector.onnx"
#: Boxes scored below this are not kept (the identity check then drops non-cards).
MIN_SCORE: Final = 0.25
#: ``referee detect`` also takes boxes scored from this up to MIN_SCORE, when their corners
#: read as a face-up card for sure (``detect.FAINT_SURE``): a card half under paper or
#: overlapped by another often scores 0.1-0.25 (chosen on validation-design frames,
#: models/README.md).
FAINT_SCORE: Final = 0.1
#: Of two boxes overlapping more than this (intersection over union), the weaker goes.
#: Cards in a fan or a pile overlap a lot but seldom this much.
NMS_IOU: Final = 0.7
#: A box whose short side is at least this share of its long side (a card's is 63 / 88 =
#: 0.72) may be two cards lying side by side, one over a good part of the other (16 mm or
#: more: two cards just touching make a box 0.70 as wide as long), outlined as one. It also
#: gives the card-shaped boxes at either end of it (``split_merged``), as faint boxes scored
#: SPLIT_SCORE at most (``referee detect`` keeps one only when it reads as a face-up card
#: ``detect.SPLIT_SURE`` sure).
MERGED_SQUARENESS: Final = 0.8
SPLIT_SCORE: Final = 0.2
#: ``referee detect`` also runs the detector on the picture turned left to right: the same
#: card then often gets a box a little off the first, which reads better (or a box where
#: the first pass had none). Those boxes are faint (scored this at most), so one is kept only
#: when it reads as a face-up card for sure (models/README.md, session 29).
MIRROR_SCORE: Final = 0.2
CARD_ASPECT: Final = CARD_W_MM / CARD_H_MM
#: The strides of the detector's three grids of cells (YOLOv8's P3-P5 heads). The shipped
#: network takes any height and width that are multiples of the largest, with its anchor
#: points and strides as inputs (``grid``; ``training.detector_shapes`` made it so from the
#: export, whose anchors were built in for a 480 x 480 input): a 1280 x 720 frame then runs
#: on 480 x 288, 26 ms a pass against 46 on 480 x 480 on session 57's 2-core CPU, with the
#: same outputs on a square input (models/README.md, session 57).
GRID_STRIDES: Final = (8, 16, 32)
LETTERBOX_GREY: Final = 114
#: The box's sides are moved onto the card's edges found within this share of its short
#: side (the boxes are a few mm off, often more than 8% of the card's width; index crops
#: from them miss the index), an edge weighed by a Gaussian of REFINE_SPREAD of the short
#: side (a far edge must be stronger). Chosen on held-out frames, models/README.md.
REFINE_REACH: Final = 0.2
REFINE_SPREAD: Final = 0.1
#: ``tighten`` (and ``polish_many``) moves half of a frame's boxes (from this many) onto
#: their edges on a thread of its own beside the caller's: OpenCV's remaps and line fits and
#: numpy's sorts let go of the interpreter, so on 2 cores 27 boxes took 23 ms instead of 32
#: (the same outlines; session 37, models/README.md).
SPLIT_TIGHTEN: Final = 8
#: What the name of the thread that takes that half (``_helper``; it takes half of other
#: work too, ``halved``) starts with.
HELPER_NAME: Final = "card-tighten"
_T = TypeVar("_T")
_R = TypeVar("_R")
#: The detector's boxes are larger than the cards they outline (the least rectangle round a
#: card seen in perspective is larger than it): on validation-design frames the median box
#: is 3.5% wider and 5.8% longer than its card (on the real photos the boxes of cards lying
#: apart are 6% larger too). ``polish`` tightens a box so shrunk about its centre as well.
BOX_SHORT_SCALE: Final = 1 / 1.035
BOX_LONG_SCALE: Final = 1 / 1.058


class CardDetector:
    """Finds cards' whole outlines (4 corners, image pixels) in a BGR image."""

    def __init__(self, model: Path = DEFAULT_DETECTOR, *, threads: int = 2,
                 refine: bool = True, runtime: str | None = None) -> None:
        """``runtime``: what runs the network (``onnx_model.detector_runtime``: by default
        as REFEREE_DETECTOR_RUNTIME says, or OpenVINO where the CPU computes bfloat16)."""
        meta = read_meta(model, "card detector")
        self.refine = refine
        self.model_path = model
        self.size = int(meta["imgsz"])
        self.threads = threads
        choice = detector_runtime(runtime, resolve=False)
        self._auto = choice == "auto"
        self.runtime = detector_runtime(choice)
        #: Why the runtime "auto" chose could not run the network (then onnxruntime ran it).
        self.fallback_reason: str | None = None

    @cached_property
    def _session(self) -> Any:
        try:
            return detector_session(self.model_path, self.threads, self.runtime)
        except RuntimeUnavailableError as error:
            if self.runtime != "openvino" or not self._auto:
                raise
            reason = error.reason
        # OpenVINO, chosen here but not asked for, cannot compile the model on this
        # machine: onnxruntime runs it (and says so, if it cannot either).
        self.runtime, self.fallback_reason = "onnxruntime", reason
        return detector_session(self.model_path, self.threads, self.runtime)

    @cached_property
    def _grid_inputs(self) -> tuple[str, str] | None:
        """The names of the network's inputs for its anchor points and their strides, when
        it takes them (a network that takes any height and width: ``training.detector_shapes``),
        else None (one square input, its anchors built in)."""
        names = [port.name for port in self._session.get_inputs()]
        return (names[1], names[2]) if len(names) == 3 else None

    def _scaled(self, image: Image) -> tuple[Image, float, float, float]:
        """``image`` scaled to fit the network's input, the scale, and where it lies on that
        input (left, top; ``_placement``)."""
        height, width = image.shape[:2]
        scale = min(self.size / height, self.size / width)
        new_w, new_h = round(width * scale), round(height * scale)
        resized = cv2.resize(image, (new_w, new_h), interpolation=cv2.INTER_AREA)
        _, _, left, top = self._placement(new_w, new_h)
        return np.asarray(resized, np.uint8), scale, float(left), float(top)

    def _placement(self, new_w: int, new_h: int) -> tuple[int, int, int, int]:
        """The height and width of the network's input for a picture scaled to ``new_w`` x
        ``new_h``, and where the picture lies on it (left, top; the rest grey). The network
        was trained on the picture centred on a square of its size. Where it takes any height
        and width, a picture wider than tall lies on as few rows of cells as hold it, as far
        from the grid of the coarsest cells as on that square (the square's bands less whole
        cells: a 1280 x 720 frame on 480 x 288, 9 rows of grey above it, not 105; the
        network's outputs change with that distance: a 960 x 450 picture centred on its rows
        moved boxes to 0.67 overlap, tests/detection/test_runtime.py). One taller than wide
        lies on the square still: on upright phone photos, bands of 28 columns instead of 60
        lost 12 real cards found and found 4 (session 57, models/README.md)."""
        left = round((self.size - new_w) / 2 - 0.1)
        top = round((self.size - new_h) / 2 - 0.1)
        if self._grid_inputs is None or new_h > new_w:
            return self.size, self.size, left, top
        step = max(GRID_STRIDES)
        left, top = left % step, top % step
        return -(-(top + new_h) // step) * step, -(-(left + new_w) // step) * step, left, top

    def _letterbox(self, resized: Image, left: float, top: float) -> npt.NDArray[np.float32]:
        """The network's input: ``resized`` (``_scaled``) at (left, top) on grey."""
        new_h, new_w = resized.shape[:2]
        canvas_h, canvas_w, _, _ = self._placement(new_w, new_h)
        x, y = int(left), int(top)
        canvas = np.full((canvas_h, canvas_w, 3), LETTERBOX_GREY, np.uint8)
        canvas[y:y + new_h, x:x + new_w] = resized
        # RGB planes, values 0-1: each plane divided on its own (a third of the time or
        # less that turning, transposing and converting the whole canvas took; the same values)
        tensor = np.empty((1, 3, canvas_h, canvas_w), np.float32)
        for plane in range(3):
            np.divide(canvas[:, :, 2 - plane], np.float32(255.0), out=tensor[0, plane],
                      dtype=np.float32)
        return tensor

    def _feeds(self, tensor: npt.NDArray[np.float32]) -> dict[str, Any]:
        """What the network is given for the input ``tensor`` (``_letterbox``)."""
        name = self._session.get_inputs()[0].name
        if self._grid_inputs is None:
            return {name: tensor}
        anchors, strides = grid(*tensor.shape[2:])
        return {name: tensor, self._grid_inputs[0]: anchors, self._grid_inputs[1]: strides}

    def find(self, image: Image, min_score: float = MIN_SCORE,
             slopes: Gradients | None = None, mirrored: bool = False,
             split: bool = False,
             meanwhile: Callable[[], list[Outline]] | None = None) -> list[Outline]:
        """Card outlines, best first (``slopes``: the image's ``gradients``, when the caller
        has them already). After them, as faint boxes scored under MIN_SCORE whatever
        ``min_score`` is (``referee detect`` reads them before it keeps one): with
        ``mirrored`` the boxes found in the image turned left to right (``mirror``), with
        ``split`` the ends of boxes squarer than a card (``split_merged``). Last, the
        outlines ``meanwhile`` finds, worked out while the network runs (when OpenVINO runs
        it, on threads of its own: ``onnx_model.start``)."""
        resized, scale, left, top = self._scaled(image)
        views = [resized]
        if mirrored:
            # The picture turned left to right as the network sees it: the scaled picture
            # turned (for 1280 x 720 frames the same pixels as the turned picture scaled, at
            # a twentieth of the cost of turning the whole picture).
            views.append(np.ascontiguousarray(resized[:, ::-1]))
        session = self._session
        running = []
        try:
            for view in views:
                running.append(start(session, self._feeds(self._letterbox(view, left, top))))
            others = meanwhile() if meanwhile is not None else []
        finally:
            raws = _waited(running)
        boxes = decode(np.asarray(raws[0], np.float64), scale, left, top, min_score)
        if mirrored:
            boxes += mirror(decode(np.asarray(raws[1], np.float64), scale, left, top,
                                   min_score), image.shape[1])
        if split:
            boxes += split_merged(boxes)
        return [*(tighten(image, boxes, slopes) if self.refine else boxes), *others]


@cache
def grid(height: int, width: int) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """The anchor points (1 x 2 x N: x, y in input pixels over the stride) and strides (1 x
    N) of a YOLOv8 head's cells on a ``height`` x ``width`` input (multiples of the largest
    stride, as ``CardDetector._placement`` makes them), stride by stride
    (GRID_STRIDES) and row by row, as ultralytics' ``make_anchors`` (offset 0.5) orders
    them and as its export builds them into a square network."""
    points, strides = [], []
    for stride in GRID_STRIDES:
        rows, cols = np.meshgrid(np.arange(height // stride) + 0.5,
                                 np.arange(width // stride) + 0.5, indexing="ij")
        points.append(np.stack([cols.ravel(), rows.ravel()]))
        strides.append(np.full(rows.size, stride))
    out = (np.concatenate(points, axis=1)[None].astype(np.float32),
           np.concatenate(strides)[None].astype(np.float32))
    for array in out:
        array.flags.writeable = False  # (cached: every caller gets these very arrays)
    return out


def _waited(running: list[Callable[[], list[Any]]]) -> list[npt.NDArray[Any]]:
    """The network's raw outputs (6 x N) of each run started (``onnx_model.start``), every
    run waited for (which frees it) before the first failure, if any, is raised."""
    raws, failure = [], None
    for wait in running:
        try:
            raws.append(np.asarray(wait()[0][0]))
        except Exception as error:  # (the other runs still waited for)
            failure = failure or error
    if failure is not None:
        raise failure
    return raws


def mirror(boxes: list[Outline], width: int) -> list[Outline]:
    """Boxes found in an image turned left to right, turned back onto the image (corners in
    the same turning order), as faint boxes scored MIRROR_SCORE at most."""
    out = []
    for box in boxes:
        corners = box.corners.copy()
        corners[:, 0] = width - corners[:, 0]  # box corners: the picture spans 0..width
        out.append(Outline(corners[::-1].copy(), min(box.score, MIRROR_SCORE), learned=True))
    return out


def tighten(image: Image, boxes: list[Outline],
            slopes: Gradients | None = None) -> list[Outline]:
    """Each box's sides moved onto the card's edges nearby (within REFINE_REACH of its
    short side): the boxes are a few mm off, and index crops from them miss the index.
    On the real test photos this raised the rank read right on the detector's outlines alone
    from 55% to 74% (its third run, identity model 4)."""
    if not boxes:
        return boxes
    if slopes is None:
        slopes = gradients(image)
    tightened = _shared(slopes, [b.corners for b in boxes])
    return [Outline(corners, b.score, b.learned, b.split, box=b.corners)
            for b, corners in zip(boxes, tightened, strict=True)]


def _shared(slopes: Gradients, quads: list[npt.NDArray[np.float64]],
            ) -> list[npt.NDArray[np.float64]]:
    """``_tightened``, from SPLIT_TIGHTEN quads on half of them on a thread of its own
    (``halved``)."""
    return halved(lambda part: _tightened(slopes, part), quads, SPLIT_TIGHTEN)


def halved(work: Callable[[Sequence[_T]], list[_R]], items: Sequence[_T],
           least: int = 2) -> list[_R]:
    """``work`` done on ``items`` (a result an item, in order), from ``least`` items on the
    later half of them on the helper thread (``_helper``) while this thread works through the
    first: OpenCV and onnxruntime let go of the interpreter. Not when called on that thread
    (it would wait for itself), nor on one core."""
    helper = _helper() if len(items) >= least \
        and not threading.current_thread().name.startswith(HELPER_NAME) else None
    half = len(items) // 2
    try:
        other = helper.submit(work, items[half:]) if helper else None
    except RuntimeError:  # no new work taken while the interpreter shuts down
        other = None
    if other is None:
        return work(items)
    return work(items[:half]) + other.result()


@cache
def _helper() -> ThreadPoolExecutor | None:
    """The thread that takes half of a frame's work (``halved``: tightening its boxes,
    ``tighten`` and ``polish_many``, and outlining backs by their colours,
    ``detect._seen_backs``), or None on one core."""
    return ThreadPoolExecutor(1, thread_name_prefix=HELPER_NAME) if cores() > 1 else None


def _tightened(slopes: Gradients, quads: Sequence[npt.NDArray[np.float64]],
               ) -> list[npt.NDArray[np.float64]]:
    """Each quad's sides moved onto the edges within REFINE_REACH of its short side (4 px at
    least), a far edge weighed down by a Gaussian of REFINE_SPREAD of it (2 px at least)."""
    sides = [short_side(corners) for corners in quads]
    return refine_many(slopes, quads, [max(4.0, REFINE_REACH * side) for side in sides],
                       [max(2.0, REFINE_SPREAD * side) for side in sides])


def polish(slopes: Gradients, outline: Outline) -> Outline:
    """A tightened outline (``tighten``), or the outline its box gives when shrunk to a card's
    size first (``shrunk``), whichever lies on stronger edges (``edge_support``). ``referee
    detect`` polishes only the outlines it keeps: polished before the choice, outlines of
    napkins and newspapers read as cards (real photos, models/README.md). (But for the
    faint boxes it looks at again, ``detect._second_look``, which are kept only when then
    read for sure as a face-up card.)"""
    return polish_many(slopes, [outline])[0]


def polish_many(slopes: Gradients, outlines: Sequence[Outline]) -> list[Outline]:
    """Each outline ``polish``ed, the shrunk boxes' sides sampled at once (``refine_many``),
    as ``tighten`` shares them between the cores."""
    boxed = [(k, outline.box) for k, outline in enumerate(outlines) if outline.box is not None]
    out = list(outlines)
    if not boxed:
        return out
    others = _shared(slopes, [shrunk(box) for _, box in boxed])
    for (k, _), other in zip(boxed, others, strict=True):
        if edge_support(slopes, other) > edge_support(slopes, outlines[k].corners):
            out[k] = replace(outlines[k], corners=other)
    return out


def shrunk(corners: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """A rectangular box (4 corners in order round it, as the detector gives them) scaled
    about its centre by BOX_SHORT_SCALE across and BOX_LONG_SCALE along its length."""
    c = np.asarray(corners, np.float64)
    centre = c.mean(axis=0)
    first, second = c[1] - c[0], c[3] - c[0]  # from corner 0 along each of its sides
    if np.linalg.norm(first) > np.linalg.norm(second):
        first, second = second, first
    out = np.repeat(centre[None], len(c), axis=0)
    for axis, factor in ((first, BOX_SHORT_SCALE), (second, BOX_LONG_SCALE)):
        unit = axis / max(float(np.linalg.norm(axis)), 1e-9)
        out += np.outer((c - centre) @ unit, unit) * factor
    return out


def decode(raw: npt.NDArray[np.float64], scale: float, left: float, top: float,
           min_score: float = MIN_SCORE) -> list[Outline]:
    """Rows cx, cy, w, h, score, angle (radians) of a one-class OBB head -> outlines."""
    keep = raw[4] >= min_score
    boxes = raw[:, keep].T
    boxes = boxes[np.argsort(-boxes[:, 4])]
    if not len(boxes):
        return []
    corners = (np.array([cv2.boxPoints(((cx, cy), (w, h), float(np.degrees(angle))))
                         for cx, cy, w, h, _, angle in boxes], np.float64)
               - (left, top)) / scale
    x, y = corners[:, :, 0], corners[:, :, 1]
    areas = 0.5 * np.abs((x * np.roll(y, -1, axis=1) - np.roll(x, -1, axis=1) * y).sum(axis=1))
    shown = np.flatnonzero(areas > 0)  # a box of no area outlines nothing
    kept = greedy_distinct(list(corners[shown]), NMS_IOU)
    return [Outline(corners[shown[i]], float(boxes[shown[i], 4]), learned=True) for i in kept]


def split_merged(boxes: list[Outline]) -> list[Outline]:
    """For each box scored at least MIN_SCORE that is squarer than a card (MERGED_SQUARENESS),
    the card-shaped boxes at either end of it, each way round: two cards lying side by side
    (a fan, a pair laid over each other) are often outlined as one, and neither card's index
    corner is where that outline's corner is. They are faint boxes (``referee detect`` keeps
    one only when it reads as a face-up card for sure)."""
    out: list[Outline] = []
    for box in boxes:
        if box.score < MIN_SCORE:
            continue
        c = np.asarray(box.corners, np.float64)
        sides = (c[1] - c[0], c[3] - c[0])  # from corner 0: along one side, along the other
        lengths = [float(np.linalg.norm(side)) for side in sides]
        if min(lengths) < MERGED_SQUARENESS * max(lengths):
            continue
        for along, across, length, width in ((sides[0], sides[1], *lengths),
                                             (sides[1], sides[0], *lengths[::-1])):
            # a card whose long side runs the box's side along (shorter than the other side:
            # a card is 0.72 as wide as long, the box at least 0.8; the second way round
            # turns its corners the other way, which nothing downstream minds)
            short = length * CARD_ASPECT
            unit = across / width
            for offset in (0.0, width - short):
                first = c[0] + unit * offset
                corners = np.array([first, first + along, first + along + unit * short,
                                    first + unit * short])
                out.append(Outline(corners, min(box.score, SPLIT_SCORE), learned=True,
                                   split=True))
    return out
