"""Procedural deck designs: index typography the packaged decks do not have.

The 28 packaged training designs teach the classifier only a few dozen ways of writing a
rank. Real decks use many more: other typefaces, sizes, weights, positions, German and
French court letters, four-colour suits. A procedural deck ``proc:NN`` draws every card from
a seeded recipe: a rank font from this machine's fonts (``fc-list``), a suit glyph font, ink
colours, the index layout (suit below or beside the rank), pips in the standard layouts,
court pictures cut from the middle of the packaged training decks' court cards (never their
corners, so no foreign index leaks in), a joker and a patterned back.

Cards are cached like packaged ones (252 x 352 px RGBA, rounded corners) under
``<cache>/proc__NN.vV`` (V: ``RECIPE_VERSION``). The recipe depends on the fonts installed;
``scripts/install-system-deps.sh`` installs the set used to train the shipped model.
"""

from __future__ import annotations

import os
import subprocess
from functools import cache, lru_cache
from pathlib import Path
from typing import Final

import cv2
import numpy as np
from PIL import Image as PILImage
from PIL import ImageDraw, ImageFont

from referee.cards import STANDARD_DECK, Card
from synth.artwork import (
    ART_PX_PER_MM,
    CARD_H_MM,
    CARD_W_MM,
    ArtworkError,
    cache_dir,
    installed_decks,
    load_card,
    rasterise_deck,
)

PREFIX: Final = "proc:"
W: Final = round(CARD_W_MM * ART_PX_PER_MM)
H: Final = round(CARD_H_MM * ART_PX_PER_MM)
SUIT_GLYPHS: Final = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}
RANK_TEXT: Final = {1: "A", 10: "10", 11: "J", 12: "Q", 13: "K"}
#: Court letters of German (Bube, Dame, König) and French (valet, dame, roi) decks.
COURT_VARIANTS: Final = ({11: "B", 12: "D", 13: "K"}, {11: "V", 12: "D", 13: "R"})
#: Pip centres (fractions of the pip area) of the standard layouts.
PIPS: Final[dict[int, list[tuple[float, float]]]] = {
    2: [(0.5, 0.0), (0.5, 1.0)],
    3: [(0.5, 0.0), (0.5, 0.5), (0.5, 1.0)],
    4: [(0, 0), (1, 0), (0, 1), (1, 1)],
    5: [(0, 0), (1, 0), (0.5, 0.5), (0, 1), (1, 1)],
    6: [(0, 0), (1, 0), (0, 0.5), (1, 0.5), (0, 1), (1, 1)],
    7: [(0, 0), (1, 0), (0.5, 0.25), (0, 0.5), (1, 0.5), (0, 1), (1, 1)],
    8: [(0, 0), (1, 0), (0.5, 0.25), (0, 0.5), (1, 0.5), (0.5, 0.75), (0, 1), (1, 1)],
    9: [(0, 0), (1, 0), (0, 1 / 3), (1, 1 / 3), (0.5, 0.5), (0, 2 / 3), (1, 2 / 3), (0, 1),
        (1, 1)],
    10: [(0, 0), (1, 0), (0.5, 1 / 6), (0, 1 / 3), (1, 1 / 3), (0, 2 / 3), (1, 2 / 3),
         (0.5, 5 / 6), (0, 1), (1, 1)],
}


#: Back designs: 0-3 lines and dots, 4 a picture, 5 a tiled motif, 6 an emblem on plain;
#: (recipes 8) printed to the edge, 7 a bold lattice with shapes in its cells, 8 rosettes in
#: rows, 9 two-tone checks.
BACK_STYLES: Final = 10
#: The styles the second stream draws from (the first seven); the bold repeats are drawn from
#: a stream of their own.
FIRST_BACK_STYLES: Final = 7
#: Recipes 8: the share of training designs whose back is a bold repeat printed to the card's
#: edge, its repeat 5-18 mm (the first back styles drew fine lattices 3.5 mm apart inside a
#: margin, or pictures; real full-bleed backs repeat shapes a few times across the card).
BOLD_BACK_SHARE: Final = 0.4
BOLD_BACK_REPEAT_MM: Final = (5.0, 18.0)
#: Joker corners: the word reading upwards, a star, stacked letters, the word across the
#: top, the word reading downwards, "Joker" stacked in mixed case, (recipes 4) a big "J" as
#: tall as a rank over "oker" stacked small, and (recipes 7) a big "J" with "oker" small
#: across the top beside it, the letters wandering up and down.
JOKER_STYLES: Final = 8
#: The styles the first recipes drew from (the first six); the later ones are drawn from
#: streams of their own.
FIRST_JOKER_STYLES: Final = 6
#: Recipes 7: the share of training designs whose jokers write the word across the top
#: (as aisleriot tango_nuevo's does), and of those the share printing it only once, at the
#: top (no turned copy: the bottom shows the picture).
ACROSS_JOKER_SHARE: Final = 0.3
ACROSS_JOKER_ONCE: Final = 0.5
#: How tall (mm) such a joker's first letter is: tango_nuevo's "J" is 15.5 mm.
ACROSS_JOKER_MM: Final = (7.0, 17.0)
#: Procedural designs from this number on are in no deck split: they stand in for the joker
#: or back of a packaged design that has none (``synth.scene.stand_in``). They are part of
#: what a validation or held-out design looks like, so recipes 4 and later leave them as
#: recipes 3 drew them.
STAND_IN_FIRST: Final = 1000
#: Bumped whenever a recipe draws differently: the cache of drawn cards is kept per version.
RECIPE_VERSION: Final = 8
#: Jumbo indices (recipes 5): how many training designs print them, and how tall (mm). Real
#: jumbo-index decks print a rank 12-16 mm tall; aisleriot tango_nuevo 15.5 mm. Every design
#: before drew it 5-10.5 mm tall, and the index model read such a rank as another
#: (tango_nuevo's 10 as a 7, its 8 as a K).
JUMBO_SHARE: Final = 0.2
JUMBO_RANK_MM: Final = (11.5, 17.0)
#: The index cut is 32 mm tall (``referee.detection.crops.INDEX_MM``): a suit printed below
#: a jumbo rank ends this far from the card's top edge at most.
JUMBO_INDEX_END_MM: Final = 30.0
#: Of the designs drawing one giant pip, the share whose pip runs off the card (recipes 6).
BLEED_SHARE: Final = 0.6
STAR: Final = "\u2605"
MOTIFS: Final = ("\u2605", "\u2666", "\u25cf", "\u2726", "\u273f", "\u2740", "\u25c6", "\u2756")


#: The largest pip (mm tall) that keeps each layout's pips apart.
PIP_MAX_MM: Final = {2: 13.0, 3: 12.0, 4: 12.0, 5: 11.0, 6: 11.0, 7: 10.0, 8: 9.0, 9: 8.5,
                     10: 8.0}


