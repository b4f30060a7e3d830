"""Card identity from a card's two index corners and, when nothing covers it, its whole face,
with small classifiers run by onnxruntime.

The index model (``models/card_index.onnx``, trained on synthetic renders, see
models/README.md) classifies one 64 x 64 index crop into a card code, ``JK``, ``back`` or
``other``. Both index corners of a card are read; agreeing readings add up. The face model
(``models/card_face.onnx``, optional) classifies the whole card squeezed to 64 x 64: it
counts pips and sees their shape, which an unfamiliar typeface in the corner does not hide.
For a card known to be uncovered, when the face reads the rank the corners read (an ace
only when seen small), the suit is the one corners and face together make most likely;
otherwise a sure face reading of a number card, a back or a joker decides (a joker less
sure when the corners read a jack or nothing sure), and failing that the corners do. The
suit model (``models/card_suit.onnx``, optional) reads an uncovered card's two end bands,
its whole width, into a suit: that reading joins the choice of suit, and names the suit
of a card whose corners see only its rank. A card whose best reading is not confident
enough is reported as ``??``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Final, TypeVar

import numpy as np
import numpy.typing as npt
from shapely.geometry import MultiPoint, Polygon
from shapely.geometry import box as shapely_box

from referee.cards import BACK_CODE, JOKER_CODE, RANKS, SUITS
from referee.detection.crops import (
    CARD_H_MM,
    CARD_W_MM,
    INDEX_CROP_PX,
    LEGACY_INDEX_MM,
    bands_of,
    canonical_card,
    face_crop,
    face_of,
    index_crops,
    order_corners,
    short_side,
)
from referee.detection.onnx_model import (
    MODELS_DIR,
    ModelMissingError,
    cores,
    cpu_session,
    member_paths,
    read_meta,
)

__all__ = ["MODELS_DIR", "CardIdentifier", "CardReading", "CardVerifier", "ModelMissingError"]

Image = npt.NDArray[np.uint8]
DEFAULT_MODEL: Final = MODELS_DIR / "card_index.onnx"
DEFAULT_FACE_MODEL: Final = MODELS_DIR / "card_face.onnx"
DEFAULT_VERIFIER: Final = MODELS_DIR / "card_verifier.onnx"
DEFAULT_SUIT_MODEL: Final = MODELS_DIR / "card_suit.onnx"
UNSURE: Final = "??"
#: The classifier's class for a corner that is table or clutter, not a card.
NOT_A_CARD: Final = "other"
#: Below this probability a reading is "??" (measured on validation decks, models/README.md).
MIN_CONFIDENCE: Final = 0.6
#: The face decides an uncovered card when it reads a number card, a back or a joker at
#: least this sure (it counts pips, whatever the typeface; courts and aces, one picture
#: or pip on any card, stay with the corners). Chosen on validation decks, models/README.md.
FACE_SURE: Final = 0.9
FACE_DECIDES: Final = frozenset({*(f"{r}{s}" for r in "23456789T" for s in SUITS), BACK_CODE,
                                 JOKER_CODE})
#: ... but a face read as a back does not decide when a corner reads a face-up card at least
#: this sure: a back has no index (kde:svg-penguins' KD seen small, both corners KD, face
#: `back`). Held-out cards 2 more right, validation cards lying apart 1 more, no card lost
#: on any split (session 30, models/README.md).
BACK_INDEX_SURE: Final = 0.9
#: A joker is decided by the face at this lower bar when the corners read a jack or are
#: unsure: a joker's corner spells a word (J, o, k...) that the index model, knowing no such
#: corner, reads as the nearest card, a jack (aisleriot tango's joker: JD or JC, 0.8-0.9).
#: Corners sure of another rank stay: the face reads a few small courts as jokers
#: (aisleriot simplistic's KD at 1.2 px/mm, JK 0.74-0.77, corners KD 1.0).
FACE_JOKER_SURE: Final = 0.6
#: When corners and face read the same rank, the suit maximises the corners' mean probability
#: times the face's to this power (the face, 64 x 64 for the whole card, is the weaker
#: witness of a suit; 1.0 lost a court of a validation design). Chosen on validation decks.
FACE_SUIT_WEIGHT: Final = 0.5
#: The same power for an ace (pooled only when seen small, ``ACE_POOLED_PX_PER_MM``): there
#: its corner suit is a blob of a few pixels, while its one big pip is the face's clearest
#: sight of a suit, so the two witnesses count alike (kde jolly-royal's AC at 1.1 px/mm:
#: corners AS 0.97, face AC 0.98, read AS at 0.5). Validation designs' aces lying apart
#: 92.8% -> 93.9% read right; held-out designs and real photos unchanged (session 25,
#: models/README.md).
ACE_FACE_SUIT_WEIGHT: Final = 1.0
#: An ace's suit is chosen the same way only on a card seen at most this many pixels per
#: millimetre (its short side over 63 mm; 2.0 is a card under 126 px wide, as a webcam
#: over a playing area sees it). There its corner suit is a blob of a few pixels, club or
#: spade alike, while its one big pip still shows its shape. Seen larger, the corners are
#: the better witness and decide alone: in the real webcam photos (2.4-3.2 px/mm) the face
#: model still rates two Bicycle aces of spades (ornate pips) AC, 0.62-0.69, that the
#: corners read AS at 0.99 (session 21, models/README.md).
ACE_POOLED_PX_PER_MM: Final = 2.0
#: An uncovered card with one index corner read as no card (a design that prints the rank
#: alone in its corners and the suit elsewhere, as aisleriot tango_nuevo does) takes its
#: suit from the face, of the colour the corners read, when the face's probabilities of
#: that suit add up to at least this much (its pips show the suit, whatever their count).
#: Chosen on flat renders of that design at 75-100 px; no validation or other held-out
#: design changed (session 14, models/README.md).
FACE_SUIT_SURE: Final = 0.5
RED_SUITS: Final = frozenset("HD")
#: The suit of an uncovered card also weighs the suit model's reading of its two end bands
#: (each band's probability of each suit, to this power): it sees the whole width of the
#: card's ends, so also a suit printed away from the index, as aisleriot tango_nuevo
#: prints it beside a rank-only index. Each band counts once, as each corner does: chosen
#: on validation designs' cards lying apart, where powers 0.5-3 and the bands' mean
#: instead of their product came within two cards of each other (session 27,
#: models/README.md).
SUIT_BAND_WEIGHT: Final = 1.0
#: A card something lies on is a back when its corners read no card (table, or a back) and it
#: is still ``??``, and its whole face, read as an uncovered card's is, reads as a back this
#: sure (``FACE_SURE``, the bar at which a face decides an uncovered card): a face-down card
#: of a design never seen prints its back to the edge or in a pattern the index model takes
#: for table, and what shows of it, most of its face, is that pattern. Only a card one of
#: whose end bands no other card overlaps: one all but hidden under a face-down card or a
#: pile shows that card's back on its face (from true outlines, 35 cards 0-18% visible were
#: so read as backs without it, on every split). From true outlines (``bench/cards.py``,
#: 300 scenes) held-out designs' covered backs read right 14 -> 19 of 25 (rheinland's and
#: berlin's mostly), no other card read otherwise; validation designs' covered backs read
#: right already (their corners read ``back``; session 52, models/README.md). Left: a face
#: the face model takes for a back though it is none (aisleriot tango_nuevo's giant-pip
#: number cards, 0.76-0.96) is so read covered too, and in ``referee detect`` a box kept on
#: the verifier's word so read is kept as a back.
COVERED_BACK_SURE: Final = FACE_SURE
#: A batch of crops is split among at most this many cores, in parts of at least
#: SPLIT_BATCH crops (measured on 2 cores, session 16: 156 crops 112 -> 57 ms, 20 crops
#: 14 -> 10 ms; one session of two threads was slower, its threads spinning beside the
#: card detector's).
MAX_WORKERS: Final = 4
SPLIT_BATCH: Final = 8
#: Cutting a card's whole face (a warp of the card at 4 px/mm, then scaled down: 1.05 ms)
#: costs about as much as cutting this many index crops (0.36 ms each): a batch of faces is
#: split among the cores from 2 * SPLIT_BATCH / FACE_CUT_COST = 4 faces on (the verifier's
#: 9 faces a frame were cut in turn, one core waiting, session 38).
FACE_CUT_COST: Final = 4
#: A card whose face is not read (another card overlaps it, part of it lies beyond the
#: picture, or there is no face model) is a joker by one corner alone only when that corner
#: reads one at least this sure; else it is ``??``. The index model, knowing no such corner,
#: reads a corner of a number card or court of an unfamiliar design as a joker (aisleriot
#: tango's most), and a card taken for a joker misleads a ruling (Slapstick: a joker hands
#: the row on), where ``??`` waits for a sure reading. Jokers of designs never seen read
#: 0.64-0.98 from one corner, as sure as many such misreadings. On 500 rendered frames of
#: each split `referee detect` so reads 7 (validation designs) and 5 (held-out) found cards
#: taken for jokers ``??``, and one joker each (the bar was first 0.98, chosen on the
#: validation designs; from true outlines it made 3 held-out jokers read 0.95-0.978 ``??``;
#: session 51, models/README.md).
JOKER_CORNER_SURE: Final = 0.9
#: How many next likeliest card codes a reading keeps (the tracker may need one when the
#: likeliest is a card already on the table).
ALTERNATIVES: Final = 3


#: An index corner less than this share of which lies in the picture is not read: its crop
#: is mostly the picture's edge pixels drawn out (a card the frame cuts, outlined whole).
INDEX_SEEN_SHARE: Final = 0.5

#: A card's face is read only when at least this share of it lies in the picture.
FACE_SEEN_SHARE: Final = 0.9

_Item = TypeVar("_Item")


def _within(outline: npt.NDArray[np.float64], image: Image) -> bool:
    """Whether every corner of ``outline`` lies on the picture (most outlines: the cheap
    answer before any clipping)."""
    height, width = image.shape[:2]
    return bool(outline.min() >= 0 and outline[:, 0].max() <= width - 1
                and outline[:, 1].max() <= height - 1)


def share_in_picture(outline: npt.ArrayLike, image: Image) -> float:
    """How much of the card ``outline`` outlines lies in the picture (its convex hull's share
    of area; 0 for an outline of no area reaching beyond the picture, or not finite)."""
    outline = np.asarray(outline, dtype=np.float64).reshape(-1, 2)
    if not np.isfinite(outline).all():
        return 0.0
    if _within(outline, image):
        return 1.0
    height, width = image.shape[:2]
    card = MultiPoint(outline).convex_hull
    return float(card.intersection(shapely_box(0, 0, width, height)).area / card.area) \
        if card.area > 0 else 0.0


def _index_seen(outline: npt.NDArray[np.float64], image: Image,
                index_mm: tuple[float, float]) -> tuple[bool, bool]:
    """Whether each index corner of ``outline`` (``index_crops``' order, ``index_mm`` of the
    card) lies in the picture, at least INDEX_SEEN_SHARE of it."""
    if _within(outline, image):
        return (True, True)
    height, width = image.shape[:2]
    ordered = order_corners(outline)
    picture = shapely_box(0, 0, width, height)
    across, along = index_mm[0] / CARD_W_MM, index_mm[1] / CARD_H_MM
    seen = []
    for k in (0, 2):  # the index corners, each with its short side and its long side
        corner = ordered[k]
        short, long = ordered[(k + 1) % 4] - corner, ordered[(k + 3) % 4] - corner
        part = Polygon([corner, corner + across * short,
                        corner + across * short + along * long, corner + along * long])
        seen.append(part.area <= 0
                    or part.intersection(picture).area >= INDEX_SEEN_SHARE * part.area)
    return (seen[0], seen[1])


def _both(first: tuple[bool, bool], second: tuple[bool, bool]) -> tuple[bool, bool]:
    return (first[0] and second[0], first[1] and second[1])


def _as_is(crop: Image) -> tuple[Image]:
    """A crop already cut (``_Classifier.cut_and_read``)."""
    return (crop,)


def suited(code: str) -> bool:
    """Whether a card code names a face-up card of the four suits (not a joker, a back, `??`)."""
    return len(code) == 2 and code[0] in RANKS and code[1] in SUITS


def _indexed(reading: CardReading) -> bool:
    """Whether a corner reads a face-up card BACK_INDEX_SURE sure: a back has no index, so
    such corners outweigh a face taken for a back."""
    return any(suited(code) and p >= BACK_INDEX_SURE for code, p in reading.corners)


def _as_back(reading: CardReading, face: tuple[str, float],
             at_least: float) -> CardReading | None:
    """``reading`` made a back when its face (likeliest class, how sure) reads as one at least
    ``at_least`` sure and no corner reads a face-up card BACK_INDEX_SURE sure (``_indexed``);
    else None."""
    if face[0] == BACK_CODE and face[1] >= at_least and not _indexed(reading):
        return _revised(reading, BACK_CODE, face[1], face)
    return None


def joker_checked(reading: CardReading) -> CardReading:
    """``reading``, or ``??`` when it is a joker whose face was not read and that no more than
    one corner reads as one (as its likeliest class), none JOKER_CORNER_SURE sure."""
    jokers = [p for code, p in reading.corners if code == JOKER_CODE]
    if reading.face is None and reading.card == JOKER_CODE and len(jokers) < 2 \
            and max(jokers, default=0.0) < JOKER_CORNER_SURE:
        return _revised(reading, UNSURE, reading.confidence, None)
    return reading


@dataclass(frozen=True)
class CardReading:
    """What a card is: its code (or ``??``/``back``), how sure, and each corner's reading."""

    card: str
    confidence: float
    corners: tuple[tuple[str, float], tuple[str, float]]
    #: The whole face's reading, when it was read (with a face model: an uncovered card, or a
    #: covered one whose corners read no card, ``COVERED_BACK_SURE``).
    face: tuple[str, float] | None = field(default=None, compare=False)
    #: The card as cut for the models, with the first reading (to ``confirm`` it).
    cut: _Cut | None = field(default=None, compare=False, repr=False)
    #: The next likeliest card codes by the corners, with their confidence, best first.
    alternatives: tuple[tuple[str, float], ...] = field(default=(), compare=False)


