"""Printed matter cards are photographed on and beside: newspaper and magazine pages, book
pages with a photograph, supermarket flyers, boxes and covers.

Real print is what the detector mistook for cards (session 46: a flyer read as a back and a
joker, a portrait in a book, a game box), so it is drawn the way it is printed: body text in
real typefaces (the procedural decks' own, from ``fc-list``), headlines, coloured bands and
price badges, and photographs of people, animals and things from packages the project
installs (scikit-image's sample photos, MATE's background photos and abstracts) besides the table
textures. A photograph is often card-shaped, framed by a white margin: the hardest thing
to tell from a card, so the detector must see many."""

from __future__ import annotations

import importlib.util
import re
from functools import lru_cache
from pathlib import Path
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt
from PIL import Image as PILImage
from PIL import ImageDraw, ImageFont

from synth.surfaces import load_surface, surface_files

Image = npt.NDArray[np.uint8]
PRINT_PX_PER_MM: Final = 3.0  # printed matter is large: drawn below the sprite scale

#: The MATE background package's photographs, and its abstracts (Flow, Gulp: graphics like
#: a flyer's), from scripts/install-system-deps.sh.
_PHOTO_DIRS: Final = (Path("/usr/share/backgrounds/mate/nature"),
                      Path("/usr/share/backgrounds/mate/abstract"))
#: Pictures there that are no photograph: see-through drawings, which read as blank white.
_NOT_PHOTOS: Final = ("Arc-Colors-Transparent-Wallpaper", "Silk", "Spring", "Waves")
#: scikit-image's bundled sample photographs (the ``synth`` extra): people, a cat, a cup of
#: coffee, a rocket, a motorcycle, coins, the moon, a galaxy field, a retina, a stained
#: tissue (not ``color.png``, a drawn colour wheel).
_SKIMAGE_PHOTOS: Final = ("astronaut.png", "camera.png", "chelsea.png", "coffee.png",
                          "rocket.jpg", "motorcycle_left.png", "coins.png", "moon.png",
                          "hubble_deep_field.jpg", "ihc.png", "retina.jpg")
_WORDS: Final = (
    "the", "game", "shocked", "and", "news", "table", "cards", "play", "world", "report",
    "city", "new", "win", "best", "score", "home", "edition", "sale", "of", "to", "in", "a",
    "for", "with", "was", "said", "year", "people", "first", "council", "school", "market",
    "week", "after", "team", "police", "music", "fresh", "family", "night", "story", "water",
    "Tuesday", "March", "President", "Street", "County", "Sunday", "2016", "12", "$3.99")
_SHOUTS: Final = ("SALE", "SAVE", "FRESH", "NEW", "FREE", "DEAL", "WIN", "OFFER", "HOT",
                  "TODAY", "ONLY", "OPEN", "BEST", "MENU", "NEWS", "GAMES", "KIDS")


@lru_cache(maxsize=1)
def photo_files() -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """The photographs printed matter shows (those installed), in a fixed order:
    scikit-image's sample photos, then MATE's backgrounds. A picture comes from the first
    40% of the time, the second 40%, the table textures (``surface_files``) 20%."""
    samples: list[Path] = []
    spec = importlib.util.find_spec("skimage")
    if spec is not None and spec.submodule_search_locations:
        data = Path(next(iter(spec.submodule_search_locations))) / "data"
        samples = [data / name for name in _SKIMAGE_PHOTOS if (data / name).is_file()]
    backgrounds: list[Path] = []
    for folder in _PHOTO_DIRS:
        if folder.is_dir():  # one size of each (Elephants_3840x2160.jpg is Elephants.jpg)
            backgrounds += sorted(p for p in folder.iterdir()
                                  if p.suffix.lower() in (".jpg", ".jpeg", ".png")
                                  and not re.search(r"_\d+x\d+$", p.stem)
                                  and p.stem not in _NOT_PHOTOS)
    return tuple(samples), tuple(backgrounds)


@lru_cache(maxsize=12)
def _photo(path: Path) -> Image | None:
    return load_surface(path)  # BGR, grey photos too (cv2.imread's default)


@lru_cache(maxsize=1)
def _typefaces() -> tuple[str, ...]:
    from synth.procedural import _fonts  # the decks' typefaces (fc-list, sorted)

    return tuple(_fonts()[0])