def procedural_decks(count: int) -> list[str]:
    return [f"{PREFIX}{i:02d}" for i in range(count)]


def is_procedural(deck: str) -> bool:
    return deck.startswith(PREFIX)


@lru_cache(maxsize=1)
def _fonts() -> tuple[list[str], list[str]]:
    """(text fonts, fonts with the four suit glyphs), as sorted file paths."""
    def listing(*pattern: str) -> list[str]:
        try:
            out = subprocess.run(["fc-list", "--format", "%{file}\n", *pattern],
                                 capture_output=True, text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError) as exc:
            raise ArtworkError(f"cannot list fonts with fc-list: {exc}") from exc
        skip = ("math", "symbol", "mono", "d050000l", "z003", "asana", "dingbat")
        return sorted({f for f in out.split() if f.endswith((".ttf", ".otf"))
                       and not any(s in Path(f).name.lower() for s in skip)})
    text = listing(":lang=en")
    suits = [f for f in listing(":charset=2660 2663 2665 2666")]
    suits += [f for f in _symbol_fonts()]
    if not text or not suits:
        raise ArtworkError("no usable fonts for procedural decks (install fonts-dejavu-core)")
    return text, sorted(set(suits))


@lru_cache(maxsize=1)
def _symbol_fonts() -> list[str]:
    out = subprocess.run(["fc-list", "--format", "%{file}\n", ":charset=2660 2663 2665 2666"],
                         capture_output=True, text=True).stdout
    return [f for f in out.split() if f.endswith((".ttf", ".otf"))
            and ("Symbola" in f or "Symbols2" in f)]


class _Recipe:
    """Everything one procedural design decides once, from its seed."""

    def __init__(self, index: int) -> None:
        rng = np.random.default_rng(10_000 + index)
        text_fonts, suit_fonts = _fonts()
        self.rng = rng
        self.rank_font = text_fonts[int(rng.integers(len(text_fonts)))]
        self.suit_font = suit_fonts[int(rng.integers(len(suit_fonts)))]
        self.paper = tuple(int(v) for v in rng.integers(228, 256, 3)) if rng.random() < 0.6 \
            else (255, 255, 255)
        red_hue = rng.uniform(-12, 10)
        self.red = _hsv_rgb(red_hue % 180, rng.uniform(150, 255), rng.uniform(150, 240))
        self.black = tuple(int(v) for v in rng.integers(0, 60, 3))
        self.inks = {"S": self.black, "C": self.black, "H": self.red, "D": self.red}
        if rng.random() < 0.15:  # four-colour deck
            self.inks["D"] = _hsv_rgb(rng.choice([105.0, 15.0]), 200, 200)
            self.inks["C"] = _hsv_rgb(60, 200, 150)
        self.courts = dict(COURT_VARIANTS[int(rng.integers(2))]) if rng.random() < 0.15 \
            else {11: "J", 12: "Q", 13: "K"}
        self.ace = "A" if rng.random() < 0.95 else "1"
        self.rank_mm = rng.uniform(5.0, 10.5)
        self.suit_mm = self.rank_mm * rng.uniform(0.55, 1.0)
        self.index_x_mm = rng.uniform(1.2, 4.5)
        self.index_y_mm = rng.uniform(1.5, 5.0)
        self.beside = rng.random() < 0.12  # suit right of the rank instead of below it
        self.condensed_ten = rng.random() < 0.5
        self.border = rng.random() < 0.35
        self.pip_mm = rng.uniform(7.0, 13.0)
        self.court_frame = rng.random() < 0.7
        self.back_colour = _hsv_rgb(rng.uniform(0, 180), rng.uniform(80, 230), rng.uniform(60, 200))
        self.back_pattern = int(rng.integers(4))
        # Backs and jokers vary more than the first recipes drew (a back with a picture, a
        # motif, an emblem; jokers with a star or stacked letters): drawn from a second
        # stream so that the faces of every design stay as they were.
        more = np.random.default_rng(20_000 + index)
        if more.random() < 0.6:
            self.back_pattern = 4 + int(more.integers(FIRST_BACK_STYLES - 4))
        self.back_second = _hsv_rgb(more.uniform(0, 180), more.uniform(0, 200),
                                    more.uniform(120, 255))
        self.back_inset_mm = 4.0 if more.random() < 0.6 else float(more.uniform(0.0, 2.5))
        self.back_seed = int(more.integers(2**31))
        self.joker_style = int(more.integers(FIRST_JOKER_STYLES))
        # Layouts and shapes the packaged designs show and the first recipes lacked (aisleriot
        # tango's blobby diamonds, tango_nuevo's suit in the opposite corner and one giant pip,
        # jokers spelled downwards): a third stream, so the earlier draws stay as they were.
        extra = np.random.default_rng(30_000 + index)
        self.diamond = str(extra.choice(["glyph", "rounded", "slim"], p=[0.6, 0.3, 0.1]))
        self.diamond_power = float(extra.uniform(1.1, 1.4))
        self.across = not self.beside and extra.random() < 0.1  # suit in the top right
        self.giant = extra.random() < 0.08  # number cards: one big pip, no layout
        if extra.random() < 0.35:
            self.joker_style = 4 + int(extra.integers(2))
        # Aces as real decks print them (recipes 3): a big ace of spades with white detail in
        # its pip, scrollwork round it, a ring or a maker's word (the Bicycle ace the face
        # model read as a club); some other aces decorated too, so that decoration alone
        # does not say spades (kde jolly-royal's ace of clubs has tendrils). A fourth
        # stream: every other card stays as recipes 2 drew it.
        ornate = np.random.default_rng(40_000 + index)
        self.ornate_spade = ornate.random() < 0.6
        self.ornate_others = ornate.random() < 0.25
        self.ace_scale = float(ornate.uniform(2.0, 3.0))
        self.ace_inner = ornate.random() < 0.6
        self.ace_scroll = ornate.random() < 0.6
        self.ace_ring = ornate.random() < 0.3
        self.ace_word = ornate.random() < 0.5
        self.ace_seed = int(ornate.integers(2**31))
        # Jumbo indices (recipes 5): a rank 11.5-17 mm tall, its suit small below it, across
        # the top, or (as tango_nuevo prints it) across the top over one giant pip. A sixth
        # stream; the stand-in designs stay as they were drawn.
        jumbo = np.random.default_rng(60_000 + index)
        if jumbo.random() < JUMBO_SHARE and index < STAND_IN_FIRST:
            self.rank_mm = float(jumbo.uniform(*JUMBO_RANK_MM))
            self.beside = False
            self.across = jumbo.random() < 0.4
            self.giant = self.giant or (self.across and jumbo.random() < 0.5)
            below = JUMBO_INDEX_END_MM - self.index_y_mm - self.rank_mm - 0.9
            self.suit_mm = float(min(self.rank_mm * jumbo.uniform(0.45, 0.8), below))
            if self.suit_mm < 4.0 and not self.across:  # no room below: across the top
                self.across = True
                self.suit_mm = self.rank_mm * 0.6
        # A giant pip running off the card's edges (recipes 6), as cartoon designs draw it
        # (aisleriot tango_nuevo): the pip 0.6-0.8 of the card tall, its centre low and right
        # of the middle, on the aces too. A seventh stream; the stand-ins stay.
        bleed = np.random.default_rng(70_000 + index)
        self.bleed = self.giant and bleed.random() < BLEED_SHARE and index < STAND_IN_FIRST
        self.bleed_size = float(bleed.uniform(0.6, 0.8))
        self.bleed_x = float(bleed.uniform(0.5, 0.62))
        self.bleed_y = float(bleed.uniform(0.62, 0.75))
        court_pool = _court_decks()
        self.court_deck = court_pool[int(rng.integers(len(court_pool)))] if court_pool else None
        # Jokers as unfamiliar designs draw them (recipes 4): a jester drawn here, in colours
        # and shapes of its own, instead of a training design's joker cut out (15 pictures in
        # all, which the face model learnt one by one: aisleriot tango's jester, seen in no
        # training design, it read as a jack); and a big "J" over "oker" in the corners, as
        # tango prints it. A fifth stream: every other card stays as recipes 3 drew it.
        jester = np.random.default_rng(50_000 + index)
        self.drawn_joker = jester.random() < 0.6 and index < STAND_IN_FIRST
        self.joker_seed = int(jester.integers(2**31))
        if jester.random() < 0.25 and index < STAND_IN_FIRST:
            self.joker_style = 6
        # Jokers that write the word across the top, a big "J" and "oker" small beside it
        # (recipes 7): aisleriot tango_nuevo's, which the corners read as a jack of diamonds
        # and the suit model's bands as red. An eighth stream; the stand-ins stay.
        across = np.random.default_rng(80_000 + index)
        self.joker_once = False
        if across.random() < ACROSS_JOKER_SHARE and index < STAND_IN_FIRST:
            self.joker_style = 7
            self.joker_once = bool(across.random() < ACROSS_JOKER_ONCE)
        # Backs printed to the edge in a bold repeat (recipes 8): a lattice with shapes in its
        # cells, rosettes in rows, two-tone checks; 5-18 mm a repeat, so an index corner's cut
        # shows one to six of them across. A ninth stream; the stand-ins stay.
        bold = np.random.default_rng(90_000 + index)
        if bold.random() < BOLD_BACK_SHARE and index < STAND_IN_FIRST:
            self.back_pattern = FIRST_BACK_STYLES + int(bold.integers(BACK_STYLES
                                                                      - FIRST_BACK_STYLES))
            self.back_colour = _hsv_rgb(bold.uniform(0, 180), bold.uniform(0, 240),
                                        bold.uniform(40, 250))
            self.back_second = _hsv_rgb(bold.uniform(0, 180), bold.uniform(0, 240),
                                        bold.uniform(40, 250))
            self.back_inset_mm = 0.0 if bold.random() < 0.6 else float(bold.uniform(0.5, 2.5))
            self.back_seed = int(bold.integers(2**31))