def _revised(reading: CardReading, card: str, confidence: float,
             face: tuple[str, float] | None) -> CardReading:
    """``reading`` decided anew as ``card``: the corners' own reading, when another card,
    becomes the first of its alternatives."""
    others = tuple((code, p) for code, p in ((reading.card, reading.confidence),
                                              *reading.alternatives)
                   if code != card and suited(code))
    return CardReading(card, confidence, reading.corners, face, reading.cut, others)


class _Classifier:
    """One ONNX classifier of square BGR crops and its class names; with the ``members``
    its metadata lists (further runs on the same classes, files beside it), an ensemble
    whose probabilities are averaged."""

    def __init__(self, model: Path, what: str, threads: int) -> None:
        self.meta = read_meta(model, what)
        self.path = model
        self.classes: list[str] = list(self.meta["classes"])
        self.threads = threads
        # Split only batches for one-thread sessions: a session given more threads
        # already uses the cores.
        self.workers = max(1, min(MAX_WORKERS, cores())) if threads == 1 else 1
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self.members = member_paths(model, self.meta, what)
        for member in self.members:
            if list(read_meta(member, what)["classes"]) != self.classes:
                raise ValueError(f"{member} does not classify into {model}'s classes")

    def open(self) -> None:
        """Open the sessions now (they open on first use otherwise)."""
        len(self._sessions)

    @cached_property
    def _sessions(self) -> list[Any]:
        return [cpu_session(path, self.threads) for path in (self.path, *self.members)]

    def likeliest(self, probs: npt.NDArray[np.float32]) -> tuple[str, float]:
        """The likeliest class of one crop's probabilities, and its probability."""
        return self.classes[int(probs.argmax())], float(probs.max())

    def probabilities(self, crops: Sequence[Image], member: int = 0,
                      ) -> npt.NDArray[np.float32]:
        """Class probabilities (N x classes) for BGR crops, by the model (0) or one of its
        members (1...)."""
        return self.cut_and_read(crops, _as_is, member)[1]

    def cut_and_read(self, items: Sequence[_Item], cut: Callable[[_Item], tuple[Image, ...]],
                     member: int = 0, *, each: int = 1, cost: int | None = None,
                     ) -> tuple[list[tuple[Image, ...]], npt.NDArray[np.float32]]:
        """The crops ``cut`` makes of each item (``each`` crops an item), and their class
        probabilities (a row per crop, in order), by the model (0) or one of its members
        (1...). ``cost``: what cutting an item costs, in index crops (by default ``each``;
        FACE_CUT_COST for a card's whole face), to tell whether the batch is worth
        splitting among the cores."""
        session = self._sessions[member]
        name = session.get_inputs()[0].name

        def run(part: Sequence[_Item]) -> tuple[list[tuple[Image, ...]], npt.NDArray[np.float32]]:
            cuts = [cut(item) for item in part]
            batch = np.stack([c[:, :, ::-1] for crops in cuts for c in crops])
            batch = np.ascontiguousarray(
                (batch.astype(np.float32) / 255.0).transpose(0, 3, 1, 2))
            return cuts, np.asarray(session.run(None, {name: batch})[0], dtype=np.float32)

        # A big batch (``referee detect`` reads dozens of candidate outlines) is split among
        # the cores, each part cut and run by a one-thread session at once (onnxruntime and
        # OpenCV's warps let go of the GIL: cutting the corners of 80 outlines took 21 ms in
        # one thread, 12 in two); a small one is not worth the hand-over.
        parts = min(self.workers, len(items) * (each if cost is None else cost) // SPLIT_BATCH)
        if parts < 2:
            return run(items)
        pool = self._workers()
        futures: list[Future[tuple[list[tuple[Image, ...]], npt.NDArray[np.float32]]]] = []
        try:
            for chunk in np.array_split(np.arange(len(items)), parts):
                futures.append(pool.submit(run, [items[i] for i in chunk]))
        except RuntimeError:  # no new work taken while the interpreter shuts down
            for future in futures:
                future.cancel()
            return run(items)
        # (outside the try: an error in a part's run is raised, not retried unsplit)
        done = [future.result() for future in futures]
        return [c for cuts, _ in done for c in cuts], np.concatenate([p for _, p in done])

    def _workers(self) -> ThreadPoolExecutor:
        with self._pool_lock:  # one pool, even when two threads read cards at once
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.workers,
                                                thread_name_prefix="card-classifier")
            return self._pool


