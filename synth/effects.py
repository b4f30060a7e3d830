"""What a webcam does to light: uneven illumination, white balance, exposure, blur,
sensor noise and compression."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np
import numpy.typing as npt

Image = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class Photometry:
    gains: tuple[float, float, float]  # white balance (b, g, r)
    exposure: float
    gamma: float
    light_centre: tuple[float, float]  # in image fractions
    light_falloff: float
    vignette: float
    blur_sigma: float
    motion_blur_px: int
    motion_angle_deg: float
    noise_sigma: float
    jpeg_quality: int

    @classmethod
    def random(cls, rng: np.random.Generator, *, clean: bool = False) -> Photometry:
        if clean:
            return cls((1.0, 1.0, 1.0), 1.0, 1.0, (0.5, 0.5), 0.0, 0.0, 0.0, 0, 0.0, 0.0, 100)
        warm = rng.uniform(-0.12, 0.12)
        return cls(
            gains=(float(1 - warm + rng.normal(0, 0.03)), float(1 + rng.normal(0, 0.03)),
                   float(1 + warm + rng.normal(0, 0.03))),
            exposure=float(rng.uniform(0.65, 1.25)),
            gamma=float(rng.uniform(0.85, 1.15)),
            light_centre=(float(rng.uniform(-0.3, 1.3)), float(rng.uniform(-0.3, 1.3))),
            light_falloff=float(rng.uniform(0.0, 0.45)),
            vignette=float(rng.uniform(0.0, 0.35)),
            blur_sigma=float(rng.choice([0.0, rng.uniform(0.3, 1.4)], p=[0.3, 0.7])),
            motion_blur_px=int(rng.choice([0, int(rng.integers(3, 9))], p=[0.85, 0.15])),
            motion_angle_deg=float(rng.uniform(0, 180)),
            noise_sigma=float(rng.uniform(1.0, 7.0)),
            jpeg_quality=int(rng.integers(45, 95)),
        )


def _light_field(shape: tuple[int, int], p: Photometry) -> npt.NDArray[np.float32]:
    """Illumination: smooth, so computed at 1/8 resolution and scaled up."""
    height, width = shape
    small = (max(height // 8, 2), max(width // 8, 2))
    ys, xs = np.mgrid[0:small[0], 0:small[1]].astype(np.float32)
    xs /= small[1] - 1
    ys /= small[0] - 1
    cx, cy = p.light_centre
    distance = np.sqrt((xs - cx) ** 2 + (ys - cy) ** 2)
    light = 1.0 - p.light_falloff * np.clip(distance / 1.2, 0, 1)
    corner = np.sqrt((xs - 0.5) ** 2 + (ys - 0.5) ** 2) / 0.707
    light *= 1.0 - p.vignette * corner ** 2
    return np.asarray(cv2.resize(light.astype(np.float32), (width, height)), np.float32)


_TO_LINEAR = (np.arange(256, dtype=np.float32) / 255.0) ** 2.2


@lru_cache(maxsize=64)
def _from_linear(gamma: float) -> npt.NDArray[np.float32]:
    return (np.linspace(0, 1, 1024, dtype=np.float32) ** (1 / (2.2 * gamma))).astype(np.float32)


def apply(image: Image, p: Photometry, rng: np.random.Generator) -> Image:
    """The photometric chain, in the order a camera applies it."""
    out = _TO_LINEAR[image]
    out *= _light_field(out.shape[:2], p)[..., None]
    out *= np.array(p.gains, dtype=np.float32)[None, None, :] * p.exposure
    # Back to display values through a lookup table (1024 steps of linear light).
    steps = np.clip(out * 1023, 0, 1023).astype(np.uint16)
    out = _from_linear(p.gamma)[steps]
    if p.blur_sigma > 0:
        out = cv2.GaussianBlur(out, (0, 0), p.blur_sigma)
    if p.motion_blur_px > 1:
        kernel = np.zeros((p.motion_blur_px, p.motion_blur_px), np.float32)
        kernel[p.motion_blur_px // 2, :] = 1.0 / p.motion_blur_px
        centre = (p.motion_blur_px / 2 - 0.5, p.motion_blur_px / 2 - 0.5)
        rotation = cv2.getRotationMatrix2D(centre, p.motion_angle_deg, 1.0)
        kernel = cv2.warpAffine(kernel, rotation, kernel.shape[::-1])
        kernel /= max(float(kernel.sum()), 1e-6)
        out = cv2.filter2D(out, -1, kernel)
    out = out * 255.0
    if p.noise_sigma > 0:
        # Read noise plus shot noise (which grows with the signal), as one Gaussian field.
        field = np.empty(out.shape, np.float32)
        cv2.setRNGSeed(int(rng.integers(2**31)))
        cv2.randn(field, 0.0, 1.0)
        out += field * np.sqrt(p.noise_sigma ** 2 + 0.0625 * np.maximum(out, 1.0))
    result = np.clip(out, 0, 255).astype(np.uint8)
    if p.jpeg_quality < 100:
        ok, encoded = cv2.imencode(".jpg", result, [cv2.IMWRITE_JPEG_QUALITY, p.jpeg_quality])
        if ok:
            result = cv2.imdecode(encoded, cv2.IMREAD_COLOR)
    return np.asarray(result, dtype=np.uint8)
