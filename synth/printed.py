"""Card-sized patches of things that are not cards, for the card verifier to learn from.

Real photos of cards show flyers, book covers and pages, letters, boxes, plastic grids and
floor tiles beside them, and the detector outlines card-sized pieces of them; the verifier,
trained only on what the detector outlines in rendered scenes (few such things), called
most of them cards (models/README.md, ``card_verifier``, third run). ``patch`` draws one
such thing, edge to edge: text in this machine's fonts (big bold headlines, columns of
small print), blocks of flat colour, photographs (the table textures), grids and tiles.
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np
import numpy.typing as npt
from PIL import Image as PILImage
from PIL import ImageDraw, ImageFont

from synth.procedural import _fonts
from synth.surfaces import load_surface, surface_files, table_surface

Image = npt.NDArray[np.uint8]
KINDS: Final = ("flyer", "page", "cover", "grid", "surface")
_WORDS: Final = ("the", "game", "save", "on", "and", "news", "table", "oil", "change", "world",
                 "report", "city", "new", "win", "best", "free", "home", "edition", "sale",
                 "cookies", "chocolate", "dear", "sincerely", "of", "you", "with", "over",
                 "$10", "off", "50%", "only", "today", "book", "love", "story", "recipe")


def _colour(rng: np.random.Generator, low: int = 0, high: int = 256) -> tuple[int, int, int]:
    return tuple(int(c) for c in rng.integers(low, high, 3))  # type: ignore[return-value]


def _text_font(rng: np.random.Generator, size: int) -> ImageFont.FreeTypeFont:
    fonts, _ = _fonts()
    return ImageFont.truetype(fonts[int(rng.integers(len(fonts)))], max(6, size))


def _words(rng: np.random.Generator, count: int) -> str:
    return " ".join(str(w) for w in rng.choice(_WORDS, size=count))


def _photo(rng: np.random.Generator, size: tuple[int, int]) -> Image:
    """A picture: one of the table textures, tinted, or a blur of colour."""
    width, height = size
    files = surface_files()
    if files and rng.random() < 0.7:
        picture = load_surface(files[int(rng.integers(len(files)))])
        if picture is not None:
            out = cv2.resize(picture, (width, height), interpolation=cv2.INTER_AREA)
            tint = rng.uniform(0.6, 1.4, 3)
            return np.asarray(np.clip(out * tint, 0, 255), np.uint8)
    small = rng.integers(0, 256, (3, 3, 3)).astype(np.uint8)
    return np.asarray(cv2.resize(small, (width, height), interpolation=cv2.INTER_CUBIC),
                      np.uint8)


def _headline(draw: ImageDraw.ImageDraw, rng: np.random.Generator, box: tuple[int, int, int, int],
              colour: tuple[int, int, int]) -> None:
    x0, y0, x1, y1 = box
    size = int(rng.uniform(0.08, 0.3) * (x1 - x0))
    font = _text_font(rng, size)
    y = y0
    while y + size < y1 and rng.random() < 0.8:
        text = _words(rng, int(rng.integers(1, 4)))
        if rng.random() < 0.5:
            text = text.upper()
        draw.text((x0 + int(rng.integers(0, max(1, (x1 - x0) // 4))), y), text, font=font,
                  fill=colour)
        y += int(size * rng.uniform(1.0, 1.5))


def _small_print(draw: ImageDraw.ImageDraw, rng: np.random.Generator,
                 box: tuple[int, int, int, int], colour: tuple[int, int, int]) -> None:
    x0, y0, x1, y1 = box
    size = int(rng.integers(7, 16))
    font = _text_font(rng, size)
    columns = int(rng.integers(1, 4))
    gap = size
    width = max(1, (x1 - x0 - gap * (columns - 1)) // columns)
    line = int(size * rng.uniform(1.15, 1.6))
    for c in range(columns):
        left = x0 + c * (width + gap)
        for y in range(y0, y1 - size, line):
            text = _words(rng, 12)
            draw.text((left, y), text[:max(1, width * 2 // size)], font=font, fill=colour)


def patch(rng: np.random.Generator, size: tuple[int, int] = (480, 480),
          kind: str | None = None) -> Image:
    """One thing that is not a card, filling a BGR image of ``size`` (width, height)."""
    kind = kind or str(rng.choice(KINDS))
    width, height = size
    if kind == "surface":
        return table_surface(rng, (width, height), float(rng.uniform(1.0, 4.0)))
    if kind == "grid":
        out = np.full((height, width, 3), _colour(rng), np.uint8)
        step = int(rng.uniform(0.05, 0.25) * width)
        line = max(1, int(step * rng.uniform(0.05, 0.5)))
        ink = _colour(rng)
        for x in range(int(rng.integers(0, step)), width, step):
            cv2.line(out, (x, 0), (x, height), ink, line)
        for y in range(int(rng.integers(0, step)), height, step):
            cv2.line(out, (0, y), (width, y), ink, line)
        return out
    paper = _colour(rng, 215, 256) if kind in ("page", "flyer") else _colour(rng)
    image = PILImage.new("RGB", (width, height), paper)
    draw = ImageDraw.Draw(image)
    if kind == "page":  # a book page, a letter, a newspaper: small print, maybe a picture
        ink = _colour(rng, 0, 70)
        if rng.random() < 0.4:
            _headline(draw, rng, (10, 10, width - 10, height // 4), ink)
        _small_print(draw, rng, (10, height // 4 if rng.random() < 0.5 else 10,
                                 width - 10, height - 10), ink)
        if rng.random() < 0.4:
            pw, ph = int(width * rng.uniform(0.3, 0.7)), int(height * rng.uniform(0.2, 0.5))
            x, y = int(rng.integers(0, width - pw)), int(rng.integers(0, height - ph))
            image.paste(PILImage.fromarray(_photo(rng, (pw, ph))[:, :, ::-1]), (x, y))
    else:  # a flyer, a box or a cover: blocks of colour, pictures, big words
        for _ in range(int(rng.integers(1, 5))):
            bw, bh = int(width * rng.uniform(0.2, 1.0)), int(height * rng.uniform(0.1, 0.6))
            x, y = int(rng.integers(0, width - bw + 1)), int(rng.integers(0, height - bh + 1))
            if rng.random() < 0.5:
                image.paste(PILImage.fromarray(_photo(rng, (bw, bh))[:, :, ::-1]), (x, y))
            else:
                draw.rectangle((x, y, x + bw, y + bh), fill=_colour(rng))
        if rng.random() < 0.4:  # a logo: a disc or a triangle
            r = int(width * rng.uniform(0.05, 0.2))
            cx, cy = int(rng.integers(0, width)), int(rng.integers(0, height))
            if rng.random() < 0.5:
                draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=_colour(rng))
            else:
                draw.polygon([(cx, cy - r), (cx + r, cy + r), (cx - r, cy + r)],
                             fill=_colour(rng))
        for _ in range(int(rng.integers(1, 4))):
            x0, y0 = int(rng.integers(0, width // 2)), int(rng.integers(0, height - 20))
            _headline(draw, rng, (x0, y0, width, height), _colour(rng))
        if rng.random() < 0.5:
            _small_print(draw, rng, (10, int(height * rng.uniform(0.5, 0.9)), width - 10,
                                     height - 5), _colour(rng, 0, 90))
    return np.ascontiguousarray(np.asarray(image)[:, :, ::-1])
