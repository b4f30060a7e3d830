"""Table surfaces: wood and cloth photographs and patterns from Debian packages, and
procedural felt. Each is returned as a texture tiled to cover a canvas."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

Image = npt.NDArray[np.uint8]

_PHOTO_DIRS: Final = (
    Path("/usr/share/backgrounds/mate/nature"),
    Path("/usr/share/backgrounds/gnome"),
)
_PATTERN_DIRS: Final = tuple(
    Path("/usr/share/gimp/2.0/patterns") / name for name in ("Wood", "Fabric", "Paper", "Stone")
)
_PHOTO_WORDS: Final = ("wood", "fabric", "cloth", "grain", "linen", "parquet")
#: Patterns no table is made of.
_UNLIKE_TABLES: Final = ("brick", "craters", "moonfoot", "ground", "rock", "bark", "cracked",
                         "amethyst", "terra")
_MAX_SIDE: Final = 1600


@lru_cache(maxsize=1)
def surface_files() -> tuple[Path, ...]:
    """Texture files installed by scripts/install-system-deps.sh (wood, fabric, paper)."""
    found: list[Path] = []
    for folder in _PATTERN_DIRS:
        if folder.is_dir():
            found += sorted(p for p in folder.iterdir()
                            if p.suffix.lower() in (".pat", ".png", ".jpg", ".jpeg")
                            and not any(w in p.name.lower() for w in _UNLIKE_TABLES))
    for folder in _PHOTO_DIRS:
        if folder.is_dir():
            found += sorted(p for p in folder.iterdir()
                            if any(w in p.name.lower() for w in _PHOTO_WORDS)
                            and p.suffix.lower() in (".jpg", ".jpeg", ".png", ".webp"))
    return tuple(found)


def _read_gimp_pattern(path: Path) -> Image | None:
    """GIMP .pat: a 24+ byte big-endian header, a name, then raw pixels."""
    data = path.read_bytes()
    if len(data) < 24 or data[20:24] != b"GPAT":
        return None
    header_size, _, width, height, depth = (int.from_bytes(data[i:i + 4], "big")
                                            for i in range(0, 20, 4))
    pixels = np.frombuffer(data[header_size:header_size + width * height * depth], np.uint8)
    if pixels.size != width * height * depth or depth not in (1, 2, 3, 4):
        return None
    image = pixels.reshape(height, width, depth)
    if depth in (1, 2):
        image = np.repeat(image[:, :, :1], 3, axis=2)
    return np.ascontiguousarray(image[:, :, :3][:, :, ::-1])


@lru_cache(maxsize=64)
def load_surface(path: Path) -> Image | None:
    image = _read_gimp_pattern(path) if path.suffix == ".pat" else cv2.imread(str(path))
    if image is None:
        return None
    scale = _MAX_SIDE / max(image.shape[:2])
    if scale < 1:
        image = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    return np.asarray(image, dtype=np.uint8)


def felt(rng: np.random.Generator, size: tuple[int, int]) -> Image:
    """Procedural cloth: a base colour with fibre noise and a faint weave."""
    width, height = size
    base = rng.choice([(40, 100, 30), (35, 60, 120), (120, 40, 40), (60, 60, 60),
                       (150, 140, 120), (90, 70, 50), (200, 200, 195)])
    base = np.array(base, dtype=np.float32)[::-1] * rng.uniform(0.7, 1.2)
    small = rng.normal(0, 1, (height // 4 + 1, width // 4 + 1)).astype(np.float32)
    noise = cv2.resize(cv2.GaussianBlur(small, (0, 0), 1.2), (width, height))
    fine = np.empty((height, width), np.float32)
    cv2.setRNGSeed(int(rng.integers(2**31)))
    cv2.randn(fine, 0.0, 1.0)
    # Carpet and rough cloth have strong fibre texture; felt is smooth.
    fibre = float(rng.choice([0.03, 0.08, 0.15], p=[0.5, 0.3, 0.2]))
    weave = np.sin(np.arange(width, dtype=np.float32) * rng.uniform(0.8, 1.6))[None, :] * 0.5
    shade = 1 + 0.06 * noise + fibre * fine + 0.02 * weave
    texture = shade[..., None] * base[None, None, :]
    return np.clip(texture, 0, 255).astype(np.uint8)


def carpet(rng: np.random.Generator, size: tuple[int, int], px_per_mm: float) -> Image:
    """Procedural carpet or rough rug: tufts a few mm across in strong light and shade
    (home tables and floors where people photograph cards), over a slow colour drift."""
    width, height = size
    base = rng.choice([(190, 170, 140), (150, 130, 100), (120, 120, 115), (90, 75, 60),
                       (170, 160, 150), (70, 80, 100), (140, 60, 50)])
    base = np.array(base, dtype=np.float32)[::-1] * rng.uniform(0.75, 1.15)
    tuft_px = max(1.5, float(rng.uniform(1.0, 3.5)) * px_per_mm)
    cells = (max(2, round(height / tuft_px)), max(2, round(width / tuft_px)))
    tufts = cv2.resize(rng.normal(0, 1, cells).astype(np.float32), (width, height),
                       interpolation=cv2.INTER_CUBIC)
    tufts = np.tanh(1.5 * tufts)  # bright loops, dark gaps between them
    drift = cv2.resize(rng.normal(0, 1, (4, 6)).astype(np.float32), (width, height),
                       interpolation=cv2.INTER_CUBIC)
    shade = 1 + float(rng.uniform(0.12, 0.35)) * tufts + 0.05 * drift
    return np.clip(shade[..., None] * base[None, None, :], 0, 255).astype(np.uint8)


def table_surface(rng: np.random.Generator, size: tuple[int, int],
                  px_per_mm: float) -> Image:
    """A table top covering ``size`` (w, h) pixels at ``px_per_mm``. Made at half
    resolution and scaled up: the camera sees the table at about half the canvas scale."""
    width, height = size
    half = _table_surface(rng, (width // 2 + 1, height // 2 + 1), px_per_mm / 2)
    return np.asarray(cv2.resize(half, (width, height), interpolation=cv2.INTER_LINEAR),
                      np.uint8)


def _table_surface(rng: np.random.Generator, size: tuple[int, int],
                   px_per_mm: float) -> Image:
    width, height = size
    files = surface_files()
    if files and rng.random() < 0.75:
        texture = load_surface(files[int(rng.integers(len(files)))])
        if texture is not None:
            # A photo or pattern shows roughly 150-600 mm of table across.
            span_mm = rng.uniform(150, 600)
            scale = span_mm * px_per_mm / texture.shape[1]
            texture = cv2.resize(texture, None, fx=scale, fy=scale,
                                 interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR)
            if rng.random() < 0.5:
                texture = cv2.rotate(texture, cv2.ROTATE_90_CLOCKWISE)
            reps = (height // texture.shape[0] + 2, width // texture.shape[1] + 2, 1)
            tiled = np.tile(texture, reps)
            y0 = int(rng.integers(texture.shape[0]))
            x0 = int(rng.integers(texture.shape[1]))
            out = tiled[y0:y0 + height, x0:x0 + width]
            tint = rng.uniform(0.8, 1.15, size=3).astype(np.float32)
            return np.clip(out.astype(np.float32) * tint, 0, 255).astype(np.uint8)
    if rng.random() < 0.4:
        return carpet(rng, size, px_per_mm)
    return felt(rng, size)