def _hsv_rgb(h: float, s: float, v: float) -> tuple[int, int, int]:
    hsv = np.uint8([[[round(h) % 180, min(255, round(s)), min(255, round(v))]]])
    r, g, b = cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB)[0, 0]
    return int(r), int(g), int(b)


#: Deck designs from Debian's packages, the only ones procedural designs cut courts from.
DEBIAN_DECK_PREFIXES: Final = ("aisleriot:", "kde:")


def _court_decks() -> list[str]:
    from synth.decks import decks_for  # the training designs only

    installed = installed_decks()
    # Debian designs only (aisleriot, KDE): the recipes draw what they drew before designs
    # from npm and PyPI came in, whatever else is installed.
    return [d for d in decks_for("train") if d in installed
            and d.startswith(DEBIAN_DECK_PREFIXES)]


def _font(path: str, px: float) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(path, max(6, round(px)))


def _glyph(text: str, font_path: str, height_px: float, colour: tuple[int, int, int],
           squeeze: float = 1.0) -> PILImage.Image:
    """``text`` inked to ``height_px`` tall (its ink box), RGBA, tightly cropped."""
    font = _font(font_path, height_px * 1.6)
    left, top, right, bottom = font.getbbox(text)
    canvas = PILImage.new("L", (right - left + 4, bottom - top + 4), 0)
    ImageDraw.Draw(canvas).text((2 - left, 2 - top), text, font=font, fill=255)
    box = canvas.getbbox()
    if box is None:
        raise ArtworkError(f"font {font_path} draws nothing for {text!r}")
    mask = canvas.crop(box)
    scale = height_px / mask.height
    size = (max(1, round(mask.width * scale * squeeze)), max(1, round(height_px)))
    return _inked(mask, size, colour)


def _inked(mask: PILImage.Image, size: tuple[int, int],
           colour: tuple[int, int, int]) -> PILImage.Image:
    """``colour`` wherever ``mask`` (scaled to ``size``) is set: an RGBA sprite."""
    ink = PILImage.new("RGBA", size, (*colour, 255))
    ink.putalpha(mask.resize(size, PILImage.LANCZOS))
    return ink


def _suit(recipe: _Recipe, suit: str, height_px: float,
          colour: tuple[int, int, int]) -> PILImage.Image:
    """A suit sign: the suit font's glyph, or a drawn diamond (rounded or slim)."""
    if suit != "D" or recipe.diamond == "glyph":
        return _glyph(SUIT_GLYPHS[suit], recipe.suit_font, height_px, colour)
    height = max(4, round(height_px))
    width = max(3, round(height * (0.62 if recipe.diamond == "slim" else 0.8)))
    scale = 4  # drawn large, then scaled down: smooth edges
    power = 1.0 if recipe.diamond == "slim" else recipe.diamond_power
    t = np.linspace(0, 2 * np.pi, 160, endpoint=False)
    cos, sin = np.cos(t), np.sin(t)
    x = np.sign(cos) * np.abs(cos) ** (2 / power)
    y = np.sign(sin) * np.abs(sin) ** (2 / power)
    points = [(float((1 + a) * (width * scale - 1) / 2), float((1 + b) * (height * scale - 1) / 2))
              for a, b in zip(x, y, strict=True)]
    mask = PILImage.new("L", (width * scale, height * scale), 0)
    ImageDraw.Draw(mask).polygon(points, fill=255)
    return _inked(mask, (width, height), colour)


def _paste(card: PILImage.Image, sprite: PILImage.Image, x: float, y: float,
           turned: bool = False) -> None:
    if turned:
        sprite = sprite.rotate(180)
        x, y = W - x - sprite.width, H - y - sprite.height
    card.alpha_composite(sprite, (round(x), round(y)))