@dataclass(frozen=True)
class _Cut:
    """A card as cut for the models, and the index model's first reading of its corners;
    its face is cut only when it is read (``face``): of the many candidate outlines
    ``referee detect`` reads, few are kept and fewer lie apart. ``image`` is the caller's
    frame itself, not a copy (a copy per candidate would cost more than the cut): it must
    not be changed while the reading may still be confirmed."""

    corners: tuple[Image, Image]
    probabilities: npt.NDArray[np.float32]  # 2 x classes
    image: Image = field(repr=False)
    outline: npt.NDArray[np.float64] = field(repr=False)
    #: Whether each index corner lies in the picture (``_index_seen``): one beyond its edge,
    #: and the end band that holds it, are not read.
    seen: tuple[bool, bool] = (True, True)
    #: How much of the card lies in the picture: its face is read from FACE_SEEN_SHARE.
    in_picture: float = 1.0
    #: ``flat``, once made (not a cached_property: Python 3.11's holds one lock for every
    #: instance, so the cores could not warp two cards at once).
    _kept: dict[str, Image] = field(default_factory=dict, repr=False, compare=False)

    def flat(self) -> Image:
        """The card seen straight on: warped once for both its face and its end bands."""
        if "flat" not in self._kept:
            self._kept["flat"] = canonical_card(self.image, self.outline)
        return self._kept["flat"]

    def face(self) -> Image:
        return face_of(self.flat())

    def bands(self) -> tuple[Image, Image]:
        return bands_of(self.flat())

    def px_per_mm(self) -> float:
        """How large the card is seen: its shortest side in pixels over a card's width."""
        return short_side(self.outline) / CARD_W_MM