@lru_cache(maxsize=256)
def _font(path: str, px: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(path, max(4, px))


def _picture(rng: np.random.Generator, width: int, height: int) -> Image:
    """A photograph cut to ``width`` x ``height``: a random window of a random photo,
    its colour and brightness shifted a little, now and then in black and white."""
    groups = [*photo_files(), surface_files()]
    files = groups[int(rng.choice(3, p=[0.4, 0.4, 0.2]))]
    files = files or next((g for g in groups if g), ())
    photo = _photo(files[int(rng.integers(len(files)))]) if files else None
    if photo is None:
        photo = np.full((64, 64, 3), rng.integers(0, 255, 3), np.uint8)
    ph, pw = photo.shape[:2]
    aspect = width / max(height, 1)
    scale = float(rng.uniform(0.35, 1.0))
    cw = min(pw, max(8, int(min(pw, ph * aspect) * scale)))
    ch = min(ph, max(8, int(cw / aspect)))
    x0 = int(rng.integers(0, pw - cw + 1))
    y0 = int(rng.integers(0, ph - ch + 1))
    crop = cv2.resize(photo[y0:y0 + ch, x0:x0 + cw], (width, height),
                      interpolation=cv2.INTER_AREA)
    if rng.random() < 0.5:
        crop = crop[:, ::-1]
    crop = crop.astype(np.float32) * rng.uniform(0.8, 1.15, 3) + float(rng.uniform(-20, 20))
    if rng.random() < 0.2:
        crop[:] = crop.mean(axis=2, keepdims=True)
    return np.ascontiguousarray(np.clip(crop, 0, 255).astype(np.uint8))


def _words(rng: np.random.Generator, n: int) -> str:
    return " ".join(str(w) for w in rng.choice(_WORDS, size=n))


def _body(draw: ImageDraw.ImageDraw, rng: np.random.Generator, box: tuple[int, int, int, int],
          font_path: str, size_px: int, ink: tuple[int, int, int],
          skip: list[tuple[int, int, int, int]]) -> None:
    """Lines of text filling ``box`` (x0, y0, x1, y1), clear of the ``skip`` boxes."""
    font = _font(font_path, size_px)
    x0, y0, x1, y1 = box
    step = max(3, int(size_px * rng.uniform(1.15, 1.4)))
    for y in range(y0, y1 - size_px, step):
        if any(sx0 - 2 <= x1 and x0 <= sx1 + 2 and sy0 - step <= y <= sy1 for sx0, sy0, sx1, sy1
               in skip):
            continue
        text = _words(rng, 12)
        while text and draw.textlength(text, font=font) > x1 - x0:
            text = text.rsplit(" ", 1)[0] if " " in text else ""
        draw.text((x0, y), text, fill=ink, font=font)


def _colour(rng: np.random.Generator, low: int = 0, high: int = 256) -> tuple[int, int, int]:
    r, g, b = (int(c) for c in rng.integers(low, high, 3))
    return r, g, b


KINDS: Final = ("newspaper", "book", "flyer", "cover")


def print_sprite_apart(rng: np.random.Generator) -> Image:
    """A ``print_sprite`` drawn from a stream of its own, seeded by one draw of ``rng``: how
    printed matter is drawn does not change what ``rng`` draws after it (session 47)."""
    return print_sprite(np.random.default_rng(int(rng.integers(2**63))))


def print_sprite(rng: np.random.Generator, kind: str | None = None) -> Image:
    """One piece of printed matter as an opaque BGRA sprite at ``PRINT_PX_PER_MM``,
    110-260 mm wide and 140-300 mm tall: a newspaper page, a book or magazine page, a
    flyer, or a box or cover (``kind``, one of ``KINDS``; drawn at random unless given,
    and drawn from the stream either way)."""
    if kind is not None and kind not in KINDS:
        raise ValueError(f"no printed matter of kind {kind!r}: one of {', '.join(KINDS)}")
    px = PRINT_PX_PER_MM
    w, h = int(rng.uniform(110, 260) * px), int(rng.uniform(140, 300) * px)
    drawn = str(rng.choice(KINDS, p=[0.3, 0.25, 0.25, 0.2]))
    kind = kind or drawn
    fonts = _typefaces()
    text_face = fonts[int(rng.integers(len(fonts)))]
    display = fonts[int(rng.integers(len(fonts)))]
    grey = int(rng.integers(215, 250))
    paper = (grey, grey, grey) if kind == "newspaper" else _colour(rng, 225)
    ground = _colour(rng) if kind == "cover" or (kind == "flyer" and rng.random() < 0.4) \
        else paper
    ink = _colour(rng, 5, 60)
    margin = int(rng.uniform(4, 14) * px)
    image = PILImage.new("RGB", (w, h), ground)
    draw = ImageDraw.Draw(image)
    blocks: list[tuple[int, int, int, int]] = []

    def place(pw: int, ph: int, x: int, y: int) -> None:
        pw, ph = max(8, min(pw, w - x)), max(8, min(ph, h - y))  # a cover's may touch the edges
        image.paste(PILImage.fromarray(_picture(rng, pw, ph)[:, :, ::-1]), (x, y))
        blocks.append((x, y, x + pw, y + ph))

    def anywhere(pw: int, ph: int, top: int = 0, edge: int = 0) -> None:
        # shrunk as a whole (its shape kept) to fit between the margins and below ``top``
        fit = min(1.0, (w - 2 * edge) / max(pw, 1), (h - top - edge) / max(ph, 1))
        pw, ph = max(8, int(pw * fit)), max(8, int(ph * fit))
        place(pw, ph, int(rng.integers(edge, max(edge + 1, w - pw - edge))),
              int(rng.integers(top, max(top + 1, h - ph - edge))))

    if kind == "flyer":
        for _ in range(int(rng.integers(1, 4))):
            y0 = int(rng.integers(0, h))
            draw.rectangle((0, y0, w, y0 + int(rng.uniform(10, 40) * px)), fill=_colour(rng))
    if kind == "cover":
        border = int(rng.uniform(0, 10) * px) if rng.random() < 0.5 else 0
        place(w - 2 * border, h - 2 * border, border, border)
    elif kind == "newspaper":
        for _ in range(int(rng.integers(0, 3))):
            pw = int(w * rng.uniform(0.3, 0.7))
            # below the masthead (at most 20 mm of type, 1.4 line, a rule, the margin)
            anywhere(pw, int(pw * rng.uniform(0.55, 1.4)), top=int(48 * px), edge=margin)
    elif kind == "book" and rng.random() < 0.7:  # a photograph, often card-shaped
        pw = int(w * rng.uniform(0.3, 0.65))
        anywhere(pw, int(pw * (rng.uniform(1.0, 1.6) if rng.random() < 0.6 else 0.7)),
                 top=margin, edge=margin)
    elif kind == "flyer":  # photographs of goods
        for _ in range(int(rng.integers(1, 5))):
            pw = int(w * rng.uniform(0.25, 0.6))
            anywhere(pw, int(pw * rng.uniform(0.6, 1.3)))
    if kind in ("newspaper", "book"):
        columns = int(rng.integers(2, 6)) if kind == "newspaper" else 1
        top = margin
        if kind == "newspaper" or rng.random() < 0.4:  # a masthead or a chapter's title
            size = int(rng.uniform(8, 20) * px)
            draw.text((margin, top), _words(rng, 3).title(), fill=ink, font=_font(display, size))
            top += int(size * 1.4)
            if kind == "newspaper":
                draw.line((margin, top, w - margin, top), fill=ink, width=max(1, int(px)))
                top += int(3 * px)
        gap = int(4 * px)
        col_w = (w - 2 * margin - gap * (columns - 1)) // columns
        size = int(rng.uniform(2.6, 4.2) * px)
        for c in range(columns):
            x0 = margin + c * (col_w + gap)
            _body(draw, rng, (x0, top, x0 + col_w, h - margin), text_face, size, ink, blocks)
    else:  # titles and shouted words, over the pictures too
        for _ in range(int(rng.integers(1, 4))):
            size = int(rng.uniform(8, 30) * px)
            text = str(rng.choice(_SHOUTS)) if rng.random() < 0.5 else _words(rng, 2).upper()
            at = (int(rng.integers(0, max(1, w // 2))), int(rng.integers(0, max(1, h - size))))
            draw.text(at, text, fill=_colour(rng), font=_font(display, size))
        if kind == "flyer" and rng.random() < 0.7:  # a price badge
            r = int(rng.uniform(10, 25) * px)
            cx = int(rng.integers(r, max(r + 1, w - r)))
            cy = int(rng.integers(r, max(r + 1, h - r)))
            draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=_colour(rng))
            draw.text((cx - r * 0.7, cy - r * 0.4), f"${int(rng.integers(1, 20))}.99",
                      fill=(255, 255, 255), font=_font(display, int(r * 0.7)))
    rgb = np.asarray(image, dtype=np.uint8)
    alpha = np.full((h, w, 1), 255, np.uint8)
    return np.ascontiguousarray(np.concatenate([rgb[:, :, ::-1], alpha], axis=2))
