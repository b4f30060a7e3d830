"""Sprites for everything on the table that is not a card: piecepack coins, Shove tokens,
a d4, and distractors. Each sprite is RGBA at ``SPRITE_PX_PER_MM`` with its centre at the
image centre."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt
from PIL import Image as PILImage
from PIL import ImageDraw, ImageFont

Image = npt.NDArray[np.uint8]
SPRITE_PX_PER_MM: Final = 4.0
COIN_MM: Final = 19.0
TOKEN_MM: Final = 20.0
#: Piecepack suits and the glyphs that print them (Symbola has all four).
SUIT_GLYPHS: Final = {"suns": "\u2600", "moons": "\u263e", "crowns": "\u265b", "arms": "\u2694"}
COIN_VALUES: Final = ("n", "a", "2", "3", "4", "5")
_FONT_PATHS: Final = (
    Path("/usr/share/fonts/truetype/ancient-scripts/Symbola_hint.ttf"),
    Path("/usr/share/fonts/truetype/ancient-scripts/Symbola.ttf"),
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"),
)


def _font(size_px: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    for path in _FONT_PATHS:
        if path.exists():
            return ImageFont.truetype(str(path), size_px)
    return ImageFont.load_default()


def _disc_alpha(diameter_px: int) -> Image:
    alpha = np.zeros((diameter_px, diameter_px), np.uint8)
    r = diameter_px / 2
    cv2.circle(alpha, (int(r * 16), int(r * 16)), int((r - 0.5) * 16), 255, -1, cv2.LINE_AA,
               shift=4)
    return alpha


def _shade_disc(rgb: npt.NDArray[np.float32], strength: float) -> npt.NDArray[np.float32]:
    """A soft highlight towards the top-left, as on a slightly domed piece."""
    size = rgb.shape[0]
    ys, xs = np.mgrid[0:size, 0:size].astype(np.float32) / size
    light = 1 + strength * (0.5 - np.sqrt((xs - 0.35) ** 2 + (ys - 0.35) ** 2))
    return rgb * light[..., None]


@lru_cache(maxsize=256)
def coin_sprite(face: str, colour: tuple[int, int, int], ink: tuple[int, int, int]) -> Image:
    """A 19 mm piecepack coin showing a suit glyph (face in SUIT_GLYPHS) or a value."""
    size = round(COIN_MM * SPRITE_PX_PER_MM)
    canvas = PILImage.new("RGB", (size, size), colour[::-1])
    draw = ImageDraw.Draw(canvas)
    text = SUIT_GLYPHS.get(face, face)
    font = _font(int(size * (0.62 if face in SUIT_GLYPHS else 0.58)))
    box = draw.textbbox((0, 0), text, font=font)
    draw.text(((size - (box[2] - box[0])) / 2 - box[0], (size - (box[3] - box[1])) / 2 - box[1]),
              text, fill=ink[::-1], font=font)
    rim = int(size * 0.06)
    draw.ellipse((rim, rim, size - rim - 1, size - rim - 1), outline=ink[::-1], width=2)
    rgb = np.asarray(canvas, dtype=np.float32)[:, :, ::-1]
    rgb = _shade_disc(rgb, 0.25)
    sprite = np.dstack([np.clip(rgb, 0, 255).astype(np.uint8), _disc_alpha(size)])
    return np.asarray(sprite, dtype=np.uint8)


@lru_cache(maxsize=16)
def token_sprite(colour: str, shade: float = 1.0) -> Image:
    """A red or blue Shove token: a glossy plastic disc."""
    size = round(TOKEN_MM * SPRITE_PX_PER_MM)
    base = {"red": (40, 40, 200), "blue": (190, 90, 30)}[colour]
    rgb = np.ones((size, size, 3), np.float32) * np.array(base, np.float32) * shade
    rgb = _shade_disc(rgb, 0.6)
    edge = _disc_alpha(size).astype(np.float32) / 255
    inner = cv2.erode(edge, np.ones((5, 5), np.uint8))
    rgb *= (0.75 + 0.25 * inner)[..., None]
    return np.dstack([np.clip(rgb, 0, 255).astype(np.uint8), _disc_alpha(size)])


@lru_cache(maxsize=8)
def d4_sprite(value: int) -> Image:
    """A four-sided die seen from above: a triangle with the rolled number at a corner."""
    size = round(20 * SPRITE_PX_PER_MM)
    canvas = PILImage.new("RGBA", (size, size), (0, 0, 0, 0))
    draw = ImageDraw.Draw(canvas)
    points = [(size / 2, 2), (size - 2, size - 6), (2, size - 6)]
    draw.polygon(points, fill=(235, 225, 210, 255), outline=(90, 80, 70, 255))
    draw.line([points[0], (size / 2, size * 0.62)], fill=(170, 160, 150, 255), width=2)
    draw.line([points[1], (size / 2, size * 0.62)], fill=(170, 160, 150, 255), width=2)
    draw.line([points[2], (size / 2, size * 0.62)], fill=(170, 160, 150, 255), width=2)
    font = _font(int(size * 0.22))
    draw.text((size / 2 - size * 0.06, size * 0.12), str(value), fill=(20, 20, 20, 255), font=font)
    rgba = np.asarray(canvas, dtype=np.uint8)
    return np.ascontiguousarray(np.dstack([rgba[:, :, 2::-1], rgba[:, :, 3]]))


def distractor_sprite(rng: np.random.Generator) -> Image:
    """Something else lying on a table: a pen, a phone, a coin, a note, a bottle cap."""
    kind = rng.choice(["pen", "phone", "coin", "note", "cap"])
    px = SPRITE_PX_PER_MM
    if kind == "pen":
        w, h = int(140 * px), int(10 * px)
    elif kind == "phone":
        w, h = int(72 * px), int(150 * px)
    elif kind == "note":
        w, h = int(rng.uniform(70, 120) * px), int(rng.uniform(70, 100) * px)
    else:
        w = h = int((rng.uniform(18, 28) if kind == "coin" else 30) * px)
    rgba = np.zeros((h, w, 4), np.uint8)
    colour = tuple(int(c) for c in rng.integers(20, 235, 3))
    if kind in ("coin", "cap"):
        cv2.circle(rgba, (w // 2, h // 2), w // 2 - 1, (*colour, 255), -1, cv2.LINE_AA)
        cv2.circle(rgba, (w // 2, h // 2), int(w * 0.4), (*(c // 2 for c in colour), 255), 2,
                   cv2.LINE_AA)
    elif kind == "note":
        rgba[:, :] = (*(int(c) for c in rng.integers(190, 255, 3)), 255)
        for y in range(int(8 * px), h, int(7 * px)):
            cv2.line(rgba, (4, y), (w - 4, y), (150, 120, 110, 255), 1, cv2.LINE_AA)
    else:
        radius = int(min(w, h) * 0.3)
        cv2.rectangle(rgba, (radius, 0), (w - radius, h), (*colour, 255), -1)
        cv2.rectangle(rgba, (0, radius), (w, h - radius), (*colour, 255), -1)
        for cx in (radius, w - radius - 1):
            for cy in (radius, h - radius - 1):
                cv2.circle(rgba, (cx, cy), radius, (*colour, 255), -1, cv2.LINE_AA)
        if kind == "phone":
            inner = int(4 * px)
            cv2.rectangle(rgba, (inner, inner * 3), (w - inner, h - inner * 3),
                          (25, 25, 30, 255), -1)
    return rgba