def _centred(card: PILImage.Image, sprite: PILImage.Image, cx: float, cy: float,
             turned: bool = False) -> None:
    if turned:
        sprite = sprite.rotate(180)
    card.alpha_composite(sprite, (round(cx - sprite.width / 2), round(cy - sprite.height / 2)))


def _index(card: PILImage.Image, recipe: _Recipe, rank_text: str, suit: str | None,
           ink: tuple[int, int, int]) -> float:
    """Both index corners; returns the index's width in px (pips keep clear of it)."""
    px = ART_PX_PER_MM
    squeeze = 0.62 if rank_text == "10" and recipe.condensed_ten else 1.0
    rank = _glyph(rank_text, recipe.rank_font, recipe.rank_mm * px, ink, squeeze)
    x, y = recipe.index_x_mm * px, recipe.index_y_mm * px
    parts = [(rank, x, y)]
    width = rank.width
    if suit is not None:
        pip = _suit(recipe, suit, recipe.suit_mm * px, ink)
        if recipe.across:  # only the rank counts as the index: pips keep clear of the rank
            parts.append((pip, W - x - pip.width, y))
        elif recipe.beside:
            parts.append((pip, x + rank.width + 0.8 * px, y))
            width = rank.width + 0.8 * px + pip.width
        else:
            parts.append((pip, x + (rank.width - pip.width) / 2, y + rank.height + 0.9 * px))
            width = max(width, pip.width)
    for sprite, sx, sy in parts:
        _paste(card, sprite, sx, sy)
        _paste(card, sprite, sx, sy, turned=True)
    return x + width


def _face(recipe: _Recipe, code: str) -> PILImage.Image:
    px = ART_PX_PER_MM
    card = PILImage.new("RGBA", (W, H), (*recipe.paper, 255))
    draw = ImageDraw.Draw(card)
    if recipe.border:
        inset = round(2.2 * px)
        draw.rounded_rectangle((inset, inset, W - inset, H - inset), radius=round(2 * px),
                               outline=(*recipe.inks["S"], 255), width=2)
    if code == "JK":
        _joker_corners(card, recipe)
        if recipe.drawn_joker:
            _jester(card, recipe, margin_mm=11.0)
        else:
            _court_picture(card, recipe, "JK", margin_mm=11.0)
        return card
    parsed = Card.parse(code)
    assert parsed.suit is not None
    ink = recipe.inks[parsed.suit]
    rank_text = recipe.ace if parsed.rank == 1 else \
        recipe.courts.get(parsed.rank, RANK_TEXT.get(parsed.rank, str(parsed.rank)))
    index_w = _index(card, recipe, rank_text, parsed.suit, ink)
    if parsed.rank >= 11:
        _court_picture(card, recipe, code, margin_mm=max(8.0, index_w / px + 1.0))
        return card
    if recipe.bleed and parsed.rank <= 10:
        _bleeding_pip(card, recipe, parsed.suit, ink, index_end_px=_index_end(recipe) * px)
        return card
    if parsed.rank == 1:
        if recipe.ornate_spade if parsed.suit == "S" else recipe.ornate_others:
            _ornate_ace(card, recipe, parsed.suit, ink)
        else:
            _centred(card, _suit(recipe, parsed.suit, recipe.pip_mm * 1.8 * px, ink),
                     W / 2, H / 2)
        return card
    if recipe.giant:  # one big pip low in the middle, as aisleriot tango_nuevo draws
        big = _suit(recipe, parsed.suit, H * 0.45, ink)
        _centred(card, big, W / 2, H * 0.62)
        return card
    pip_mm = min(recipe.pip_mm, PIP_MAX_MM[parsed.rank])
    pip = _suit(recipe, parsed.suit, pip_mm * px, ink)
    left = max(index_w + pip.width / 2 + 1.5 * px, W * 0.3)
    right = W - left
    top, bottom = 12 * px + pip.height / 2, H - 12 * px - pip.height / 2
    for fx, fy in PIPS[parsed.rank]:
        _centred(card, pip, left + fx * (right - left), top + fy * (bottom - top),
                 turned=fy > 0.5)
    return card


def _index_end(recipe: _Recipe) -> float:
    """How far (mm) from the card's top edge the corner index reaches at most."""
    below = 0.0 if recipe.across or recipe.beside else 0.9 + recipe.suit_mm
    return recipe.index_y_mm + recipe.rank_mm + below


def _bleeding_pip(card: PILImage.Image, recipe: _Recipe, suit: str,
                  ink: tuple[int, int, int], index_end_px: float) -> None:
    """One giant pip, low and right of the middle, cut by the card's edges; its top
    keeps 3 mm clear of the corner index."""
    big = _suit(recipe, suit, H * recipe.bleed_size, ink)
    cx, cy = W * recipe.bleed_x, H * recipe.bleed_y
    cy = max(cy, index_end_px + 3 * ART_PX_PER_MM + big.height / 2)
    layer = PILImage.new("RGBA", (W, H), (0, 0, 0, 0))
    layer.paste(big, (round(cx - big.width / 2), round(cy - big.height / 2)), big)
    card.alpha_composite(layer)


def _ornate_ace(card: PILImage.Image, recipe: _Recipe, suit: str,
                ink: tuple[int, int, int]) -> None:
    """A big decorated ace pip: paper-coloured detail inside it (the ace of spades only),
    scrollwork either side, a ring round it, a maker's word above and below."""
    px = ART_PX_PER_MM
    rng = np.random.default_rng(recipe.ace_seed + ord(suit))
    height = min(recipe.pip_mm * recipe.ace_scale, 36.0) * px
    pip = _suit(recipe, suit, height, ink)
    cx, cy = W / 2, H / 2
    draw = ImageDraw.Draw(card)
    colour = (*ink, 255)
    if recipe.ace_ring:
        r = max(pip.width, pip.height) * float(rng.uniform(0.62, 0.75))
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), outline=colour,
                     width=max(1, round(float(rng.uniform(0.3, 0.8)) * px)))
    if recipe.ace_scroll:
        for _ in range(int(rng.integers(2, 5))):
            # one curl, drawn on both sides of the pip
            rx, ry = (float(v) * px for v in rng.uniform(2.0, 6.0, 2))
            dx = pip.width / 2 + float(rng.uniform(0.0, 4.0)) * px
            dy = float(rng.uniform(-0.5, 0.5)) * pip.height
            start = float(rng.uniform(0, 360))
            width = max(1, round(float(rng.uniform(0.2, 0.6)) * px))
            for side in (-1, 1):
                x = cx + side * dx
                draw.arc((x - rx, cy + dy - ry, x + rx, cy + dy + ry), start,
                         start + float(rng.uniform(150, 300)), fill=colour, width=width)
    _centred(card, pip, cx, cy)
    if suit == "S" and recipe.ace_inner:
        # white detail in the pip: a smaller pip in the paper's colour, and a few strokes
        inner = _suit(recipe, suit, pip.height * float(rng.uniform(0.35, 0.6)), recipe.paper)
        _centred(card, inner, cx, cy - pip.height * 0.05)
        for _ in range(int(rng.integers(0, 4))):
            x0 = cx + float(rng.uniform(-0.25, 0.25)) * pip.width
            y0 = cy + float(rng.uniform(-0.3, 0.2)) * pip.height
            draw.line((x0, y0, x0 + float(rng.uniform(-0.15, 0.15)) * pip.width,
                       y0 + float(rng.uniform(0.05, 0.25)) * pip.height),
                      fill=(*recipe.paper, 255), width=max(1, round(0.3 * px)))
    if recipe.ace_word:
        letters = "ABCDEGHIKLMNOPRSTUVY"
        word = "".join(letters[int(k)] for k in rng.integers(len(letters), size=rng.integers(4, 9)))
        text = _glyph(word, recipe.rank_font, float(rng.uniform(1.8, 3.0)) * px, ink)
        if text.width > W * 0.7:
            text = text.resize((round(W * 0.7), text.height))
        gap = pip.height / 2 + float(rng.uniform(1.5, 4.0)) * px + text.height / 2
        _centred(card, text, cx, cy - gap)
        _centred(card, text, cx, cy + gap, turned=True)


