"""A table scene rendered through a webcam, with exact ground truth.

A scene is a stack of objects (bottom first) in table millimetres plus hands above them.
The ``Renderer`` keeps what does not change between the frames of one clip (camera, table
surface, boards, lighting) and draws each scene on a top-down canvas, which the camera
model then photographs. Ground truth comes from the same geometry: every object's outline
in table mm and in image pixels (through ``Camera.project``), its visible fraction after
everything above it, and the camera itself.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

import cv2
import numpy as np
import numpy.typing as npt
from shapely.geometry import Polygon
from shapely.ops import unary_union

from synth import effects
from synth.artwork import (
    ART_PX_PER_MM,
    CARD_H_MM,
    CARD_W_MM,
    ArtworkError,
    installed_decks,
    load_card,
    rasterise_deck,
)
from synth.camera import Camera, TableCanvas
from synth.hands import HandPose, disc
from synth.pieces import SPRITE_PX_PER_MM, coin_sprite, d4_sprite, token_sprite
from synth.procedural import STAND_IN_FIRST, is_procedural, rasterise_procedural
from synth.surfaces import table_surface

Image = npt.NDArray[np.uint8]
FloatImage = npt.NDArray[np.float32]
Kind = Literal["card", "coin", "token", "die", "distractor"]
#: Index regions of a standard card (rank over suit), in card-local mm from its centre.
INDEX_W_MM, INDEX_H_MM = 10.0, 26.0
MAX_CANVAS_PIXELS = 4_000_000


@dataclass(frozen=True)
class Placed:
    """One object on the table. ``angle_deg`` turns it counter-clockwise (table frame)."""

    uid: str
    kind: Kind
    label: str  # card code, coin face, token colour, die value...
    center: tuple[float, float]
    angle_deg: float = 0.0
    size_mm: tuple[float, float] = (CARD_W_MM, CARD_H_MM)
    deck: str | None = None  # cards
    height_mm: float = 0.3  # above the table: sets the shadow
    face_up: bool = True
    sprite_key: tuple[Any, ...] = ()

    @property
    def is_disc(self) -> bool:
        return self.kind in ("coin", "token")

    def corners_mm(self) -> npt.NDArray[np.float64]:
        """Top-left, top-right, bottom-right, bottom-left of the object's artwork."""
        w, h = self.size_mm
        local = np.array([[-w / 2, h / 2], [w / 2, h / 2], [w / 2, -h / 2], [-w / 2, -h / 2]])
        return self._to_table(local)

    def _to_table(self, local: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        a = math.radians(self.angle_deg)
        rotation = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        return np.asarray(local @ rotation.T + np.array(self.center), dtype=np.float64)

    def outline(self) -> Polygon:
        if self.is_disc:
            return disc(self.center, self.size_mm[0] / 2)
        return Polygon(self.corners_mm())

    def index_regions(self) -> list[Polygon]:
        """The two diagonally opposite index corners of a card (top-left, bottom-right)."""
        w, h = self.size_mm
        top_left = np.array([[-w / 2, h / 2], [-w / 2 + INDEX_W_MM, h / 2],
                             [-w / 2 + INDEX_W_MM, h / 2 - INDEX_H_MM],
                             [-w / 2, h / 2 - INDEX_H_MM]])
        return [Polygon(self._to_table(top_left)), Polygon(self._to_table(-top_left))]


def card(uid: str, code: str, deck: str, center: tuple[float, float], angle_deg: float = 0.0,
         face_up: bool = True, size_mm: tuple[float, float] = (CARD_W_MM, CARD_H_MM)) -> Placed:
    return Placed(uid, "card", code if face_up else "back", center, angle_deg, size_mm,
                  deck=deck, face_up=face_up)


@dataclass(frozen=True)
class Scene:
    objects: tuple[Placed, ...] = ()  # bottom to top
    hands: tuple[HandPose, ...] = ()


# --- ground truth -------------------------------------------------------------------------

@dataclass(frozen=True)
class ObjectTruth:
    uid: str
    kind: str
    label: str
    deck: str | None
    z: int  # 0 = lowest
    corners_mm: list[list[float]]  # cards: TL, TR, BR, BL of the artwork
    corners_px: list[list[float]]
    center_mm: list[float]
    radius_mm: float | None
    visible_fraction: float
    index_visible: list[float] | None  # cards: visible fraction of each index corner


@dataclass(frozen=True)
class Truth:
    image_size: list[int]
    camera_matrix: list[list[float]]
    dist_coeffs: list[float]
    table_to_image: list[list[float]]  # homography, table mm -> undistorted pixels
    image_to_table: list[list[float]]
    objects: list[ObjectTruth]
    hands_mm: list[list[list[float]]]
    hands_px: list[list[list[float]]]
    extras: dict[str, Any] = field(default_factory=dict)


def ground_truth(scene: Scene, camera: Camera) -> Truth:
    hands = [hand.outline() for hand in scene.hands]
    outlines = [obj.outline() for obj in scene.objects]
    truths: list[ObjectTruth] = []
    for z, (obj, outline) in enumerate(zip(scene.objects, outlines, strict=True)):
        above = unary_union([*outlines[z + 1:], *hands]) if (outlines[z + 1:] or hands) else None

        def visible(region: Polygon, above: Any = above) -> float:
            if above is None or region.area == 0:
                return 1.0
            return float(region.difference(above).area / region.area)

        corners = obj.corners_mm() if not obj.is_disc else \
            np.asarray(outline.exterior.coords[:-1], dtype=np.float64)
        truths.append(ObjectTruth(
            uid=obj.uid, kind=obj.kind, label=obj.label, deck=obj.deck, z=z,
            corners_mm=corners.round(4).tolist(),
            corners_px=camera.project(corners).round(3).tolist(),
            center_mm=[float(obj.center[0]), float(obj.center[1])],
            radius_mm=obj.size_mm[0] / 2 if obj.is_disc else None,
            visible_fraction=round(visible(outline), 4),
            index_visible=[round(visible(r), 4) for r in obj.index_regions()]
            if obj.kind == "card" else None,
        ))
    hands_mm = [np.asarray(h.exterior.coords[:-1]) for h in hands]
    return Truth(
        image_size=list(camera.image_size),
        camera_matrix=camera.camera_matrix.tolist(),
        dist_coeffs=camera.dist_coeffs.tolist(),
        table_to_image=camera.homography.tolist(),
        image_to_table=camera.image_to_table.tolist(),
        objects=truths,
        hands_mm=[h.round(2).tolist() for h in hands_mm],
        hands_px=[camera.project(h).round(2).tolist() for h in hands_mm],
    )


# --- drawing --------------------------------------------------------------------------

@lru_cache(maxsize=64)
def deck_paths(deck: str) -> dict[str, Any]:
    if is_procedural(deck):
        return rasterise_procedural(deck)
    installed = installed_decks()
    if deck not in installed:
        raise ArtworkError(f"deck design {deck} is not installed: "
                           "run scripts/install-system-deps.sh")
    return rasterise_deck(installed[deck])


def stand_in(deck: str) -> str:
    """The procedural design whose joker and back a packaged ``deck`` without them shows."""
    return f"proc:{STAND_IN_FIRST + zlib.crc32(deck.encode()) % 100}"


@lru_cache(maxsize=4096)
def card_art(deck: str, code: str) -> Image:
    paths = deck_paths(deck)
    if code not in paths:
        # Many kde designs have no joker, some no back: draw another design's, so that the
        # picture shows what the label says (drawing a substitute card would teach the
        # classifier that an ace of spades is a joker).
        paths = deck_paths(stand_in(deck))
    return load_card(paths[code])


def _sprite(obj: Placed) -> tuple[Image, float]:
    """RGBA artwork and its pixels per mm."""
    if obj.kind == "card":
        assert obj.deck is not None
        return card_art(obj.deck, obj.label), ART_PX_PER_MM
    if obj.kind == "coin":
        colour, ink = obj.sprite_key or ((170, 200, 220), (30, 30, 30))
        return coin_sprite(obj.label, colour, ink), SPRITE_PX_PER_MM
    if obj.kind == "token":
        return token_sprite(obj.label), SPRITE_PX_PER_MM
    if obj.kind == "die":
        return d4_sprite(int(obj.label)), SPRITE_PX_PER_MM
    if not obj.sprite_key:
        return np.zeros((4, 4, 4), np.uint8), SPRITE_PX_PER_MM
    sprite = np.asarray(obj.sprite_key[0], dtype=np.uint8)
    return sprite, sprite.shape[1] / obj.size_mm[0]  # distractors come at any scale


@dataclass(frozen=True)
class Bend:
    """A card arched off the table, as cards that have been handled lie: two opposite
    edges on the table, the middle ``rise_mm`` above it (a parabola), so its four corners
    stay where the ground truth puts them. ``lengthwise``: the arch runs along the card's
    length (its short ends on the table, its long sides bowed), else across its width.
    Seen from ``eye_mm`` (the camera's centre, table mm) the raised middle is drawn where
    its line of sight meets the table; its face shades from ``1 + shade`` to ``1 - shade``
    along the arch (its two slopes lit unevenly; which one is lighter is drawn at random,
    not from the renderer's light), with a highlight band of strength ``gloss`` at
    ``gloss_at`` (0-1 along the arch). Its shadow is a flat card's."""

    rise_mm: float
    lengthwise: bool
    shade: float
    gloss: float
    gloss_at: float
    eye_mm: tuple[float, float, float]

    @classmethod
    def random(cls, rng: np.random.Generator, eye_mm: tuple[float, float, float]) -> Bend:
        return cls(rise_mm=float(rng.uniform(0.5, 4.0)), lengthwise=bool(rng.random() < 0.6),
                   shade=float(rng.uniform(-0.12, 0.12)),
                   gloss=float(rng.choice([0.0, rng.uniform(0.1, 0.4)], p=[0.5, 0.5])),
                   gloss_at=float(rng.uniform(0.15, 0.85)), eye_mm=eye_mm)

    def along(self, u: FloatImage, v: FloatImage) -> FloatImage:
        """Where sprite fractions (``u`` across, ``v`` down) lie along the arch, 0-1."""
        return v if self.lengthwise else u

    def lit(self, sprite: Image) -> FloatImage:
        """The sprite's colour shaded along the arch and glossed (float, BGR)."""
        h, w = sprite.shape[:2]
        v, u = np.mgrid[0:h, 0:w].astype(np.float32)
        t = self.along(u / max(w - 1, 1), v / max(h - 1, 1))
        colour = sprite[:, :, :3].astype(np.float32) * (1 + self.shade * (1 - 2 * t))[..., None]
        if self.gloss > 0:
            band = self.gloss * np.exp(-(((t - self.gloss_at) / 0.07) ** 2))
            colour += (255 - colour) * band[..., None]
        return colour

    def sightline_maps(self, canvas: TableCanvas, sprite_to_patch: npt.NDArray[np.float64],
                       sprite_size: tuple[int, int], origin: tuple[int, int],
                       size: tuple[int, int]) -> tuple[FloatImage, FloatImage]:
        """``cv2.remap`` maps that move each raised point of a patch (``size``, its top
        left at canvas pixel ``origin``) to where the camera sees it on the table.

        A point p at height z(p) is seen at q = p + (p - eye) z / (ez - z), so
        p = q - (q - eye) z(p) / ez; the maps solve that for p by three fixed-point steps
        (z is at most a few mm against a camera hundreds of mm up: they converge fast)."""
        w, h = size
        rows, cols = np.mgrid[0:h, 0:w].astype(np.float32)
        back = cv2.invertAffineTransform(sprite_to_patch)
        s = canvas.px_per_mm
        ex, ey, ez = self.eye_mm
        qx = (cols + origin[0]) / s + canvas.x0 - ex  # q - eye, table mm
        qy = canvas.y_top - (rows + origin[1]) / s - ey
        src_cols, src_rows = cols, rows
        for _ in range(3):
            su = back[0, 0] * src_cols + back[0, 1] * src_rows + back[0, 2]
            sv = back[1, 0] * src_cols + back[1, 1] * src_rows + back[1, 2]
            t = self.along((su + 0.5) / sprite_size[0], (sv + 0.5) / sprite_size[1])
            shrink = np.clip(self.rise_mm * 4 * t * (1 - t), 0.0, None) / ez
            src_cols = cols - qx * shrink * s
            src_rows = rows + qy * shrink * s
        return src_cols.astype(np.float32), src_rows.astype(np.float32)

    def reach_px(self, corners_mm: npt.NDArray[np.float64], px_per_mm: float) -> float:
        """How far (canvas px) a raised point of a card with these corners can move."""
        ex, ey, ez = self.eye_mm
        far = float(np.hypot(corners_mm[:, 0] - ex, corners_mm[:, 1] - ey).max())
        return far * self.rise_mm / max(ez - self.rise_mm, 1.0) * px_per_mm


def stamp(canvas: TableCanvas, target: Image, obj: Placed, *,
          shadow: tuple[float, float, float] = (0.0, 0.0, 0.0),
          edge: float = 0.0, sprite: Image | None = None, sprite_px_per_mm: float = 0.0,
          tint: float = 1.0, bend: Bend | None = None) -> None:
    """Draw ``obj`` onto ``target`` (the canvas image), with its shadow.

    ``shadow`` is (dx_mm, dy_mm, strength) for an object 1 mm high; ``edge`` darkens the
    outline (a card's cut edge); ``bend`` arches it off the table (cards).
    """
    if sprite is None:
        sprite, sprite_px_per_mm = _sprite(obj)
    s = canvas.px_per_mm
    ratio = s / sprite_px_per_mm
    if ratio < 0.8:
        sprite = cv2.resize(sprite, (max(2, round(sprite.shape[1] * ratio)),
                                     max(2, round(sprite.shape[0] * ratio))),
                            interpolation=cv2.INTER_AREA)
    if bend is not None:
        lit = bend.lit(sprite)
        sprite = np.dstack([np.clip(lit, 0, 255).astype(np.uint8), sprite[:, :, 3]])
    h, w = sprite.shape[:2]
    corners = canvas.to_pixels(obj.corners_mm())  # TL, TR, BR, BL
    source = np.float32([[-0.5, -0.5], [w - 0.5, -0.5], [-0.5, h - 0.5]])
    destination = np.float32([corners[0], corners[1], corners[3]])
    dx, dy, strength = shadow
    lift = obj.height_mm
    offset = np.array([dx * lift * s, -dy * lift * s])
    blur = max(0.6, 0.8 * lift) * s
    reach = bend.reach_px(obj.corners_mm(), s) if bend else 0.0
    margin = int(abs(offset).max() + 3 * blur + 3 + reach)
    x0 = max(math.floor(corners[:, 0].min()) - margin, 0)
    y0 = max(math.floor(corners[:, 1].min()) - margin, 0)
    x1 = min(math.ceil(corners[:, 0].max()) + margin + 1, target.shape[1])
    y1 = min(math.ceil(corners[:, 1].max()) + margin + 1, target.shape[0])
    if x1 <= x0 or y1 <= y0:
        return
    affine = cv2.getAffineTransform(source, destination - np.float32([x0, y0]))
    patch = cv2.warpAffine(sprite, affine, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR,
                           borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
    maps = None
    if bend is not None:
        maps = bend.sightline_maps(canvas, affine, (w, h), (x0, y0), (x1 - x0, y1 - y0))
        patch = cv2.remap(patch, *maps, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                          borderValue=(0, 0, 0, 0))
    alpha = patch[:, :, 3].astype(np.float32) / 255.0
    roi = target[y0:y1, x0:x1].astype(np.float32)  # blend in float, only here
    if strength > 0:
        moved = cv2.warpAffine(alpha, np.float32([[1, 0, offset[0]], [0, 1, offset[1]]]),
                               (x1 - x0, y1 - y0))
        soft = cv2.GaussianBlur(moved, (0, 0), blur)
        roi *= (1.0 - strength * soft)[..., None]
    colour = patch[:, :, :3].astype(np.float32) * tint
    roi[:] = roi * (1 - alpha[..., None]) + colour * alpha[..., None]
    if edge > 0:
        line = np.zeros(alpha.shape, np.float32)
        points = np.round((corners - [x0, y0]) * 16).astype(np.int32)
        cv2.polylines(line, [points], True, 1.0, 1, cv2.LINE_AA, shift=4)
        if maps is not None:
            line = cv2.remap(line, *maps, cv2.INTER_LINEAR)
        roi *= (1.0 - edge * line)[..., None]
    target[y0:y1, x0:x1] = np.clip(roi, 0, 255).astype(np.uint8)


def draw_hand(canvas: TableCanvas, target: Image, hand: HandPose,
              rng: np.random.Generator, light: tuple[float, float]) -> None:
    s = canvas.px_per_mm
    pixels = canvas.to_pixels(np.asarray(hand.outline().exterior.coords[:-1]))
    shift = np.array([light[0], -light[1]]) * hand.height_mm * s
    blur = max(1.0, 0.25 * hand.height_mm * s)
    margin = int(abs(shift).max() + 3 * blur + 2)
    x0 = max(int(pixels[:, 0].min()) - margin, 0)
    y0 = max(int(pixels[:, 1].min()) - margin, 0)
    x1 = min(int(pixels[:, 0].max()) + margin + 1, target.shape[1])
    y1 = min(int(pixels[:, 1].max()) + margin + 1, target.shape[0])
    if x1 <= x0 or y1 <= y0:
        return
    roi = target[y0:y1, x0:x1].astype(np.float32)
    mask = np.zeros(roi.shape[:2], np.float32)
    local = np.round((pixels - [x0, y0]) * 16).astype(np.int32)
    cv2.fillPoly(mask, [local], 1.0, cv2.LINE_AA, shift=4)
    moved = cv2.warpAffine(mask, np.float32([[1, 0, shift[0]], [0, 1, shift[1]]]),
                           mask.shape[::-1])
    roi *= (1.0 - 0.45 * cv2.GaussianBlur(moved, (0, 0), blur))[..., None]
    skin = np.array(hand.skin, np.float32)
    # Rounder towards the middle of the silhouette, darker at its edge, with knuckle-scale
    # mottling.
    shade = cv2.GaussianBlur(mask, (0, 0), 5 * s)
    mottle = cv2.GaussianBlur(rng.normal(0, 1, mask.shape).astype(np.float32), (0, 0), 4 * s)
    texture = 1 + 0.025 * mottle / max(float(mottle.std()), 1e-6)
    colour = skin[None, None, :] * (0.6 + 0.5 * shade)[..., None] * texture[..., None]
    roi[:] = roi * (1 - mask[..., None]) + colour * mask[..., None]
    target[y0:y1, x0:x1] = np.clip(roi, 0, 255).astype(np.uint8)


# --- the renderer -------------------------------------------------------------------------

BoardPainter = Callable[[TableCanvas, np.random.Generator], dict[str, Any]]


@dataclass
class Renderer:
    """Everything one clip keeps fixed: camera, table, boards, lighting."""

    camera: Camera
    rng: np.random.Generator
    photometry: effects.Photometry
    boards: Sequence[BoardPainter] = ()
    px_per_mm: float | None = None
    surface_colour: tuple[int, int, int] | None = None  # a plain table instead of a texture
    shadows: bool = True
    #: The share of cards arched off the table (``Bend``); 0 draws every card flat.
    bends: float = 0.0
    board_truth: list[dict[str, Any]] = field(default_factory=list)
    _base: TableCanvas | None = None
    _light: tuple[float, float] = (0.0, 0.0)
    _shadow_strength: float = 0.35

    def _prepare(self) -> TableCanvas:
        if self._base is not None:
            return self._base
        x_min, y_min, x_max, y_max = self.camera.visible_bounds()
        x_min, y_min = max(x_min, -2000.0), max(y_min, -2000.0)
        x_max, y_max = min(x_max, 2000.0), min(y_max, 2000.0)
        centre = ((x_min + x_max) / 2, (y_min + y_max) / 2)
        scale = self.px_per_mm or float(np.clip(
            1.4 / self.camera.mm_per_pixel_at(centre), 1.5, 4.0))
        # The far side of a tilted view covers much table at low resolution: cap the canvas.
        scale = min(scale, math.sqrt(MAX_CANVAS_PIXELS / ((x_max - x_min) * (y_max - y_min))))
        size = (int((x_max - x_min) * scale) + 1, int((y_max - y_min) * scale) + 1)
        if self.surface_colour is not None:
            image = np.full((size[1], size[0], 3), self.surface_colour, np.uint8)
        else:
            image = table_surface(self.rng, size, scale)
        canvas = TableCanvas(np.ascontiguousarray(image), scale, x_min, y_max)
        self.board_truth = [paint(canvas, self.rng) for paint in self.boards]
        angle = self.rng.uniform(0, 2 * math.pi)
        spread = self.rng.uniform(0.3, 1.2)
        self._light = (math.cos(angle) * spread, math.sin(angle) * spread)
        self._shadow_strength = float(self.rng.uniform(0.2, 0.5)) if self.shadows else 0.0
        self._base = canvas
        return canvas

    def _bend(self, card_obj: Placed, eye: tuple[float, float, float]) -> Bend | None:
        """Whether and how a card lies arched: drawn from a stream of the card's own (its
        uid, code, place and turn), so the frame's stream, and every scene drawn after it,
        stay as they are without bends; and a card keeps its bend from frame to frame."""
        if self.bends <= 0:
            return None
        key = f"{card_obj.uid} {card_obj.label} {card_obj.center} {card_obj.angle_deg}"
        own = np.random.default_rng(zlib.crc32(key.encode()))
        return Bend.random(own, eye) if own.random() < self.bends else None

    def render(self, scene: Scene, *, per_frame_rng: np.random.Generator | None = None
               ) -> tuple[Image, Truth]:
        rng = per_frame_rng or self.rng
        base = self._prepare()
        target = base.image.copy()
        lx, ly = self._light
        ex, ey, ez = (float(c) for c in self.camera.centre)  # bent cards' sight lines
        for obj in scene.objects:
            height_shadow = (lx, ly, self._shadow_strength * (0.6 if obj.kind == "card" else 1))
            bend = self._bend(obj, (ex, ey, ez)) if obj.kind == "card" else None
            stamp(base, target, obj, shadow=height_shadow,
                  edge=0.35 if obj.kind == "card" and self.shadows else 0.0,
                  tint=float(rng.uniform(0.93, 1.03)) if obj.kind == "card" else 1.0,
                  bend=bend)
        for hand in scene.hands:
            draw_hand(base, target, hand, rng, self._light)
        canvas = TableCanvas(target, base.px_per_mm, base.x0, base.y_top)
        image = effects.apply(self.camera.render(canvas), self.photometry, rng)
        truth = ground_truth(scene, self.camera)
        if self.board_truth:
            truth.extras["boards"] = self.board_truth
        return image, truth