class CardVerifier:
    """Whether an outline holds a card at all: a classifier of the whole face, cut as the
    face model cuts it, into ``card`` and ``not_card`` (``models/card_verifier.onnx``,
    trained on what the detector outlines in rendered scenes: the cards, and the books,
    papers, boxes and board squares it takes for cards)."""

    def __init__(self, model: Path = DEFAULT_VERIFIER, *, threads: int = 1) -> None:
        self._model = _Classifier(model, "card verifier", threads)
        if "not_card" not in self._model.classes:
            raise ModelMissingError(f"card verifier {model} has no not_card class")
        self._model.open()  # a file that cannot be run fails here, not in the middle of an image

    def not_card(self, image: Image, outlines: Sequence[npt.ArrayLike]) -> list[float]:
        """For each outline (four corners, image pixels), how sure the verifier is that it
        holds no card."""
        if len(outlines) == 0:
            return []
        column = self._model.classes.index("not_card")
        _, read = self._model.cut_and_read(
            outlines, lambda o: (face_crop(image, np.asarray(o, np.float64).reshape(4, 2)),),
            cost=FACE_CUT_COST)
        return [float(p[column]) for p in read]


class CardIdentifier:
    """Reads card identities with the ONNX index-corner classifier and, for uncovered cards,
    the whole-face classifier (when ``face_model`` exists)."""

    def __init__(self, model: Path = DEFAULT_MODEL, *,
                 face_model: Path | None = DEFAULT_FACE_MODEL,
                 suit_model: Path | None = DEFAULT_SUIT_MODEL, threads: int = 1) -> None:
        self._index = _Classifier(model, "card model", threads)
        self.classes = self._index.classes
        #: The size of the index cut the model was trained on (mm, width x height).
        width, height = self._index.meta.get("index_mm", LEGACY_INDEX_MM)
        self.index_mm = (float(width), float(height))
        self._face = _Classifier(face_model, "card face model", threads) \
            if face_model is not None and face_model.exists() else None
        self._suit = _Classifier(suit_model, "card suit model", threads) \
            if suit_model is not None and suit_model.exists() and self._face is not None \
            else None

    @property
    def reads_faces(self) -> bool:
        return self._face is not None

    def identify(self, image: Image, corners_px: npt.ArrayLike,
                 uncovered: bool = False,
                 clear: tuple[bool, bool] = (False, False)) -> CardReading:
        """Read the card whose four corners (image pixels, any order) are given."""
        return self.identify_many(image, [corners_px], [uncovered], clear=[clear])[0]

    def identify_many(self, image: Image, cards: Sequence[npt.ArrayLike],
                      uncovered: Sequence[bool] | None = None, *,
                      quick: bool = False,
                      clear: Sequence[tuple[bool, bool]] | None = None) -> list[CardReading]:
        """Read each card; the faces of those ``uncovered`` says nothing lies on are read
        too (by default none: a covered face shows another card's pips), and the end bands
        ``clear`` says no other card overlaps (``outlines.clear_bands``) of the others.
        ``quick``: the corners by the index model alone, not its ensemble, and no face
        (``confirm`` reads the rest later)."""
        if not cards:
            return []
        outlines = [np.asarray(corners, dtype=np.float64).reshape(4, 2) for corners in cards]
        cuts, probs = self._index.cut_and_read(
            outlines, lambda outline: index_crops(image, outline, self.index_mm), each=2)
        assert cuts[0][0].shape[:2] == (INDEX_CROP_PX, INDEX_CROP_PX)
        seen = [_index_seen(outline, image, self.index_mm) for outline in outlines]
        probs = self._unseen_masked(probs, seen)
        readings = [self._combine(probs[2 * i], probs[2 * i + 1],
                                  _Cut((first, second), probs[2 * i:2 * i + 2], image, outline,
                                       seen[i], share_in_picture(outline, image)))
                    for i, ((first, second), outline) in enumerate(zip(cuts, outlines,
                                                                       strict=True))]
        return readings if quick else self.confirm(readings, uncovered, clear=clear)

    def moved(self, reading: CardReading, corners: npt.ArrayLike) -> CardReading:
        """A quick reading (``identify_many(..., quick=True)``) kept for the card now outlined
        at ``corners``: the same reading of its index corners (as cut where it was read),
        its face and end bands cut at ``corners`` when ``confirm`` reads them, and which
        index corners and how much of it lie in the picture judged there."""
        cut = reading.cut
        if cut is None:
            raise ValueError("moved() takes readings made by identify_many(quick=True)")
        outline = np.asarray(corners, dtype=np.float64).reshape(4, 2)
        return replace(reading, cut=_Cut(cut.corners, cut.probabilities, cut.image, outline,
                                         _index_seen(outline, cut.image, self.index_mm),
                                         share_in_picture(outline, cut.image)))

    def backs(self, image: Image, cards: Sequence[npt.ArrayLike], *,
              at_least: float = FACE_SURE,
              quick: Sequence[CardReading] | None = None) -> list[CardReading | None]:
        """For each card (four corners), its quick reading made a back when its whole face
        reads as one at least ``at_least`` sure and no corner reads a face-up card
        BACK_INDEX_SURE sure (as ``_decide`` lets a face decide); else None. (Without a
        face model, None for all.)"""
        if self._face is None or not cards:
            return [None] * len(cards)
        if quick is None:
            quick = self.identify_many(image, cards, quick=True)
        cuts = [reading.cut for reading in quick if reading.cut is not None]
        if len(cuts) != len(quick):
            raise ValueError("backs() takes readings made by identify_many(quick=True)")
        _, faces = self._face.cut_and_read(cuts, lambda cut: (cut.face(),))
        return [_as_back(reading, self._face.likeliest(face), at_least)
                for reading, face in zip(quick, faces, strict=True)]

    def confirm(self, readings: Sequence[CardReading],
                uncovered: Sequence[bool] | None = None, *,
                ensemble: bool = True,
                clear: Sequence[tuple[bool, bool]] | None = None,
                check_jokers: bool = True) -> list[CardReading]:
        """Quick readings (``identify_many(..., quick=True)``) completed: the corners read by
        every member of the index model's ensemble too (probabilities averaged; not with
        ``ensemble=False``), the faces and end bands of the ``uncovered`` cards read
        (``_decide``), and of the others the end bands ``clear`` names (``_decide_bands``),
        and the face of one still ``??`` whose corners read no card when a band is clear
        (``COVERED_BACK_SURE``).
        A joker whose face is not read and that one corner at most reads as one, under
        JOKER_CORNER_SURE, is ``??`` (``joker_checked``; not with ``check_jokers=False``)."""
        out = list(readings)
        known = [r.cut for r in readings if r.cut is not None]
        if len(known) != len(readings):
            raise ValueError("confirm() takes readings made by identify_many(quick=True)")
        if not known:
            return out
        mean = np.concatenate([cut.probabilities for cut in known])
        if ensemble and self._index.members:
            crops = [crop for cut in known for crop in cut.corners]
            total = mean
            for member in range(1, len(self._index.members) + 1):
                total = total + self._index.probabilities(crops, member)
            mean = self._unseen_masked(
                np.asarray(total / (1 + len(self._index.members)), np.float32),
                [cut.seen for cut in known])
            out = [self._combine(mean[2 * i], mean[2 * i + 1], cut)
                   for i, cut in enumerate(known)]
        if self._face is not None:
            out = self._faces_and_bands(out, known, mean, uncovered, clear)
        return [joker_checked(reading) for reading in out] if check_jokers else out

    def _faces_and_bands(self, readings: list[CardReading], cuts: list[_Cut],
                         corners: npt.NDArray[np.float32], uncovered: Sequence[bool] | None,
                         clear: Sequence[tuple[bool, bool]] | None) -> list[CardReading]:
        """``readings`` (of ``cuts``; ``corners``: their corners' probabilities, two rows a
        card) decided again by the faces and end bands of the ``uncovered`` cards
        (``_decide``), and of the others by the end bands ``clear`` names
        (``_decide_bands``); a covered card still ``??`` whose corners read no card and
        one of whose end bands is clear is a back when its face reads as one
        (``COVERED_BACK_SURE``)."""
        assert self._face is not None
        out = list(readings)
        # (Of a card reaching beyond the picture, not the face when a tenth of it lies beyond,
        # nor the end band beyond it: what shows there is the picture's edge drawn out.)
        wanted = [i for i in range(len(out)) if uncovered is not None and uncovered[i]
                  and cuts[i].in_picture >= FACE_SEEN_SHARE]
        # The end bands the suit model reads: both of an uncovered card's, the clear ones of
        # the others'.
        ends = [_both((True, True) if i in wanted else clear[i] if clear is not None
                      else (False, False), cuts[i].seen) for i in range(len(out))]
        # The faces of the covered cards whose corners read no card, read with them: of
        # those with an end band clear, so showing much of themselves (a card all but
        # hidden under a face-down card or a pile shows that card's back on its face).
        unread = [i for i in range(len(out)) if i not in wanted and out[i].card == UNSURE
                  and cuts[i].in_picture >= FACE_SEEN_SHARE and any(ends[i])
                  and all(code in (NOT_A_CARD, BACK_CODE) for code, _ in out[i].corners)]
        bands = self._read_bands(cuts, ends)
        faces: dict[int, npt.NDArray[np.float32]] = {}
        if wanted or unread:
            read_for = [*wanted, *unread]
            _, read = self._face.cut_and_read([cuts[i] for i in read_for],
                                              lambda cut: (cut.face(),))
            faces = dict(zip(read_for, read, strict=True))
        for i in wanted:
            out[i] = self._decide(out[i], faces[i], corners[2 * i:2 * i + 2],
                                  cuts[i].px_per_mm(), bands.get(i))
        for i, band in bands.items():
            if i not in wanted:
                out[i] = self._decide_bands(out[i], corners[2 * i:2 * i + 2], band)
        for i in unread:
            if out[i].card == UNSURE:  # (the end bands may have named a rank)
                out[i] = _as_back(out[i], self._face.likeliest(faces[i]),
                                  COVERED_BACK_SURE) or out[i]
        return out

    def _read_bands(self, cuts: Sequence[_Cut], ends: Sequence[tuple[bool, bool]],
                    ) -> dict[int, npt.NDArray[np.float32]]:
        """By card (its index in ``cuts``), the suit model's probabilities of ``SUITS`` for
        the end bands ``ends`` names: a row for each band read."""
        chosen = [(i, use) for i, use in enumerate(ends) if any(use)]
        if self._suit is None or not chosen:
            return {}

        def named(card: tuple[int, tuple[bool, bool]]) -> tuple[Image, ...]:
            i, use = card
            return tuple(band for band, on in zip(cuts[i].bands(), use, strict=True) if on)

        columns = [self._suit.classes.index(suit) for suit in SUITS]
        # (a card's first band cut warps its whole face: ``_Cut.flat``)
        bands, read = self._suit.cut_and_read(chosen, named, each=2, cost=FACE_CUT_COST)
        starts = np.cumsum([0, *(len(pair) for pair in bands)])
        return {i: read[start:end, columns]
                for (i, _), start, end in zip(chosen, starts[:-1], starts[1:], strict=True)}

    def _decide_bands(self, reading: CardReading, corners: npt.NDArray[np.float32],
                      band: npt.NDArray[np.float32]) -> CardReading:
        """A card something may lie on, read by its corners and the end bands no other card
        overlaps (``band``: a row of ``SUITS`` probabilities for each): the suit as
        ``_decide`` weighs it without a face."""
        card, confidence = self._by_bands(reading.card, reading.confidence, corners, band)
        return _revised(reading, card, confidence, reading.face)

    def _decide(self, reading: CardReading, face: npt.NDArray[np.float32],
                corners: npt.NDArray[np.float32], px_per_mm: float,
                band: npt.NDArray[np.float32] | None = None) -> CardReading:
        """An uncovered card read by its corners (``corners``: their probabilities) and by
        its face, the card seen at ``px_per_mm``. When both read the same rank (an ace only
        when seen small, ``ACE_POOLED_PX_PER_MM``), the suit is the one both together make
        most likely (the corners' mean probability times the face's, weighted by
        ``FACE_SUIT_WEIGHT``, ``ACE_FACE_SUIT_WEIGHT`` for an ace): small corner suits and
        pips err apart. ``band`` (2 x 4: the suit model's probabilities of ``SUITS`` for
        each of the card's end bands) joins that product, each band once
        (``SUIT_BAND_WEIGHT``), but for an ace. Otherwise a sure face reading of a number
        card, a back or a joker decides (a back only when no corner reads a face-up card
        ``BACK_INDEX_SURE`` sure); a joker already at ``FACE_JOKER_SURE`` when the corners
        read a jack or are unsure. Failing that, the bands weigh the corners' suit
        alone, and name the suit of a card whose corners are sure of its rank only (a
        reading other than a joker); without them a card indexed in one corner only takes
        its suit from the face (``_suit_from_face``)."""
        assert self._face is not None
        read = self._face.likeliest(face)
        card, confidence = reading.card, reading.confidence
        same_rank = suited(card) and suited(read[0]) and card[0] == read[0][0] and (
            card[0] != "A" or px_per_mm <= ACE_POOLED_PX_PER_MM)
        # a back has no index: corners that read one for sure outweigh a face taken for a back
        indexed = read[0] == BACK_CODE and _indexed(reading)
        face_decides = (read[0] in FACE_DECIDES and read[1] >= FACE_SURE and not indexed) or (
            read[0] == JOKER_CODE and read[1] >= FACE_JOKER_SURE
            and (card[0] == "J" or confidence < FACE_SURE))
        if same_rank:
            # An ace's bands show only its corner index, which the corners read already;
            # its one pip, which the face sees, lies between them.
            card, confidence = self._pooled_suit(card[0], corners,
                                                 None if card[0] == "A" else band,
                                                 (card, confidence), face)
        elif face_decides:
            card, confidence = read
        elif band is not None:
            card, confidence = self._by_bands(card, confidence, corners, band)
        elif NOT_A_CARD in (code for code, _ in reading.corners):
            card, confidence = self._suit_from_face(reading, face, corners) or (card, confidence)
        return _revised(reading, card, confidence, read)

    def _by_bands(self, card: str, confidence: float, corners: npt.NDArray[np.float32],
                  band: npt.NDArray[np.float32]) -> tuple[str, float]:
        """A card read by its corners (``card``, ``confidence``; their probabilities
        ``corners``) and its end bands, without a face: a suited reading's suit pooled with
        the bands', and a reading other than a joker whose corners are sure of a rank only
        (``??``, perhaps a back) that rank in the suit they make likeliest."""
        if suited(card):
            return self._pooled_suit(card[0], corners, band, (card, confidence))
        if card != JOKER_CODE:
            rank, sure = self._rank(corners)
            if sure >= MIN_CONFIDENCE:
                return self._pooled_suit(rank, corners, band, (UNSURE, sure))
        return card, confidence

    def _pooled_suit(self, rank: str, corners: npt.NDArray[np.float32],
                     band: npt.NDArray[np.float32] | None, reading: tuple[str, float],
                     face: npt.NDArray[np.float32] | None = None) -> tuple[str, float]:
        """The suit of a card of ``rank`` that the corners' mean probabilities, the face's
        (when it read that rank too) and the end bands' (``band``) make likeliest together;
        ``reading`` (code and confidence) stands when it names that card already; otherwise
        the card's share of the pooled probability is its confidence, or, when ``reading``
        is ``??`` (corners unsure of the suit), the confidence it gives (the rank's)."""
        pooled = {}
        for k, suit in enumerate(SUITS):
            pooled[suit] = float(corners[:, self.classes.index(rank + suit)].mean())
            if face is not None and self._face is not None:
                weight = ACE_FACE_SUIT_WEIGHT if rank == "A" else FACE_SUIT_WEIGHT
                pooled[suit] *= float(face[self._face.classes.index(rank + suit)]) ** weight
            if band is not None:
                pooled[suit] *= float(np.prod(band[:, k])) ** SUIT_BAND_WEIGHT
        suit = max(pooled, key=lambda s: pooled[s])
        if reading[0] == rank + suit:
            return reading
        share = pooled[suit] / max(sum(pooled.values()), 1e-12)
        return rank + suit, (reading[1] if reading[0] == UNSURE else share)

    def _rank(self, corners: npt.NDArray[np.float32]) -> tuple[str, float]:
        """The rank the corners make likeliest over all four suits, and how sure the surer
        corner is of it."""
        by_rank = {rank: float(corners[:, [self.classes.index(rank + suit) for suit in SUITS]]
                               .sum(axis=1).max()) for rank in RANKS}
        rank = max(by_rank, key=lambda r: by_rank[r])
        return rank, by_rank[rank]

    def _suit_from_face(self, reading: CardReading, face: npt.NDArray[np.float32],
                        corners: npt.NDArray[np.float32]) -> tuple[str, float] | None:
        """A card whose index shows in one corner only, perhaps its rank alone: the rank the
        corners make likeliest over all suits (how sure: the surer corner), the suit the
        face makes likeliest of the colour the corners read (``FACE_SUIT_SURE``). Not for an
        ace, whose one pip the face model misreads on some designs; None (the reading
        stands) when it cannot tell."""
        assert self._face is not None
        rank, sure = self._rank(corners)
        coloured = [code for code, _ in ((reading.card, 0.0), *reading.alternatives)
                    if suited(code)]
        if rank == "A" or not coloured:
            return None
        red = coloured[0][1] in RED_SUITS
        faced = {suit: float(sum(face[self._face.classes.index(r + suit)] for r in RANKS))
                 for suit in SUITS if (suit in RED_SUITS) == red}
        suit = max(faced, key=lambda s: faced[s])
        if faced[suit] < FACE_SUIT_SURE:
            return None
        return (rank + suit, sure) if sure >= MIN_CONFIDENCE else None

    def _unseen_masked(self, probs: npt.NDArray[np.float32],
                       seen: Sequence[tuple[bool, bool]]) -> npt.NDArray[np.float32]:
        """The corners' probabilities (two rows a card, ``index_crops``' order), those of an
        index corner beyond the picture (``_index_seen``) made ``other`` for sure: its crop
        shows nothing of the card, and no decision may take a card from it."""
        hidden = [2 * i + k for i, pair in enumerate(seen) for k, shown in enumerate(pair)
                  if not shown]
        if not hidden or NOT_A_CARD not in self.classes:
            return probs
        probs = probs.copy()
        probs[hidden] = 0.0
        probs[hidden, self.classes.index(NOT_A_CARD)] = 1.0
        return probs

    def _combine(self, first: npt.NDArray[np.float32], second: npt.NDArray[np.float32],
                 cut: _Cut | None = None) -> CardReading:
        readings = tuple((self.classes[int(p.argmax())], float(p.max())) for p in (first, second))
        # A covered corner reads as "other" or as something unsure: the best card class over
        # both corners wins, so one clear corner suffices and two agreeing ones reinforce.
        joint = first + second
        if NOT_A_CARD in self.classes:
            joint[self.classes.index(NOT_A_CARD)] = -1.0
        order = np.argsort(-joint)[:1 + ALTERNATIVES]

        def sure(k: int) -> float:
            return float(max(first[k], second[k], 1 - (1 - first[k]) * (1 - second[k])))

        best = int(order[0])
        confidence = sure(best)
        card = self.classes[best] if confidence >= MIN_CONFIDENCE else UNSURE
        others = tuple((self.classes[int(k)], sure(int(k))) for k in order[1:]
                       if suited(self.classes[int(k)]))
        return CardReading(card, confidence, readings, None, cut,  # type: ignore[arg-type]
                           others)