def _court_picture(card: PILImage.Image, recipe: _Recipe, code: str, margin_mm: float) -> None:
    """The middle of a training deck's court card (or joker), never its index corners."""
    if recipe.court_deck is None:
        return
    paths = rasterise_deck(installed_decks()[recipe.court_deck])
    source = paths.get(code) or paths.get("KS")
    if source is None:
        return
    art = load_card(source)
    m = round(margin_mm * ART_PX_PER_MM)
    # Cut well inside the source card, clear of its own indices.
    cut = art[round(H * 0.2):H - round(H * 0.2), round(W * 0.24):W - round(W * 0.24)]
    box = (m, round(H * 0.17), W - m, H - round(H * 0.17))
    size = (box[2] - box[0], box[3] - box[1])
    if size[0] < 20 or size[1] < 20:
        return
    picture = cv2.resize(cut, size, interpolation=cv2.INTER_AREA)
    rgba = cv2.cvtColor(picture, cv2.COLOR_BGRA2RGBA)
    sprite = PILImage.fromarray(np.ascontiguousarray(rgba), "RGBA")
    card.alpha_composite(sprite, (box[0], box[1]))
    if recipe.court_frame:
        ImageDraw.Draw(card).rectangle(box, outline=(*recipe.inks["S"], 255), width=2)


def _jester(card: PILImage.Image, recipe: _Recipe, margin_mm: float) -> None:
    """A jester drawn in the card's middle: a hat of two or three floppy points with bells,
    a round face, a zigzag collar and a body, in colours of the design's own. Either one
    figure, or its upper half mirrored end to end as court cards are (aisleriot tango), or
    the head and hat alone."""
    px = ART_PX_PER_MM
    rng = np.random.default_rng(recipe.joker_seed)
    left, top = margin_mm * px, H * 0.17
    box_w, box_h = W - 2 * left, H - 2 * top
    kind = str(rng.choice(["mirrored", "figure", "head"], p=[0.45, 0.3, 0.25]))
    hues = rng.permutation(180)[:4]
    colours = [(*_hsv_rgb(float(h), float(rng.uniform(120, 255)), float(rng.uniform(110, 240))),
                255) for h in hues]
    skin = (*_hsv_rgb(float(rng.uniform(8, 30)), float(rng.uniform(40, 200)),
                      float(rng.uniform(200, 255))), 255)
    outline = (*recipe.black, 255) if rng.random() < 0.6 else None
    bell = (*_hsv_rgb(float(rng.uniform(20, 35)), 220, 230), 255)
    points = int(rng.integers(2, 4))
    face_features = rng.random() < 0.7
    body_shape = str(rng.choice(["widening", "straight", "shoulders"]))
    head_share = float(rng.uniform(0.13, 0.2))
    if recipe.court_frame and rng.random() < 0.5:
        ImageDraw.Draw(card).rectangle((left, top, left + box_w, top + box_h),
                                       outline=(*recipe.inks["S"], 255), width=2)

    def half(width: float, height: float, head_only: bool) -> PILImage.Image:
        """The jester from hat to waist, filling ``width`` x ``height`` (head at the top)."""
        sprite = PILImage.new("RGBA", (max(1, round(width)), max(1, round(height))), (0, 0, 0, 0))
        draw = ImageDraw.Draw(sprite)
        cx = width / 2
        r = min(width * 0.2, height * (0.22 if head_only else head_share))
        head_y = height * (0.55 if head_only else 0.32)
        width_line = max(1, round(0.3 * px))
        # the hat: floppy points from the crown out to the sides (and up), bells at the tips
        crown = head_y - r * 0.6
        for k in range(points):
            side = -1 if k == 0 else 1 if k == points - 1 else 0
            tip = (cx + side * min(width * 0.45, r * 2.6), crown - r * (0.4 if side else 1.9))
            droop = (cx + side * r * 1.7, crown - r * (1.7 if side else 1.2))
            base = [(cx - r * (1.0 if side <= 0 else 0.0), crown),
                    (cx + r * (1.0 if side >= 0 else 0.0), crown)]
            curve = [(base[1][0] + (droop[0] - base[1][0]) * t * 1.1,
                      base[1][1] + (droop[1] - base[1][1]) * t) for t in (0.4, 0.8)]
            draw.polygon([*base[:1], *curve, tip, droop, base[1]] if side >= 0 else
                         [base[1], *curve, tip, droop, base[0]],
                         fill=colours[k % 2 if points == 2 else k], outline=outline)
            br = r * 0.28
            draw.ellipse((tip[0] - br, tip[1] - br, tip[0] + br, tip[1] + br), fill=bell,
                         outline=outline)
        draw.rectangle((cx - r * 1.05, crown - r * 0.2, cx + r * 1.05, crown + r * 0.25),
                       fill=colours[3], outline=outline)
        if not head_only:
            # the body below the collar: a trapezoid, in one colour or with a second colour
            # over its right side (drawn in the widening shape whatever the body's)
            neck = head_y + r * 1.1
            top_w, bottom_w = {"widening": (r * 0.8, width * 0.42),
                               "straight": (width * 0.3, width * 0.3),
                               "shoulders": (width * 0.42, width * 0.2)}[body_shape]
            body = [(cx - top_w, neck), (cx + top_w, neck),
                    (cx + bottom_w, height), (cx - bottom_w, height)]
            draw.polygon(body, fill=colours[1], outline=outline)
            if rng.random() < 0.5:
                draw.polygon([(cx, neck), (cx + r * 0.8, neck), (cx + width * 0.42, height),
                              (cx, height)], fill=colours[0], outline=outline)
        # a zigzag collar under the chin
        teeth = int(rng.integers(4, 8))
        cy = head_y + r * 0.9
        span = r * 2.6
        zig = []
        for t in range(teeth * 2 + 1):
            x = cx - span / 2 + span * t / (teeth * 2)
            zig.append((x, cy + (r * 0.7 if t % 2 else 0.0)))
        draw.polygon([(cx - span / 2, cy - r * 0.15), *zig, (cx + span / 2, cy - r * 0.15)],
                     fill=colours[2], outline=outline)
        draw.ellipse((cx - r, head_y - r, cx + r, head_y + r), fill=skin, outline=outline,
                     width=width_line)
        if face_features:
            eye = max(1.0, r * 0.12)
            for side in (-1, 1):
                ex, ey = cx + side * r * 0.38, head_y - r * 0.15
                draw.ellipse((ex - eye, ey - eye, ex + eye, ey + eye), fill=(*recipe.black, 255))
            draw.arc((cx - r * 0.5, head_y - r * 0.2, cx + r * 0.5, head_y + r * 0.6), 20, 160,
                     fill=(*recipe.black, 255), width=width_line)
        return sprite

    if kind == "mirrored":
        upper = half(box_w, box_h / 2, head_only=False)
        card.alpha_composite(upper, (round(left), round(top)))
        _paste(card, upper, left, top, turned=True)
    elif kind == "figure":
        upper = half(box_w, box_h * 0.62, head_only=False)
        card.alpha_composite(upper, (round(left), round(top)))
        draw = ImageDraw.Draw(card)
        legs_top, bottom = top + box_h * 0.62, top + box_h
        for side, colour in ((-1, colours[0]), (1, colours[1])):
            x0 = left + box_w / 2 + side * box_w * 0.02
            x1 = left + box_w / 2 + side * box_w * 0.22
            draw.polygon([(x0, legs_top), (x1, legs_top), (x1 + side * box_w * 0.05, bottom),
                          (x0 + side * box_w * 0.1, bottom)], fill=colour, outline=outline)
    else:
        head = half(box_w, box_h * 0.7, head_only=True)
        _centred(card, head, W / 2, H / 2)


