"""`referee detect`: the objects seen in one image, as contract JSON, and an annotated copy."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from statistics import median
from typing import Any, Final

import cv2
import numpy as np
import numpy.typing as npt
from shapely.geometry import Polygon

from referee.calibration.rectify import PlaneMap
from referee.cards import BACK_CODE, CARD_MM, DECK_SIZES_MM, JOKER_CODE
from referee.detection.card_plane import (
    CardPlane,
    card_plane,
    ends_plane,
    one_card_plane,
)
from referee.detection.card_shape import card_shaped, shown_end
from referee.detection.cards import (
    NOT_A_CARD,
    UNSURE,
    CardIdentifier,
    CardReading,
    CardVerifier,
    ModelMissingError,
    joker_checked,
    share_in_picture,
    suited,
)
from referee.detection.corners import CornerModel
from referee.detection.crops import Corners, order_corners, short_side
from referee.detection.learned import (
    FAINT_SCORE,
    MIN_SCORE,
    CardDetector,
    halved,
    polish_many,
)
from referee.detection.outlines import (
    SAME_CARD_IOU,
    Gradients,
    Outline,
    Stacking,
    alone,
    beyond_edge,
    clear_bands,
    distinct,
    find_cards,
    gradients,
    greedy_distinct,
    hidden_shares,
    near_edge,
    quad_iou,
    segmented_card,
    shared_areas,
    shown_parts,
    side_contrast,
    stacking,
    under_cards,
)

Image = npt.NDArray[np.uint8]
#: An outline moved on a calibrated table (``card_shape``) onto another outline this much
#: (IoU) is the same card. (Not ``SAME_CARD_IOU``: cards squared up in a pile overlap more
#: than that, and 0.5 lost cards on rendered frames, models/README.md.)
MOVED_SAME_IOU: Final = 0.85
#: Below this identity confidence an outline is dropped as no card (``detect`` only: the
#: tracker knows cards from how the table changed, and keeps them as ``??``).
MIN_CARDNESS: Final = 0.3
#: A learned box scored at least this is kept whatever its corners read (chosen on held-out
#: frames and the real photos, models/README.md).
SURE_CARD_SCORE: Final = 0.8
#: A faint learned box (scored under ``learned.MIN_SCORE``, from ``learned.FAINT_SCORE``) is
#: kept only when its corners read as a face-up card at least this sure.
FAINT_SURE: Final = 0.9
#: An end of a box squarer than a card (``learned.split_merged``) needs this much (chosen on
#: validation-design frames, models/README.md).
SPLIT_SURE: Final = 0.97
#: Two outlines read as the same face-up card, the smaller lying at least this share inside
#: the other, are one card outlined twice (``_one_of_each``).
SAME_CARD_INSIDE: Final = 0.8
#: An outline read as a card lying at least FRAGMENT_INSIDE inside another, at most
#: FRAGMENT_AREA of its area, is part of that card outlined again (half of it, its court
#: picture read as a joker) when the other is read at least as surely, not as a back, and
#: holds no other such outline apart from it (or all such are read as the card it is read
#: as: its halves, session 41): cards are one size, and one lying on another is as large in
#: the picture (``_fragments``, session 38, models/README.md).
FRAGMENT_INSIDE: Final = 0.9
FRAGMENT_AREA: Final = 0.7
#: Cards are one size (``_sized``). An outline's size is the square root of its convex
#: hull's area; it is compared with the median size of the SIZE_NEAR nearest other kept
#: outlines read as face-up cards at least SIZE_SURE sure (nearest, since a card nearer an
#: angled camera looks larger; with fewer such cards, the median of those there are). One
#: under UNDERSIZED times that is no card (a puzzle piece, a plastic grid, a letter of a
#: book's title), and one read as a back or a joker more than OVERSIZED times it is none
#: either (a book, a game box, a box round several cards). On 250 rendered frames the
#: smallest true card lay at 0.59 times it and the largest back or joker at 1.47; real
#: photos' false finds lay down to 0.2 and up to 3.8 (session 40, models/README.md).
UNDERSIZED: Final = 0.5
OVERSIZED: Final = 1.6
SIZE_NEAR: Final = 3
SIZE_SURE: Final = 0.9
#: Where the cards seen whole tell no plane (``card_plane``: fewer than three, or three that
#: do not agree), an outline within this of one of them (centre to centre, mm on the plane
#: that card tells: ``one_card_plane``) that shows one end only (the other under another
#: card, or beyond the picture's edge) is made a card's shape on that plane. (Offline, on the
#: outlines of 200 held-out and 200 validation-design frames: within 60, 100, 150, 250 and
#: 400 mm, 2 and 8, 3 and 11, 5 and 14, 7 and 15, 6 and 17 more partly covered cards were
#: outlined within IoU 0.9, no fully visible one fewer. Further out, the gains are within a
#: few cards and a plane one card tells is less sure: with 1 px of noise, cards 3-5 card
#: widths from it lay 7 mm off their shape at the median; session 55.) (session 56,
#: models/README.md)
NEAR_MM: Final = 150.0
#: An outline whose parts that show (``shown_parts``) fall this share or less short of its
#: convex hull's area shows all of itself.
SHOWS_ALL: Final = 1e-3
#: An outline all of which shows whose one index corner alone reads its card at least this
#: sure (the other reading another card, no card, or this one less sure) shows that end
#: only where no plane was told (``_read_end``): in a row of cards each lying over the end
#: of the one before, the outlines of those beneath often reach the next card but one's
#: edge, and the edges do not tell which lies on which (held-out and validation-design
#: frames: cards at least 40% visible outlined within IoU 0.9 more often; the real photos
#: as before; session 61, models/README.md).
END_READ_SURE: Final = 0.5
#: The verifier drops an outline it is at least this sure holds no card (chosen on
#: validation-design frames, models/README.md).
NOT_CARD_SURE: Final = 0.5
#: The verifier judges an outline at least this share of which lies in the picture: the
#: face it shows is then nearly whole. (Up to session 43 only one clear of the picture's
#: edges by FRAME_MARGIN_PX was judged, and printed matter outlined along the edge was kept:
#: real photos' false finds, models/README.md, session 44.)
JUDGED_SHARE: Final = 0.9
#: A learned box scored at least this that fails the card-like test (``_cardlike``: both
#: corners read as table, as those of a design never seen may, or read under MIN_CARDNESS)
#: is shown to the verifier too, and kept when it is at most VOUCHED_DOUBT sure the box holds
#: no card and its final reading is not ``??`` (chosen on held-out frames, the last rule on
#: the real photos; checked on other held-out frames, models/README.md, session 35).
VOUCHED_SCORE: Final = 0.6
VOUCHED_DOUBT: Final = 0.1
#: A loose learned box is outlined again by its colours when its face reads as a back at
#: least this sure (``_seen_backs``; kept only when read so FACE_SURE sure there). Set, not
#: tuned (session 49, models/README.md).
BACK_FACE_HINT: Final = 0.5
#: A loose box whose colours outline no card is outlined by the corner model, and taken when
#: each of that outline's four sides stands out at least this much as an edge
#: (``outlines.side_contrast``). Set, not tuned: the outlines so made on the real photos'
#: false finds (carpet, bricks, a table's grain, print) lie under 2.6, those on backs
#: (within IoU 0.9) in 200 held-out and 200 validation frames from 3.7 (models/README.md,
#: session 53).
CLEAR_SIDES: Final = 3.0
#: An outline read as a back that outlines read as face-up cards cover at least this share
#: of is dropped (``outlines.hidden_shares``; chosen on the real photos' train split,
#: models/README.md).
HIDDEN_BACK: Final = 0.9
#: An outline read as anything but a back that outlines read as face-up cards cover at least
#: HIDDEN_BACK (none of them under it), two or more of them lying at least half inside it,
#: and that is more than ROUND_TWO times as large as they are (the median of their sizes, as
#: ``_sized`` measures them), is those cards outlined as one: no card (``_round_two``; a real
#: photo's two cards side by side read JD; session 40, models/README.md).
ROUND_TWO: Final = 1.25
#: One read ``??`` is so taken when they cover at least ROUND_TWO_UNREAD of it whichever lies
#: on which: the edges of such an outline run along those cards' edges, so ``stacking`` may
#: take it to lie over one of them (real photos: two cards side by side outlined as one, read
#: ??, judged over one and half hidden; session 63, models/README.md).
ROUND_TWO_UNREAD: Final = 0.8
#: Outlines of a card under another (``outlines.under_cards``): how many are read for each
#: card kept, and how sure one must be read as another face-up card to be kept.
UNDER_PER_CARD: Final = 4
UNDER_SURE: Final = 0.9
#: The corner model's corners are taken only when they overlap the outline they were read
#: round at least this much (intersection over union).
CORNER_SAME_IOU: Final = 0.7
#: The corner model reads each outline this many times, each time from a patch cut round the
#: corners it read the time before, which it must overlap by CORNER_SAME_IOU (the patch then
#: centred on the card: a second time outlined 2.7 points more of the validation designs'
#: fully visible cards to IoU 0.9; a third lost 0.6 points on held-out ones; models/README.md).
CORNER_PASSES: Final = 2
#: How far (pixels) inside the image's edges an outline must lie to lie wholly in the frame
#: (``_in_frame``; the verifier asks less of it: JUDGED_SHARE).
FRAME_MARGIN_PX: Final = 3.0
#: An image narrower or lower than this (pixels) cannot show a card anyone could read.
MIN_IMAGE_PX: Final = 32


class DetectError(ValueError):
    """An image that cannot be read."""


@dataclass(frozen=True)
class DetectedCard:
    card: str
    corners: list[list[float]]
    confidence: float
    #: What shows of it (image pixels): the outline less the cards judged to lie on it and
    #: less what lies beyond the picture, as polygons, the largest first (``shown_parts``).
    visible: list[list[list[float]]] = field(default_factory=list)


@dataclass(frozen=True)
class Detections:
    cards: list[DetectedCard]
    coins: list[dict[str, Any]] = field(default_factory=list)
    tokens: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "cards": [{"card": c.card, "corners": c.corners, "confidence": c.confidence,
                       "visible": c.visible} for c in self.cards],
            "coins": self.coins,
            "tokens": self.tokens,
        }


def read_image(path: Path) -> Image:
    if not path.exists():
        raise DetectError(f"{path}: no such file")
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise DetectError(f"{path} is not an image OpenCV can read")
    height, width = image.shape[:2]
    if min(width, height) < MIN_IMAGE_PX:
        raise DetectError(f"{path} is {width}x{height} pixels: too small to show a card")
    return np.asarray(image, dtype=np.uint8)


def find_outlines(image: Image, detector: CardDetector | None,
                  shapes_too: bool = True, slopes: Gradients | None = None) -> list[Outline]:
    """Candidate card outlines: the learned detector's (whole cards, also partly covered
    ones) and (``shapes_too``) the shape finder's (tight corners for a card lying apart).
    Both may find the same card; ``detect`` keeps the better-read one. (``slopes``: the
    image's ``gradients``, when the caller has them.)"""
    if slopes is None:
        slopes = gradients(image)  # both refine their outlines on the image's edges
    if detector is None:
        return find_cards(image, slopes)
    # (the shape finder works while the detector's network runs, session 37)
    return detector.find(image, min_score=FAINT_SCORE, slopes=slopes, mirrored=True,
                         split=True,
                         meanwhile=(lambda: find_cards(image, slopes)) if shapes_too else None)


def detect(image: Image, identifier: CardIdentifier | None,
           detector: CardDetector | None = None, shapes_too: bool = True,
           verifier: CardVerifier | None = None,
           corner_model: CornerModel | None = None,
           plane: PlaneMap | None = None,
           card_mm: tuple[float, float] | None = None) -> Detections:
    """The cards (``identifier`` reads them; ``detector`` and the shape finder outline them,
    ``verifier`` and ``corner_model`` as their names say) in ``image``. On a calibrated
    table (``plane``) a card is ``card_mm`` in size (None: 63 x 88 mm); where nobody
    calibrated it, a plane the cards seen whole tell is taken for it, for cards of that size
    or (None) of each size decks come in (``card_plane``); where they tell none (fewer than
    three, or three that do not agree), the plane each tells near itself
    (``one_card_plane``, ``_near_planes``), or else the plane the ends of the cards that
    show one end only tell (``_ends_planes``; an end its index corner alone reads counts,
    ``_read_end``)."""
    slopes = gradients(image)
    outlines = find_outlines(image, detector, shapes_too, slopes)
    warnings: list[str] = []
    readings: list[tuple[str, float]]
    if identifier is None:
        warnings.append("no card model: identities are ??")
        outlines = [o for o in outlines if not _faint(o)]  # nothing can read them
        outlines = [outlines[i] for i in distinct(outlines, [o.score for o in outlines])]
        readings = [(UNSURE, 0.0)] * len(outlines)
        read_ends: list[int | None] = [None] * len(outlines)
        over: Stacking = [[None] * len(outlines) for _ in outlines]  # nothing tells which
    else:
        # A card the picture's edge cuts is outlined also as a whole card, beyond the edge.
        completed = _beyond_edges(outlines, image)
        outlines = [*outlines, *(whole for _, whole in completed)]
        # Every candidate read quickly (the index model alone, no face) to choose among them.
        found = identifier.identify_many(image, [o.corners for o in outlines], quick=True)
        # Of the two outlines, the whole card stays when read for sure as a face-up card: its
        # index corner in the picture shows it. Else the part that shows (printed matter the
        # edge cuts reads as a card at 0.6 when so completed, real photos).
        start = len(outlines) - len(completed)
        pairs = [(i, k, whole) for k, (i, whole) in enumerate(completed, start)]
        others = {i if suited(found[k].card) and found[k].confidence >= _sure_bar(whole)
                  else k for i, k, whole in pairs}
        boxes = [o.corners for i, o in enumerate(outlines) if o.learned and i not in others]
        cardlike = [i for i, r in enumerate(found)
                    if i not in others and _cardlike(outlines[i], r, boxes)]
        looked: dict[int, tuple[Outline, CardReading]] = {}
        if corner_model is not None and verifier is not None:
            # A faint box on a card no card-like outline outlines, boxed a few pixels off,
            # may read as no card there: it is outlined and read again (``_second_look``).
            faint = [i for i in _unseen_faint(outlines, found, cardlike) if i not in others]
            looked = _second_look(image, slopes, identifier, corner_model, outlines, faint)
            for i, (outline, reading) in looked.items():
                outlines[i], found[i] = outline, reading
            cardlike += sorted(looked)
        vouched: set[int] = set()
        if verifier is not None:
            # Books, sheets of paper, boxes and board squares are card-shaped too, and
            # their corners may read as a back: an outline the verifier is sure holds no
            # card is dropped. (Not one the frame cuts by more than a tenth: what shows of
            # it is no whole face.) A box the detector is fairly sure of that was read as no
            # card is kept when the verifier is sure it holds one (VOUCHED_SCORE).
            taken = set(cardlike)
            asked = [i for i, o in enumerate(outlines) if i not in taken and i not in others
                     and o.learned and not o.split and o.score >= VOUCHED_SCORE]
            judged = [i for i in [*cardlike, *asked]
                      if share_in_picture(outlines[i].corners, image) >= JUDGED_SHARE]
            doubt = dict(zip(judged, verifier.not_card(image, [outlines[i].corners
                                                               for i in judged]), strict=True))
            # (an outline the frame cuts more is not judged: kept if card-like, never
            # vouched for)
            vouched = {i for i in asked if i in doubt and doubt[i] <= VOUCHED_DOUBT}
            cardlike = [i for i in cardlike if doubt.get(i, 0.0) < NOT_CARD_SURE] \
                + sorted(vouched)
        seen_backs: set[int] = set()
        if verifier is not None and identifier.reads_faces:
            # A face-down card of a design never seen: its corners read as table (up close,
            # a back printed to its edge is a patterned cloth) and the detector boxes it
            # faintly, often loosely. A box no card-like outline outlines whose face reads as
            # a back is outlined again by its colours, and kept if read as a back there and
            # not doubted by the verifier (``_seen_backs``; held-out frames: 31% -> 51% of
            # the fully visible backs found, models/README.md, session 49).
            taken = set(cardlike)
            loose = [i for i, o in enumerate(outlines)
                     if i not in taken and i not in others and o.learned and not o.split
                     and not suited(found[i].card)
                     and share_in_picture(o.corners, image) >= JUDGED_SHARE
                     and all(quad_iou(o.corners, outlines[k].corners) < SAME_CARD_IOU
                             for k in cardlike)]
            for i, (outline, reading) in _seen_backs(image, slopes, identifier, verifier,
                                                     corner_model, outlines, found,
                                                     loose).items():
                outlines[i], found[i] = outline, reading
                looked[i] = (outline, reading)
                seen_backs.add(i)
                cardlike.append(i)
        # Of outlines of the same card, the one whose corners read best has them in place.
        priority = [r.confidence + 1e-3 * o.score for o, r in zip(outlines, found, strict=True)]
        chosen = [cardlike[k] for k in distinct([outlines[i] for i in cardlike],
                                                [priority[i] for i in cardlike])]
        chosen = _one_of_each(chosen, outlines, [r.card for r in found], priority)
        # A learned box is larger than its card: tightened from its box shrunk to a card's
        # size, an outline may lie on the card's edges better (``polish``); and the corner
        # model reads the card's corners round it (``_cornered``). The card is identified
        # again there: that reading is taken unless it is another card read less surely.
        # Then the first reading stays, and so does the new outline (its face and end bands
        # read there, ``CardIdentifier.moved``) unless it lies on another chosen outline's
        # card (SAME_CARD_IOU: moved onto a neighbour's edges), when the outline goes back
        # to where it was. (Till session 58 it always went back; but the index model reads
        # some corners of a design never seen less surely on the card's true edges than
        # from a box askew: models/README.md.) (One looked at again is so outlined and read
        # already.)
        todo = [k for k, i in enumerate(chosen) if i not in looked]
        polished = [outlines[i] for i in chosen]
        for k, outline in zip(todo, _outlined(image, slopes, corner_model,
                                              [polished[k] for k in todo]), strict=True):
            polished[k] = outline
        moved = [k for k, i in enumerate(chosen) if polished[k] is not outlines[i]]
        again = identifier.identify_many(image, [polished[k].corners for k in moved],
                                         quick=True) if moved else []
        # (the polished outlines whose corners were read where they were before, with that
        # outline: which end of the new one their corners tell, ``_read_end``)
        read_before: dict[int, Corners] = {}
        for k, reading in zip(moved, again, strict=True):
            i = chosen[k]
            if reading.card == found[i].card or reading.confidence >= found[i].confidence:
                found[i] = reading
            elif _onto_another(polished, k):
                polished[k] = outlines[i]
            else:
                found[i] = identifier.moved(found[i], polished[k].corners)
                read_before[k] = outlines[i].corners
        outlines = polished
        # A card under another, squared up with it, shows a strip beyond one of its sides:
        # the detector often outlines the two as one. Outlines a card's width or length
        # from an edge found there are read too, and kept when read for sure as another
        # face-up card (``outlines.under_cards``).
        outlines, quick = _under(image, slopes, identifier, outlines, [found[i] for i in chosen],
                                 boxes)
        # (the cards found under others, after the chosen ones, are no box kept on the
        # verifier's word, nor outlined as backs by their colours)
        under = [False] * (len(outlines) - len(chosen))
        on_word = [i in vouched for i in chosen] + under
        as_back = [i in seen_backs for i in chosen] + under
        # A card no other card lies on shows its whole face: that is read too, and of the
        # others the end bands no other card lies on (which card lies on which, from their
        # edges: ``stacking``). (The index model's ensemble is left to the tracker: here it
        # cost 5-10 ms a frame and read the detector's outlines no better, models/README.md.)
        corners = [o.corners for o in outlines]
        over = stacking(slopes, corners)
        final = identifier.confirm(quick, alone(corners, over), ensemble=False,
                                   clear=clear_bands(corners, over), check_jokers=False)
        # A faint box whose corners read as a face-up card for sure is a card, whatever its
        # face then says (dropping those the face calls a back, a joker or ?? lost a card in
        # 754 on validation-design frames, models/README.md).
        readings = [(r.card, r.confidence) for r in final]
        # A joker that one corner at most reads unsure, its face not read, is ?? in the end
        # (``cards.joker_checked``): so the rules below for outlines read ?? take it, while
        # those that take a joker much larger than the cards near it, or inside a card, for
        # no card still see the joker.
        checked = [(r.card, r.confidence) for r in map(joker_checked, final)]
        # A back that cards read face up, none of them under it, cover almost whole shows
        # nothing of itself: two cards side by side outlined as one, or part of one card's
        # face (real photos).
        shown = [True] * len(readings)
        if any(card == BACK_CODE for card, _ in readings):
            hidden = hidden_shares(corners, [suited(card) for card, _ in readings], over)
            shown = [card != BACK_CODE or share < HIDDEN_BACK
                     for (card, _), share in zip(readings, hidden, strict=True)]
        # An outline read ?? at the picture's edge, lying almost whole inside a bigger one
        # read as a face-up card, is the part the picture shows of a card it cuts, which is
        # outlined whole too (real photos; not one in the picture: rendered frames lost two
        # covered cards so).
        # A box kept on the verifier's word is a card only if it is read as one in the end
        # (on real photos those still ?? were clutter and print).
        parts = _parts(corners, [card for card, _ in checked], image)
        # And one outlined as a back by its colours is a card only if still read as a back.
        shown = [keep and not part and not (word and card == UNSURE)
                 and not (back and card != BACK_CODE)
                 for keep, part, word, back, (card, _)
                 in zip(shown, parts, on_word, as_back, checked, strict=True)]
        # The outlines' convex hulls' areas and overlaps, for the next four rules.
        areas, shared = shared_areas(corners)
        # Part of a card outlined again inside its whole outline is no card of its own.
        shown = _fragments(areas, shared, readings, shown)
        # What is much smaller than the face-up cards near it, or read as a back or a joker
        # and much larger, is no card.
        sizes = np.sqrt(areas)
        shown = _sized(corners, sizes, readings, shown)
        # An outline round two face-up cards lying side by side is no third card.
        shown = _round_two(corners, sizes, shared, readings, shown, over)
        # Nor is an unread one the picture cuts that no other outline overlaps.
        shown = _cut_unread(corners, shared, checked, shown, image)
        kept = [i for i, keep in enumerate(shown) if keep]
        outlines = [outlines[i] for i in kept]
        readings = [checked[i] for i in kept]
        read_ends = [_read_end(final[i], o.corners, read_before.get(i))
                     for i, o in zip(kept, outlines, strict=True)]
        over = [[over[i][j] for j in kept] for i in kept]
    height, width = image.shape[:2]
    visible = shown_parts([o.corners for o in outlines], over, width, height)
    # The plane each outline is made a card's shape on (None: none), and the card's size;
    # and what shows of each, as it is made so (``_read_end``: below)
    shaped = visible
    planes: list[_OnPlane | None] = \
        [_OnPlane(plane, card_mm or CARD_MM) if plane is not None else None] * len(outlines)
    if plane is None and identifier is not None:
        # Nobody calibrated the table: three or more cards seen whole may tell its plane
        # (``card_plane``; held-out frames' cards at least 40% visible outlined within IoU
        # 0.9: 70.2% -> 74.3%, models/README.md, session 55). (An outline seen whole that
        # does not fit it is moved too, as on a calibrated table: on held-out frames 19
        # cards more were outlined within IoU 0.9 so, mostly outlined askew before; on the
        # real photos a jack on a rumpled blanket was outlined worse.) Where they tell none,
        # each tells the plane near itself (``_near_planes``).
        seen_whole = [free and _in_frame(o.corners, image)
                      for o, free in zip(outlines, alone([o.corners for o in outlines], over),
                                         strict=True)]
        deck_sizes = (card_mm,) if card_mm is not None else DECK_SIZES_MM
        told = _plane_of_cards(outlines, readings, seen_whole, deck_sizes, (width, height))
        if told is not None:
            planes = [_OnPlane(told.plane, told.card_mm)] * len(outlines)
        else:
            # (the outlines that do not show all of themselves, which the two below give planes)
            partly = _partly_shown(outlines, visible)
            planes = _near_planes(outlines, readings, seen_whole, partly, deck_sizes,
                                  (width, height))
            # Where none of them tells it, the ends of the cards that show one end only may
            # (``_ends_planes``); and so may an outline all of which shows (so still without
            # a plane), lying over another, whose one index corner alone reads its card: it
            # shows that end only (``_cued``, ``_read_end``, END_READ_SURE; on the plane it
            # is made a card's size from it).
            cued = _cued(outlines, read_ends, partly, seen_whole)
            shaped = [[_end_piece(outlines[j].corners, cued[j])] if j in cued else pieces
                      for j, pieces in enumerate(visible)]
            planes = _ends_planes(outlines, readings, seen_whole, shaped,
                                  sorted({*partly, *cued}), planes, deck_sizes, (width, height))
    if any(p is not None for p in planes):
        # On the table a card is its deck's size (the calibration's, or that its plane was
        # told for): one that shows one end is a card's size from that end (its outline
        # reached under the card on it by a guess at its length), and so is an outline whose
        # one end is a card's and whose other is off; those and the outlines still no card's
        # shape are moved onto the picture's edges.
        whole = [o.corners if on is None else
                 card_shaped([o.corners], [pieces], on.plane, slopes, on.card_mm,
                             on.under_only)[0]
                 for o, pieces, on in zip(outlines, shaped, planes, strict=True)]
        moved = [k for k, (new, o) in enumerate(zip(whole, outlines, strict=True))
                 if new is not o.corners]
        if moved and identifier is not None:
            # A card moved is read again by its corners there; read surer as another card,
            # or as a card where it was ??, that is its reading (as with the polished
            # outlines above).
            again = [joker_checked(reading) for reading in
                     identifier.identify_many(image, [whole[k] for k in moved], quick=True)]
            for k, reading in zip(moved, again, strict=True):
                if reading.card not in (readings[k][0], UNSURE) and (
                        readings[k][0] == UNSURE or reading.confidence > readings[k][1]):
                    readings[k] = (reading.card, reading.confidence)
        if moved:
            # A card moved onto another card's outline is one card: the surer read stays
            # (one read ?? ranks under every one read as a card, however sure it was of a
            # rank or of a joker).
            kept = [k for k in range(len(whole))
                    if k not in _repeats(whole, set(moved),
                                         [sure - 1.0 if card == UNSURE else sure
                                          for card, sure in readings])]
            outlines = [replace(outlines[k], corners=whole[k]) for k in kept]
            readings = [readings[k] for k in kept]
            over = [[over[i][j] for j in kept] for i in kept]
            visible = shown_parts([o.corners for o in outlines], over, width, height)
    cards = [DetectedCard(card, np.round(o.corners, 1).tolist(), round(confidence, 3),
                          [np.round(piece, 1).tolist() for piece in pieces])
             for o, (card, confidence), pieces in zip(outlines, readings, visible, strict=True)]
    return Detections(cards, warnings=warnings)


def _plane_of_cards(outlines: Sequence[Outline], readings: Sequence[tuple[str, float]],
                    seen_whole: Sequence[bool], sizes: Sequence[tuple[float, float]],
                    image_size: tuple[int, int]) -> CardPlane | None:
    """The table's plane (``card_plane``, for cards of one of ``sizes``) from the outlines
    of cards seen whole (``_seen_whole_cards``), or None."""
    return card_plane([outlines[k].corners for k in _seen_whole_cards(readings, seen_whole)],
                      image_size, sizes)


def _seen_whole_cards(readings: Sequence[tuple[str, float]],
                      seen_whole: Sequence[bool]) -> list[int]:
    """The outlines that tell the table's plane: ``seen_whole`` (no other lies on them, in
    the picture) and read as face-up cards at least SIZE_SURE sure."""
    return [k for k, ((card, sure), whole) in enumerate(zip(readings, seen_whole, strict=True))
            if whole and suited(card) and sure >= SIZE_SURE]


@dataclass(frozen=True)
class _OnPlane:
    """The plane an outline is made a card's shape on (``card_shaped``), the card's size,
    and whether only if it shows one end only (the other under another card, or beyond the
    picture's edge)."""

    plane: PlaneMap
    card_mm: tuple[float, float]
    under_only: bool = False


def _near_planes(outlines: Sequence[Outline], readings: Sequence[tuple[str, float]],
                 seen_whole: Sequence[bool], partly: Sequence[int],
                 sizes: Sequence[tuple[float, float]], image_size: tuple[int, int]
                 ) -> list[_OnPlane | None]:
    """Where the cards seen whole tell no plane (``card_plane``): for each outline that does
    not show all of itself (``partly``: their indices, from ``_partly_shown``), the plane
    (and card size) a camera showing the nearest card seen whole tells (``one_card_plane``;
    ``_seen_whole_cards``), when it lies within NEAR_MM of it there (centre to centre); None
    for the rest, those cards among them. Only outlines showing one end only (the other
    under another card, or beyond the picture's edge) are made a card's shape on such a
    plane (``under_only``): on real photos, cards a game's box or a book lay on, and cards
    seen whole, were outlined worse otherwise (session 56, models/README.md)."""
    out: list[_OnPlane | None] = [None] * len(outlines)
    seen = _seen_whole_cards(readings, seen_whole)
    if not partly or not seen:
        return out
    told = {k: one_card_plane(outlines[k].corners, image_size, sizes) for k in seen}
    refs = {k: p for k, p in told.items() if p is not None}
    centres = {k: ref.plane.to_table(outlines[k].corners).mean(axis=0) for k, ref in refs.items()}
    for j in partly:
        apart = {k: float(np.linalg.norm(ref.plane.to_table(outlines[j].corners).mean(axis=0)
                                         - centres[k]))
                 for k, ref in refs.items()}
        near = [k for k, mm in apart.items() if np.isfinite(mm) and mm <= NEAR_MM]
        if near:
            nearest = refs[min(near, key=lambda k: apart[k])]
            out[j] = _OnPlane(nearest.plane, nearest.card_mm, under_only=True)
    return out


def _partly_shown(outlines: Sequence[Outline], visible: Sequence[Sequence[Corners]]
                  ) -> list[int]:
    """The outlines that do not show all of themselves (``SHOWS_ALL``; ``visible``, from
    ``shown_parts``). (An outline all of which shows shows both ends: it is not made a
    card's shape on a plane one card or the cards' ends tell, unless its index corners
    say it shows one end only, ``_read_end``.)"""
    return [j for j, (o, pieces) in enumerate(zip(outlines, visible, strict=True))
            if sum(Polygon(p).area for p in pieces)
            < (1 - SHOWS_ALL) * Polygon(o.corners).convex_hull.area]


def _read_end(reading: CardReading, corners: Corners | None = None,
              read_at: Corners | None = None) -> int | None:
    """The end of the outline ``reading`` read whose index corner alone reads its card (a
    face-up card) at least END_READ_SURE sure: 0, the end from the outline's corner 0 to 1
    as ``order_corners`` puts them (the card cut for reading upright: its top-left index
    corner), or 1, from 2 to 3; None when both or neither do. Read at another outline
    (``read_at``: one since moved to ``corners``, its reading kept), the end of ``corners``
    nearer that end of it (the two may be put in order from opposite ends)."""
    if not suited(reading.card):
        return None
    reads = [code == reading.card and sure >= END_READ_SURE for code, sure in reading.corners]
    if reads[0] == reads[1]:
        return None
    end = 0 if reads[0] else 1
    if read_at is None or corners is None:
        return end
    old, new = order_corners(read_at), order_corners(corners)
    there = old[[0, 1]].mean(axis=0) if end == 0 else old[[2, 3]].mean(axis=0)
    return 0 if np.linalg.norm(new[[0, 1]].mean(axis=0) - there) \
        <= np.linalg.norm(new[[2, 3]].mean(axis=0) - there) else 1


def _cued(outlines: Sequence[Outline], read_ends: Sequence[int | None],
          partly: Sequence[int], seen_whole: Sequence[bool]) -> dict[int, int]:
    """The outlines taken to show one end only by their index corners (``_read_end``: the
    end, in ``read_ends``), each with that end: those all of which shows (not ``partly``),
    not seen whole, that overlap another outline (an outline reaching past its card's hidden
    end to the next card but one, in a row where the edges do not tell which card lies on
    which; one alone, near the picture's edge, is no such outline)."""
    shown = set(partly)
    ends = {j: end for j, end in enumerate(read_ends)
            if end is not None and j not in shown and not seen_whole[j]}
    if not ends:
        return {}
    _, shared = shared_areas([o.corners for o in outlines])
    return {j: end for j, end in ends.items() if max(shared[j]) > 0.0}


def _end_piece(corners: Corners, end: int) -> Corners:
    """The half of an outline at its end ``end`` (``_read_end``), as the part of it that
    shows (``shown_parts``' pieces)."""
    q = order_corners(corners)
    if end == 0:
        return np.array([q[0], q[1], (q[1] + q[2]) / 2, (q[0] + q[3]) / 2])
    return np.array([(q[0] + q[3]) / 2, (q[1] + q[2]) / 2, q[2], q[3]])


def _ends_planes(outlines: Sequence[Outline], readings: Sequence[tuple[str, float]],
                 seen_whole: Sequence[bool], visible: Sequence[Sequence[Corners]],
                 partly: Sequence[int], planes: Sequence[_OnPlane | None],
                 sizes: Sequence[tuple[float, float]], image_size: tuple[int, int]
                 ) -> list[_OnPlane | None]:
    """``planes`` (``_near_planes``'), and for each outline that does not show all of itself
    (``partly``, as there, and those whose index corners say they show one end only,
    ``_read_end``; ``visible``: what of each shows, from ``shown_parts``, or for those the
    half at that end, ``_end_piece``) and has none, the plane the ends of the cards that
    show one end only and the cards seen whole (``_seen_whole_cards``) tell
    (``ends_plane``), if any; like ``_near_planes``', only an outline that shows one end
    only is made a card's shape on it (``under_only``).
    Ends do not tell a card's length: with no card seen whole the plane is for the first of
    ``sizes``; with one or more, a later size is taken when more fit its plane, or as many
    less than OTHER_SIZE_OFF times as far off, as ``card_plane`` takes it
    (``CardPlane.beats``). (Held-out and
    validation-design frames: cards at least 40% visible outlined within IoU 0.9 more often;
    the real photos as before; session 60, models/README.md.)"""
    wanting = {j for j in partly if planes[j] is None}
    if not wanting:
        return list(planes)
    whole = [outlines[k].corners for k in _seen_whole_cards(readings, seen_whole)]
    # (the ends of outlines however read: one read ?? or as a back is no less a card's)
    ends = [end for o, pieces in zip(outlines, visible, strict=True)
            if (end := shown_end(o.corners, pieces)) is not None]
    told: CardPlane | None = None
    for size in sizes if whole else sizes[:1]:
        found = ends_plane(ends, whole, image_size, size)
        if found is not None and found.beats(told):
            told = found
    if told is None:
        return list(planes)
    by_ends = _OnPlane(told.plane, told.card_mm, under_only=True)
    return [by_ends if j in wanting else on for j, on in enumerate(planes)]


def _repeats(corners: Sequence[npt.NDArray[np.float64]], moved: set[int],
             confidences: Sequence[float]) -> set[int]:
    """The outlines that repeat another (``MOVED_SAME_IOU``) of which one was ``moved``: of
    each such pair the one read less surely (a moved one when equally sure)."""
    order = sorted(range(len(corners)), key=lambda k: (-confidences[k], k in moved))
    kept = greedy_distinct([np.asarray(corners[k], dtype=np.float64) for k in order],
                           MOVED_SAME_IOU, at_limit=True,
                           compared=lambda a, b: order[a] in moved or order[b] in moved)
    return set(range(len(corners))) - {order[k] for k in kept}


def _cornered(image: Image, model: CornerModel, outlines: list[Outline]) -> list[Outline]:
    """``outlines`` with the corners the corner model reads round each one lying in the
    picture, CORNER_PASSES times (a convex outline overlapping the one it was read round by
    CORNER_SAME_IOU at least: a patch that shows no card gives corners anywhere)."""
    todo = [k for k, o in enumerate(outlines) if _in_frame(o.corners, image)]
    out = list(outlines)
    for _ in range(CORNER_PASSES):
        if not todo:
            break
        read = model.corners(image, [out[k].corners for k in todo])
        moved = []
        for k, corners in zip(todo, read, strict=True):
            if cv2.isContourConvex(corners.astype(np.float32)) \
                    and quad_iou(corners, out[k].corners) >= CORNER_SAME_IOU:
                out[k] = replace(out[k], corners=corners)
                moved.append(k)
        todo = moved  # (the same patch would give the same corners again)
    return out


def _unseen_faint(outlines: Sequence[Outline], found: Sequence[CardReading],
                  cardlike: Sequence[int]) -> list[int]:
    """The faint boxes (indices into ``outlines``, ``found`` their quick readings) to look
    at again (``_second_look``): those one of whose corners reads as a face-up card, on a
    card no ``cardlike`` outline outlines (as the same card: IoU SAME_CARD_IOU; a card-like
    outline overlaps itself wholly, so none is looked at again).

    An end of a merged box (``Outline.split``: two cards side by side, one over the other,
    boxed as one) is not hidden so by a card-like outline read ``??``: that is mostly the
    merged box itself, which reads as neither card. (Till session 59 no end was looked at
    again, and the top card of two lying so was lost or read as the other: real photos'
    nine of hearts over an ace of diamonds, models/README.md.)"""
    return [i for i, o in enumerate(outlines)
            if _faint(o) and any(suited(cls) for cls, _ in found[i].corners)
            and all(quad_iou(o.corners, outlines[k].corners) < SAME_CARD_IOU
                    for k in cardlike if not (o.split and found[k].card == UNSURE))]


def _second_look(image: Image, slopes: Gradients, identifier: CardIdentifier,
                 model: CornerModel, outlines: Sequence[Outline],
                 faint: Sequence[int]) -> dict[int, tuple[Outline, CardReading]]:
    """Of the ``faint`` outlines (indices into ``outlines``), those that, ``polish``ed and
    ``_cornered``, read as a face-up card at least FAINT_SURE sure (an end of a merged box,
    SPLIT_SURE, as when first read: ``_cardlike``): each with its outline and reading there.

    A card the detector boxes only faintly and a few pixels off may read as no card there
    (real photos: a king on a tiled floor, an ace on papers). ``detect`` looks again at the
    faint boxes ``_unseen_faint`` names (those no card-like outline outlines as the same
    card, one of whose corners reads as a face-up card); the verifier then judges those so
    read, as it judges every card-like outline, so one less than JUDGED_SHARE in the picture
    is not taken (session 45, models/README.md)."""
    moved = _redone(image, slopes, model, outlines, faint)
    if not moved:
        return {}  # (one not moved reads as before: no face-up card for sure)
    again = identifier.identify_many(image, [o.corners for _, o in moved], quick=True)
    return {i: (outline, reading) for (i, outline), reading in zip(moved, again, strict=True)
            if suited(reading.card)
            and reading.confidence >= _sure_bar(outlines[i])}


def _redone(image: Image, slopes: Gradients, model: CornerModel,
            outlines: Sequence[Outline], which: Sequence[int]) -> list[tuple[int, Outline]]:
    """Of the outlines ``which`` names (indices into ``outlines``), those ``_outlined``
    (``polish``ed, then ``_cornered``) elsewhere and lying at least JUDGED_SHARE in the
    picture there: each index with its new outline."""
    redone = _outlined(image, slopes, model, [outlines[i] for i in which])
    return [(i, outline) for i, outline in zip(which, redone, strict=True)
            if outline is not outlines[i]
            and share_in_picture(outline.corners, image) >= JUDGED_SHARE]


def _seen_backs(image: Image, slopes: Gradients, identifier: CardIdentifier,
                verifier: CardVerifier, model: CornerModel | None,
                outlines: Sequence[Outline], found: Sequence[CardReading],
                loose: Sequence[int],
                ) -> dict[int, tuple[Outline, CardReading]]:
    """Of the ``loose`` learned boxes (indices into ``outlines``), those whose face reads as
    a back at least BACK_FACE_HINT sure, outlined again and there read as a back
    (``CardIdentifier.backs``) that the verifier does not doubt NOT_CARD_SURE: each with
    its outline and reading there. A box is outlined by its colours
    (``outlines.segmented_card``; every box at once, the cores sharing them) and taken or
    not in turn, the likelier boxes first: one on a card taken before is skipped. Then,
    with a corner ``model``, the others, in which its colours
    outline no card, are outlined as a card the detector boxed is (``_redone``: ``polish``ed,
    then read by the corner model), and taken where each side of that outline stands out as
    an edge (CLEAR_SIDES): a back whose colours the table shares (models/README.md, session
    53)."""
    if not loose:
        return {}
    hints = identifier.backs(image, [outlines[i].corners for i in loose], at_least=BACK_FACE_HINT,
                             quick=[found[i] for i in loose])
    hinted = sorted((i for i, hint in zip(loose, hints, strict=True) if hint is not None),
                    key=lambda i: -outlines[i].score)
    done: dict[int, tuple[Outline, CardReading]] = {}

    def taken(*quads: npt.NDArray[np.float64]) -> bool:
        return any(quad_iou(quad, o.corners) >= SAME_CARD_IOU
                   for quad in quads for o, _ in done.values())

    def keep(tried: list[tuple[int, npt.NDArray[np.float64]]]) -> None:
        """Those of ``tried`` (a box, and its new outline) read as a back there and not
        doubted, in turn, unless a card kept before lies there."""
        backs = identifier.backs(image, [corners for _, corners in tried])
        read = [(i, corners, reading) for (i, corners), reading
                in zip(tried, backs, strict=True) if reading is not None]
        if not read:
            return
        doubts = verifier.not_card(image, [corners for _, corners, _ in read])
        for (i, corners, reading), doubt in zip(read, doubts, strict=True):
            if doubt < NOT_CARD_SURE and not taken(outlines[i].corners, corners):
                done[i] = (replace(outlines[i], corners=corners), reading)

    # (every hinted box outlined at once, the cores sharing them: a box a card kept before
    # lies on is skipped below, its outline unused, which few are)
    segmented = halved(lambda part: [segmented_card(image, outlines[i].corners) for i in part],
                       hinted)
    unsplit: list[int] = []
    for i, corners in zip(hinted, segmented, strict=True):
        if taken(outlines[i].corners):
            continue
        if corners is None:
            unsplit.append(i)
        else:
            keep([(i, corners)])
    unsplit = [i for i in unsplit if not taken(outlines[i].corners)]
    if model is not None and unsplit:
        tried = [(i, outline.corners) for i, outline in _redone(image, slopes, model, outlines,
                                                                  unsplit)
                 if side_contrast(slopes, outline.corners).min() >= CLEAR_SIDES]
        if tried:
            keep(tried)
    return done


def _outlined(image: Image, slopes: Gradients, model: CornerModel | None,
              outlines: list[Outline]) -> list[Outline]:
    """``outlines`` ``polish``ed, then (with a corner ``model``) ``_cornered``."""
    polished = polish_many(slopes, outlines)
    return polished if model is None else _cornered(image, model, polished)


def _under(image: Image, slopes: Gradients, identifier: CardIdentifier,
           outlines: list[Outline], readings: list[CardReading],
           boxes: Sequence[npt.NDArray[np.float64]],
           ) -> tuple[list[Outline], list[CardReading]]:
    """``outlines`` (read as ``readings``) and after them the cards found under them
    (``outlines.under_cards``, beyond the sides the detector's ``boxes`` reach past) read
    for sure as face-up cards none of them is."""
    cards = {r.card for r in readings}
    kept = [o.corners for o in outlines]
    candidates: list[npt.NDArray[np.float64]] = []
    for outline in outlines:
        for corners in under_cards(slopes, outline.corners, boxes)[:UNDER_PER_CARD]:
            if all(quad_iou(corners, other) < SAME_CARD_IOU for other in [*kept, *candidates]):
                candidates.append(corners)
    if not candidates:
        return outlines, readings
    read = identifier.identify_many(image, candidates, quick=True)
    added: list[int] = []
    # (the candidates overlap neither a kept outline nor each other as one card would)
    for k in sorted(range(len(candidates)), key=lambda k: -read[k].confidence):
        if suited(read[k].card) and read[k].confidence >= UNDER_SURE \
                and read[k].card not in cards:
            added.append(k)
            cards.add(read[k].card)
    return ([*outlines, *(Outline(candidates[k], FAINT_SCORE, learned=True) for k in added)],
            [*readings, *(read[k] for k in added)])


def _beyond_edges(outlines: list[Outline], image: Image) -> list[tuple[int, Outline]]:
    """The outlines of cards the picture's edge cuts (their index in ``outlines``), each
    completed beyond it (``outlines.beyond_edge``; the cards' size in the picture from the
    detector's sure boxes lying inside it)."""
    height, width = image.shape[:2]
    near = [i for i, o in enumerate(outlines) if near_edge(o.corners, width, height)]
    if not near:
        return []  # (most frames: nothing reaches the picture's edge)
    sure = [short_side(o.corners) for o in outlines
            if o.learned and o.score >= SURE_CARD_SCORE and _in_frame(o.corners, image)]
    card_px = float(np.median(sure)) if sure else None
    out = []
    for i in near:
        whole = beyond_edge(outlines[i].corners, width, height, card_px)
        if whole is not None:
            # (no box: polishing it would outline the part in the picture again)
            out.append((i, replace(outlines[i], corners=whole, box=None)))
    return out


def _one_of_each(chosen: list[int], outlines: list[Outline], cards: list[str],
                 priority: list[float]) -> list[int]:
    """``chosen`` without the outlines that are a card outlined again: of two read as the
    same face-up card (``cards``), one lying at least SAME_CARD_INSIDE inside the other (half
    of the card, or the card and its neighbour), the better read (``priority``) stays. A deck
    has one of each card, and two cards lying apart do not overlap."""
    shapes = {i: Polygon(outlines[i].corners).buffer(0) for i in chosen}
    kept: list[int] = []
    for i in sorted(chosen, key=lambda i: -priority[i]):
        if not (suited(cards[i]) and any(
                cards[j] == cards[i] and _inside_share(shapes[i], shapes[j]) >= SAME_CARD_INSIDE
                for j in kept)):
            kept.append(i)
    return [i for i in chosen if i in kept]


def _parts(corners: Sequence[npt.NDArray[np.float64]], cards: Sequence[str],
           image: Image) -> list[bool]:
    """For each outline, whether it is read ``??``, reaches the picture's edge (not
    ``_in_frame``) and lies at least SAME_CARD_INSIDE inside a bigger outline read as a
    face-up card (``cards``)."""
    if UNSURE not in cards:
        return [False] * len(cards)
    shapes = [Polygon(c).buffer(0) for c in corners]
    return [card == UNSURE and not _in_frame(corners[i], image) and any(
        j != i and suited(cards[j]) and shapes[i].area <= shapes[j].area
        and _inside_share(shapes[i], shapes[j]) >= SAME_CARD_INSIDE for j in range(len(cards)))
        for i, card in enumerate(cards)]


def _onto_another(outlines: Sequence[Outline], k: int) -> bool:
    """Whether outline ``k`` lies on the card another of ``outlines`` outlines (IoU at least
    SAME_CARD_IOU)."""
    return any(quad_iou(outlines[k].corners, other.corners) >= SAME_CARD_IOU
               for j, other in enumerate(outlines) if j != k)


def _fragments(areas: Sequence[float], shared: Sequence[Sequence[float]],
               readings: Sequence[tuple[str, float]], kept: Sequence[bool]) -> list[bool]:
    """``kept`` less the outlines read as a card (not ``??``: a card under another, the
    other outlined with it as one, reads so) that lie at least FRAGMENT_INSIDE inside
    another kept one at most FRAGMENT_AREA of its area, read at least as surely
    (``readings``) and not as a back (a back outlined with a card it lies on reads so);
    not when another outline lies so inside that one too, overlapping this one by less
    than half of the smaller: the bigger outline then holds two cards (two side by side
    outlined as one), unless all of them are read as the face-up card the bigger one is
    read as: then, whatever the confidences, they are parts of that card (real photos: a
    nine outlined whole and as its two halves, each half read surer than the whole).
    (``areas``, ``shared``: the outlines' convex hulls', from ``outlines.shared_areas``; a
    card is convex.)"""
    count = len(areas)
    inside = [[kept[i] and kept[j] and i != j and 0 < areas[i] <= FRAGMENT_AREA * areas[j]
               and shared[i][j] >= FRAGMENT_INSIDE * areas[i]
               for j in range(count)] for i in range(count)]

    def apart(i: int, k: int) -> bool:
        return shared[i][k] < 0.5 * min(areas[i], areas[k])

    def part_of(i: int, j: int) -> bool:
        if not (inside[i][j] and readings[i][0] != UNSURE and readings[j][0] != BACK_CODE):
            return False
        others = [k for k in range(count) if k != i and inside[k][j] and apart(i, k)]
        if readings[j][1] >= readings[i][1] and not others:
            return True
        # Two or more outlines apart in there, all read as the very card they lie inside:
        # parts of that card, however surely each is read (a deck has one of each card).
        card = readings[i][0]
        return bool(others) and suited(card) and card == readings[j][0] \
            and all(readings[k][0] == card for k in others)

    return [keep and not any(part_of(i, j) for j in range(count)) for i, keep in enumerate(kept)]


def _sized(corners: Sequence[npt.NDArray[np.float64]], sizes: npt.NDArray[np.float64],
           readings: Sequence[tuple[str, float]], kept: Sequence[bool]) -> list[bool]:
    """``kept`` less the outlines whose size (``sizes``: the square root of their convex
    hull's area) is under UNDERSIZED times the median size of the SIZE_NEAR other kept
    outlines nearest to it (centre to centre) read as face-up cards at least SIZE_SURE sure
    (``readings``), or, read as a back or a joker, more than OVERSIZED times it. An outline
    stays when no other kept outline in the picture is such a card, or when their median size
    is nought."""
    centres = np.array([np.asarray(c, np.float64).reshape(-1, 2).mean(axis=0) for c in corners])
    cards = np.array([j for j, (card, sure) in enumerate(readings)
                      if kept[j] and suited(card) and sure >= SIZE_SURE], int)
    out = list(kept)
    for i, (card, _) in enumerate(readings):
        others = cards[cards != i]
        if not kept[i] or not len(others):
            continue
        away = np.linalg.norm(centres[others] - centres[i], axis=1)
        # (statistics' median: numpy's takes 40 microseconds for three numbers)
        size = median(sizes[others[np.argsort(away, kind="stable")[:SIZE_NEAR]]].tolist())
        if size <= 0:
            continue
        out[i] = bool(sizes[i] >= UNDERSIZED * size and (
            sizes[i] <= OVERSIZED * size or card not in (BACK_CODE, JOKER_CODE)))
    return out


def _round_two(corners: Sequence[npt.NDArray[np.float64]], sizes: npt.NDArray[np.float64],
               shared: Sequence[Sequence[float]], readings: Sequence[tuple[str, float]],
               kept: Sequence[bool], over: Stacking) -> list[bool]:
    """``kept`` less the outlines read as anything but a back (``readings``; backs so covered
    are dropped before, HIDDEN_BACK) that the kept outlines read as face-up cards cover at
    least HIDDEN_BACK, leaving out those it lies over (``over``; one read ``??``: at least
    ROUND_TWO_UNREAD, whichever lies on which), two or more of which lie at
    least half inside it (``shared``: the areas each two share), and whose size (``sizes``,
    as ``_sized`` takes them) is more than ROUND_TWO times the median of theirs."""
    faces = [kept[j] and suited(card) for j, (card, _) in enumerate(readings)]
    # (the smallest card inside is no larger than their median, so some face-up card must be
    # that much smaller: in most frames none is)
    asked = [i for i, (card, _) in enumerate(readings) if kept[i] and card != BACK_CODE
             and any(faces[j] and j != i and ROUND_TWO * sizes[j] < sizes[i]
                     for j in range(len(readings)))]
    if not asked:
        return list(kept)
    # (an outline read ?? is judged as if nothing told which lies on which: its row of the
    # stacking is left blank)
    order: Stacking = [[None] * len(row) if card == UNSURE else row
                       for row, (card, _) in zip(over, readings, strict=True)]
    hidden = hidden_shares(corners, faces, order, only=asked)
    out = list(kept)
    for i in asked:
        if hidden[i] < (ROUND_TWO_UNREAD if readings[i][0] == UNSURE else HIDDEN_BACK):
            continue
        inside = [j for j, face in enumerate(faces) if face and j != i
                  and order[i][j] is not True and 0 < sizes[j] ** 2 <= 2 * shared[i][j]]
        out[i] = not (len(inside) >= 2 and sizes[i] > ROUND_TWO * median(sizes[inside].tolist()))
    return out


def _cut_unread(corners: Sequence[npt.NDArray[np.float64]], shared: Sequence[Sequence[float]],
                readings: Sequence[tuple[str, float]], kept: Sequence[bool],
                image: Image) -> list[bool]:
    """``kept`` less the outlines read ``??`` that the picture cuts (not ``_in_frame``) and
    no other kept outline overlaps (``shared``: the convex hulls' overlaps). What shows of
    such a thing tells no card from clutter, and the verifier does not judge it when the
    picture cuts more than a tenth of it (JUDGED_SHARE): on the real photos (edje-cards,
    test and train) all 7 outlines the picture cut and read ?? were clutter (a jar, a
    plate, a box, a tag, a grille, a magazine's page; the seventh overlaps a card), and no
    card the picture cuts was read so. On rendered frames such outlines are mostly cards
    the picture cuts, which the benchmarks do not count (session 41, models/README.md).
    One overlapping another outline may be a card under it, and stays."""
    count = len(kept)
    return [keep and not (readings[i][0] == UNSURE and not _in_frame(corners[i], image)
                          and not any(j != i and kept[j] and shared[i][j] > 0
                                      for j in range(count)))
            for i, keep in enumerate(kept)]


def _inside_share(a: Polygon, b: Polygon) -> float:
    """How much of the smaller of two outlines lies inside the other."""
    smaller = min(a.area, b.area)
    return float(a.intersection(b).area / smaller) if smaller > 0 else 0.0


def _faint(outline: Outline) -> bool:
    """A learned box kept only when read for sure as a face-up card: scored under MIN_SCORE
    (faint, or an end of a merged box, or found in the mirrored picture: those score
    ``learned.SPLIT_SCORE`` and ``MIRROR_SCORE`` at most, under MIN_SCORE)."""
    return outline.learned and outline.score < MIN_SCORE


def _sure_bar(outline: Outline) -> float:
    """How sure a faint box (or a card completed beyond the picture's edge) must be read as a
    face-up card to be one: SPLIT_SURE for an end of a merged box, else FAINT_SURE."""
    return SPLIT_SURE if outline.split else FAINT_SURE


def _in_frame(corners: npt.NDArray[np.float64], image: Image) -> bool:
    """Whether an outline lies inside the image, clear of its edges by ``FRAME_MARGIN_PX``
    (an outline the frame cuts is often drawn along the image's edge)."""
    height, width = image.shape[:2]
    xs, ys = corners[:, 0], corners[:, 1]
    return bool(xs.min() >= FRAME_MARGIN_PX and ys.min() >= FRAME_MARGIN_PX
                and xs.max() <= width - 1 - FRAME_MARGIN_PX
                and ys.max() <= height - 1 - FRAME_MARGIN_PX)


def _cardlike(outline: Outline, reading: CardReading,
              boxes: Sequence[npt.NDArray[np.float64]] = ()) -> bool:
    """Whether a candidate outline, quickly read, is kept as a card (``boxes``: the learned
    detector's candidate outlines, faint ones too)."""
    # A box the detector is sure of is a card, whatever its corners read (those of a
    # design never seen may read as table).
    if outline.learned and outline.score >= SURE_CARD_SCORE:
        return True
    # A faint box is kept only for a face-up card read for sure: on validation-design frames
    # this found 3 cards in 754 more at 0.6 points less precision (models/README.md).
    if _faint(outline) and not (
            suited(reading.card)
            and reading.confidence >= _sure_bar(outline)):
        return False
    # A back the shape finder alone outlines is, on real photos, mostly a flyer, a book or a
    # page (21 of the train photos' 72 false finds); the backs of rendered scenes are found
    # by the detector too, if only faintly (models/README.md).
    if reading.card == BACK_CODE and not outline.learned and not any(
            quad_iou(outline.corners, box) >= SAME_CARD_IOU for box in boxes):
        return False
    # An outline whose both corners read as table or clutter is no card. One read with
    # hardly any confidence is, on real photos, mostly not a card (paper, a box): 71 such
    # false finds against 8 cards on edje-cards/train. An unreadable one the shape finder
    # alone vouches for is mostly a box, a book or paper: it needs the detector's word.
    return (not all(cls == NOT_A_CARD for cls, _ in reading.corners)
            and reading.confidence >= MIN_CARDNESS
            and (reading.card != UNSURE or outline.learned))


def load_identifier() -> tuple[CardIdentifier | None, str | None]:
    try:
        return CardIdentifier(), None
    except ModelMissingError as error:
        return None, str(error)


def load_verifier() -> tuple[CardVerifier | None, str | None]:
    """The card verifier, or None and why not (it is optional: without it ``detect`` keeps
    every card-like outline)."""
    try:
        return CardVerifier(), None
    except ModelMissingError as error:
        return None, str(error)


def load_corner_model() -> tuple[CornerModel | None, str | None]:
    """The corner model, or None and why not (it is optional: without it ``detect`` keeps
    the outlines tightened on the image's edges)."""
    try:
        return CornerModel(), None
    except ModelMissingError as error:
        return None, str(error)


def load_detector(runtime: str | None = None) -> tuple[CardDetector | None, str | None]:
    """The card detector run by ``runtime`` (``onnx_model.detector_runtime``), or None and
    why not; a runtime that cannot run here raises RuntimeUnavailableError."""
    try:
        return CardDetector(runtime=runtime), None
    except ModelMissingError as error:
        return None, str(error)


def annotate(image: Image, detections: Detections) -> Image:
    """Outlines, and each card's label on a dark patch at its centre (cards that overlap
    have their top-left corners close together, and labels there ran into each other)."""
    out = image.copy()
    thickness = max(2, round(max(image.shape[:2]) / 400))
    colours = [(40, 200, 40) if card.card != UNSURE else (40, 160, 255)
               for card in detections.cards]
    for card, colour in zip(detections.cards, colours, strict=True):
        points = np.round(np.array(card.corners)).astype(np.int32)
        cv2.polylines(out, [points], True, colour, thickness, cv2.LINE_AA)
    taken: list[tuple[int, int, int, int]] = []
    for card, colour in zip(detections.cards, colours, strict=True):
        label = f"{card.card} {card.confidence:.2f}"
        corners = np.array(card.corners, dtype=np.float64)
        # as wide as the card at most (a webcam sees a card 60-120 px wide), and legible
        (unit_w, _), _ = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, 1.0, 1)
        scale = float(np.clip(short_side(corners) / unit_w, 0.35, 0.4 * thickness))
        weight = 1 if scale < 0.6 else max(1, thickness - 1)
        (w, h), base = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, scale, weight)
        cx, cy = corners.mean(axis=0)
        x = int(np.clip(cx - w / 2, 0, max(0, out.shape[1] - w)))
        y = int(np.clip(cy + h / 2, h + 2, max(h + 2, out.shape[0] - base - 2)))
        # below any label already drawn that this one would run into
        while any(x < x1 and x0 < x + w and y - h < y1 and y0 < y + base
                  for x0, y0, x1, y1 in taken) and y + h + base + 4 < out.shape[0]:
            y += h + base + 4
        taken.append((x - 2, y - h - 2, x + w + 2, y + base))
        cv2.rectangle(out, (x - 2, y - h - 2), (x + w + 2, y + base), (20, 20, 20), cv2.FILLED)
        cv2.putText(out, label, (x, y), cv2.FONT_HERSHEY_SIMPLEX, scale, colour, weight,
                    cv2.LINE_AA)
    return out