def _joker_corners(card: PILImage.Image, recipe: _Recipe) -> None:
    px = ART_PX_PER_MM
    colour = recipe.red if recipe.rng.random() < 0.5 else recipe.black
    x, y = recipe.index_x_mm * px, recipe.index_y_mm * px
    sprites: list[tuple[PILImage.Image, float, float]] = []
    if recipe.joker_style == 0:  # the word, reading upwards, down the side
        sprites.append((_glyph("JOKER", recipe.rank_font, 4.5 * px, colour).rotate(
            90, expand=True), x, y))
    elif recipe.joker_style == 1:  # a star, sometimes over a small word
        star = _glyph(STAR, _motif_font(recipe), recipe.rank_mm * px, colour)
        sprites.append((star, x, y))
        if recipe.rng.random() < 0.5:
            word = _glyph("JOKER", recipe.rank_font, 2.5 * px, colour).rotate(90, expand=True)
            sprites.append((word, x + (star.width - word.width) / 2, y + star.height + px))
    elif recipe.joker_style == 2:  # the letters stacked
        sprites += _stacked("JOKER", [4.0] * 5, 0.0, recipe.rank_font, colour, x, y)
    elif recipe.joker_style == 3:  # the word across the top
        sprites.append((_glyph("JOKER", recipe.rank_font, recipe.rank_mm * 0.6 * px, colour),
                        x, y))
    elif recipe.joker_style == 4:  # the word, reading downwards, down the side
        sprites.append((_glyph("JOKER", recipe.rank_font, 4.5 * px, colour).rotate(
            -90, expand=True), x, y))
    elif recipe.joker_style == 5:  # "Joker" stacked in mixed case, the letters wandering
        sprites += _stacked("Joker", [4.5, 3.2, 3.2, 3.2, 3.2], 1.2, recipe.rank_font, colour,
                            x, y)
    elif recipe.joker_style == 6:  # a "J" as tall as a rank, "oker" stacked small below it
        letters = np.random.default_rng(recipe.joker_seed + 1)  # recipe.rng's draws stay
        small = recipe.rank_mm * float(letters.uniform(0.4, 0.6))
        sprites += _stacked("Joker", [recipe.rank_mm] + [small] * 4, 0.0, recipe.rank_font,
                            colour, x, y)
    else:  # a "J" as tall as a rank, "oker" small across the top beside it, wandering
        sprites += _across("Joker", recipe, colour, x, y)
    for sprite, sx, sy in sprites:
        _paste(card, sprite, sx, sy)
        if not recipe.joker_once:
            _paste(card, sprite, sx, sy, turned=True)


def _across(word: str, recipe: _Recipe, colour: tuple[int, int, int], x: float, y: float,
            ) -> list[tuple[PILImage.Image, float, float]]:
    """``word``'s first letter at (x, y), ``ACROSS_JOKER_MM`` tall (whatever the design's
    rank: these words are printed big), the others 0.4-0.65 of it beside it, each a little
    higher or lower than the one before (aisleriot tango_nuevo)."""
    px = ART_PX_PER_MM
    letters = np.random.default_rng(recipe.joker_seed + 2)  # recipe.rng's draws stay
    tall = float(letters.uniform(*ACROSS_JOKER_MM))
    first = _glyph(word[0], recipe.rank_font, tall * px, colour)
    sprites = [(first, x, y)]
    small = tall * float(letters.uniform(0.4, 0.65))
    left = x + first.width + float(letters.uniform(0.5, 2.0)) * px
    drop = tall - small  # how far the small letters may sit below the top
    for letter in word[1:]:
        glyph = _glyph(letter, recipe.rank_font, small * float(letters.uniform(0.85, 1.15)) * px,
                       colour)
        top = y + drop * float(letters.uniform(0.1, 0.9)) * px
        sprites.append((glyph, left, top))
        left += glyph.width + float(letters.uniform(0.3, 1.5)) * px
    return sprites


def _stacked(word: str, heights_mm: list[float], wander_mm: float, font: str,
             colour: tuple[int, int, int], x: float, y: float,
             ) -> list[tuple[PILImage.Image, float, float]]:
    """The letters of ``word`` one below the other from (x, y), each ``heights_mm`` tall,
    every second one ``wander_mm`` to the right."""
    px = ART_PX_PER_MM
    sprites = []
    top = y
    for number, (letter, height) in enumerate(zip(word, heights_mm, strict=True)):
        glyph = _glyph(letter, font, height * px, colour)
        sprites.append((glyph, x + (number % 2) * wander_mm * px, top))
        top += glyph.height + 0.8 * px
    return sprites


def _back(recipe: _Recipe) -> PILImage.Image:
    card = PILImage.new("RGBA", (W, H), (*recipe.paper, 255))
    draw = ImageDraw.Draw(card)
    inset = round(recipe.back_inset_mm * ART_PX_PER_MM)
    colour = (*recipe.back_colour, 255)
    draw.rectangle((inset, inset, W - inset, H - inset), fill=colour)
    light = (*recipe.paper, 255)
    if recipe.back_pattern >= FIRST_BACK_STYLES:
        _bold_back(card, recipe, inset)
        return card
    if recipe.back_pattern >= 4:
        _back_picture(card, recipe, inset)
        return card
    step = 14
    for k in range(-H, W + H, step):
        if recipe.back_pattern in (0, 2):
            draw.line((inset + k, inset, inset + k + H, inset + H), fill=light, width=2)
        if recipe.back_pattern in (1, 2):
            draw.line((inset + k, inset + H, inset + k + H, inset), fill=light, width=2)
    if recipe.back_pattern == 3:
        for yy in range(inset, H - inset, step):
            for xx in range(inset + (yy // step % 2) * step // 2, W - inset, step):
                draw.ellipse((xx, yy, xx + 5, yy + 5), fill=light)
    # Clear what the patterns drew on the margin.
    margin = PILImage.new("RGBA", (W, H), (*recipe.paper, 255))
    mask = PILImage.new("L", (W, H), 255)
    ImageDraw.Draw(mask).rectangle((inset, inset, W - inset, H - inset), fill=0)
    card.paste(margin, (0, 0), mask)
    return card


def _contrasting(ground: tuple[int, int, int], ink: tuple[int, int, int]) -> tuple[int, int, int]:
    """The ink, its value set dark on a light ground or light on a dark one where its grey
    lies within 70 levels of the ground's (hue and saturation kept, so a saturated ink may
    still lie close in grey; its colour tells it apart)."""
    grey = cv2.cvtColor(np.uint8([[ground, ink]]), cv2.COLOR_RGB2GRAY)[0].astype(int)
    if abs(grey[1] - grey[0]) >= 70:
        return ink
    hsv = cv2.cvtColor(np.uint8([[ink]]), cv2.COLOR_RGB2HSV)[0, 0]
    value = 40 if grey[0] >= 128 else 245
    return _hsv_rgb(float(hsv[0]), float(hsv[1]), value)


def _bold_back(card: PILImage.Image, recipe: _Recipe, inset: int) -> None:
    """Back styles 7-9 (recipes 8), printed to the edge: a lattice of lines with a shape in
    each cell, rosettes in rows, or two-tone checks, on a grid of repeat 5-18 mm turned by
    any angle (diamonds at 45 degrees; argyle when both axes slant) and sometimes drawn out
    along one axis."""
    rng = np.random.default_rng(recipe.back_seed)
    ground = recipe.back_colour
    ink = (*_contrasting(ground, recipe.back_second), 255)
    third = (*_contrasting(ground, _hsv_rgb(rng.uniform(0, 180), rng.uniform(0, 230),
                                             rng.uniform(60, 250))), 255)
    px = ART_PX_PER_MM
    repeat = float(rng.uniform(*BOLD_BACK_REPEAT_MM)) * px
    angle = np.radians(45.0 if rng.random() < 0.5 else float(rng.uniform(0, 90)))
    stretch = 1.0 if rng.random() < 0.6 else float(rng.uniform(1.2, 2.0))
    u = repeat * np.array([np.cos(angle), np.sin(angle)])
    v = repeat * stretch * np.array([-np.sin(angle), np.cos(angle)])
    if recipe.back_pattern == 7 and rng.random() < 0.5:  # argyle: both axes slanted
        slant = np.radians(float(rng.uniform(30, 60)))
        u = repeat * np.array([np.cos(slant), np.sin(slant)])
        v = repeat * stretch * np.array([-np.cos(slant), np.sin(slant)])
    pattern = PILImage.new("RGBA", (W, H), (*ground, 255))
    draw = ImageDraw.Draw(pattern)
    origin = np.array([W / 2, H / 2]) + rng.uniform(0, 1, 2) * repeat
    reach = int(np.ceil(np.hypot(W, H) / (0.5 * repeat))) + 2  # cells enough to cover the card
    cells = [(i, j) for i in range(-reach, reach + 1) for j in range(-reach, reach + 1)]

    def at(i: float, j: float) -> np.ndarray:
        return origin + i * u + j * v

    def visible(point: np.ndarray) -> bool:
        return bool(-repeat * 2 <= point[0] <= W + repeat * 2
                    and -repeat * 2 <= point[1] <= H + repeat * 2)

    if recipe.back_pattern == 9:  # two-tone checks, sometimes with a line round each
        lined = rng.random() < 0.4
        for i, j in cells:
            corner = at(i, j)
            if not visible(corner):
                continue
            quad = [tuple(corner), tuple(corner + u), tuple(corner + u + v), tuple(corner + v)]
            draw.polygon(quad, fill=ink if (i + j) % 2 == 0 else (*ground, 255),
                         outline=third if lined else None)
    elif recipe.back_pattern == 7:  # a lattice of lines, a shape in each cell
        width = max(1, round(float(rng.uniform(0.2, 1.2)) * px))
        shape = int(rng.integers(3))  # the cell's own shape, a disc, a small diamond
        share = float(rng.uniform(0.3, 0.7))
        for i, j in cells:
            centre = at(i + 0.5, j + 0.5)
            if not visible(centre):
                continue
            if shape == 0:
                quad = [tuple(centre + share * (d * u + e * v) / 2)
                        for d, e in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
                draw.polygon(quad, fill=third)
            elif shape == 1:
                r = share * repeat / 2
                draw.ellipse((centre[0] - r, centre[1] - r, centre[0] + r, centre[1] + r),
                             fill=third)
            else:
                r = share * repeat / 2
                draw.polygon([(centre[0], centre[1] - r), (centre[0] + r * 0.7, centre[1]),
                              (centre[0], centre[1] + r), (centre[0] - r * 0.7, centre[1])],
                             fill=third)
        for k in range(-reach, reach + 1):
            draw.line((*at(k, -reach), *at(k, reach)), fill=ink, width=width)
            draw.line((*at(-reach, k), *at(reach, k)), fill=ink, width=width)
    else:  # rosettes in rows: stars or spokes, in some designs a ring round each
        points = int(rng.choice([4, 6, 8, 12]))
        inner = float(rng.uniform(0.2, 0.55))
        ring = rng.random() < 0.5
        spokes = rng.random() < 0.4
        width = max(1, round(float(rng.uniform(0.3, 1.0)) * px))
        r = 0.45 * repeat
        for i, j in cells:
            centre = at(i, j) + (u / 2 if j % 2 else 0)  # every other row half a step on
            if not visible(centre):
                continue
            turns = np.arange(2 * points) * np.pi / points + angle
            radii = np.where(np.arange(2 * points) % 2 == 0, r, r * inner)
            star = [tuple(centre + rad * np.array([np.cos(t), np.sin(t)]))
                    for t, rad in zip(turns, radii, strict=True)]
            if spokes:
                for t in turns[::2]:
                    tip = centre + r * np.array([np.cos(t), np.sin(t)])
                    draw.line((*centre, *tip), fill=ink, width=width)
            else:
                draw.polygon(star, fill=ink)
            dot = r * inner * 0.6
            draw.ellipse((centre[0] - dot, centre[1] - dot, centre[0] + dot, centre[1] + dot),
                         fill=third)
            if ring:
                draw.ellipse((centre[0] - r, centre[1] - r, centre[0] + r, centre[1] + r),
                             outline=third, width=width)
    clip = PILImage.new("L", (W, H), 0)
    ImageDraw.Draw(clip).rectangle((inset, inset, W - inset, H - inset), fill=255)
    card.paste(pattern, (0, 0), clip)
    if inset and rng.random() < 0.5:  # a thin frame where the print meets the margin
        ImageDraw.Draw(card).rectangle((inset, inset, W - inset, H - inset), outline=ink,
                                       width=max(1, round(0.4 * px)))


def _motif_font(recipe: _Recipe) -> str:
    """A font with the stars and ornaments of MOTIFS (Symbola), else the suit font."""
    symbola = [f for f in _symbol_fonts() if "Symbola" in f]
    return symbola[0] if symbola else recipe.suit_font


def _back_picture(card: PILImage.Image, recipe: _Recipe, inset: int) -> None:
    """Back styles 4-6 inside the margin: a photo or texture, a tiled motif, an emblem."""
    from synth.surfaces import load_surface, surface_files  # only backs need textures

    rng = np.random.default_rng(recipe.back_seed)
    box = (inset, inset, W - inset, H - inset)
    size = (box[2] - box[0], box[3] - box[1])
    draw = ImageDraw.Draw(card)
    second = (*recipe.back_second, 255)
    files = surface_files()
    if recipe.back_pattern == 4 and files:
        picture = load_surface(files[int(rng.integers(len(files)))])
        if picture is not None:
            h, w = picture.shape[:2]
            cut = min(h, w, max(size) * 3)
            y0, x0 = int(rng.integers(h - cut + 1)), int(rng.integers(w - cut + 1))
            part = cv2.resize(picture[y0:y0 + cut, x0:x0 + cut], size,
                              interpolation=cv2.INTER_AREA)
            sprite = PILImage.fromarray(cv2.cvtColor(part, cv2.COLOR_BGR2RGB)).convert("RGBA")
            card.alpha_composite(sprite, (box[0], box[1]))
            return
    if recipe.back_pattern == 5:
        motif = _glyph(MOTIFS[int(rng.integers(len(MOTIFS)))], _motif_font(recipe),
                       float(rng.uniform(3, 9)) * ART_PX_PER_MM, recipe.back_second)
        step_x, step_y = motif.width * rng.uniform(1.3, 2.2), motif.height * rng.uniform(1.3, 2.2)
        tile = PILImage.new("RGBA", (W, H), (0, 0, 0, 0))
        row = 0
        y = box[1] - motif.height / 2
        while y < box[3]:
            x = box[0] - motif.width / 2 + (step_x / 2 if row % 2 else 0)
            while x < box[2]:
                tile.alpha_composite(motif, (round(x), round(y)))
                x += step_x
            y += step_y
            row += 1
        clip = PILImage.new("L", (W, H), 0)
        ImageDraw.Draw(clip).rectangle(box, fill=255)
        card.paste(tile, (0, 0), PILImage.composite(tile.getchannel("A"), clip, clip))
        return
    # An emblem: a ring, diamond or glyph in the middle, a frame inside the edge.
    frame = round(rng.uniform(1.5, 4) * ART_PX_PER_MM)
    draw.rectangle((box[0] + frame, box[1] + frame, box[2] - frame, box[3] - frame),
                   outline=second, width=max(2, frame // 3))
    r = min(size) * rng.uniform(0.2, 0.38)
    cx, cy = W / 2, H / 2
    kind = int(rng.integers(3))
    if kind == 0:
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), outline=second, width=max(3, round(r / 6)))
    elif kind == 1:
        draw.polygon([(cx, cy - r * 1.3), (cx + r, cy), (cx, cy + r * 1.3), (cx - r, cy)],
                     fill=second)
    else:
        glyph = _glyph(MOTIFS[int(rng.integers(len(MOTIFS)))], _motif_font(recipe), 2 * r,
                       recipe.back_second)
        _centred(card, glyph, cx, cy)


def _rounded(card: PILImage.Image) -> np.ndarray:
    """BGRA array with the card's rounded corners transparent (3 mm radius)."""
    mask = PILImage.new("L", (W, H), 0)
    ImageDraw.Draw(mask).rounded_rectangle((0, 0, W - 1, H - 1),
                                           radius=round(3 * ART_PX_PER_MM), fill=255)
    rgba = np.asarray(card.convert("RGBA")).copy()
    rgba[..., 3] = np.minimum(rgba[..., 3], np.asarray(mask))
    return np.asarray(cv2.cvtColor(rgba, cv2.COLOR_RGBA2BGRA), dtype=np.uint8)


@cache
def _bleeds(index: int) -> bool:
    return _Recipe(index).bleed


def turned_index_hidden(deck: str, code: str) -> bool:
    """Whether the card's turned (bottom-right) index lies under a giant pip running off
    the card (recipes 6), or is not printed (a joker of recipes 7 writing its word only at
    the top): that corner shows the pip or the picture, so it is no sample of the index."""
    if not is_procedural(deck) or code == "back":
        return False
    if code == "JK":
        return _Recipe(int(deck.removeprefix(PREFIX))).joker_once
    rank = Card.parse(code).rank
    return rank <= 10 and _bleeds(int(deck.removeprefix(PREFIX)))


def rasterise_procedural(deck: str) -> dict[str, Path]:
    """PNG paths of a procedural deck's 52 cards, joker and back (cached)."""
    index = int(deck.removeprefix(PREFIX))
    folder = cache_dir() / f"{deck.replace(':', '__')}.v{RECIPE_VERSION}"
    codes = [*(str(c) for c in STANDARD_DECK), "JK", "back"]
    paths = {code: folder / f"{code}.png" for code in codes}
    if (folder / ".complete").exists():
        return paths
    folder.mkdir(parents=True, exist_ok=True)
    recipe = _Recipe(index)
    for code in codes:
        card = _back(recipe) if code == "back" else _face(recipe, code)
        # Written whole, then renamed: export workers drawing the same design at once (a
        # cold cache) never read one another's half-written file.
        partial = paths[code].with_name(f".{code}.{os.getpid()}.png")
        cv2.imwrite(str(partial), _rounded(card))
        os.replace(partial, paths[code])
    (folder / ".complete").touch()
    return paths
