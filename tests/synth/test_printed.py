"""Printed matter: pages, flyers and covers with photographs of people and things."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image as PILImage
from PIL import ImageDraw

from synth.printed import PRINT_PX_PER_MM, _body, _photo, _typefaces, photo_files, print_sprite


def test_printed_matter_shows_photographs_of_people_and_things() -> None:
    samples, backgrounds = photo_files()
    names = {p.name for p in samples}
    assert {"astronaut.png", "chelsea.png", "coffee.png"} <= names  # a person, a cat, a cup
    assert backgrounds, "MATE's photographs (scripts/install-system-deps.sh) are missing"
    for path in (*samples, *backgrounds):
        photo = _photo(path)
        assert photo is not None and photo.ndim == 3 and photo.shape[2] == 3, path
        # a see-through drawing reads as a blank field: no photograph to print
        assert photo.std() > 10, path
    stems = [p.stem for p in backgrounds]
    assert len(stems) == len(set(s.split("_")[0] for s in stems)), "one size of each"


def test_printed_matter_is_drawn_from_its_seed_alone() -> None:
    """The same seed draws the same sprite, in this process and in a fresh one (fonts,
    photographs and their order do not depend on the process)."""
    first = print_sprite(np.random.default_rng(5), "cover")
    assert np.array_equal(first, print_sprite(np.random.default_rng(5), "cover"))
    assert not np.array_equal(first, print_sprite(np.random.default_rng(6), "cover"))
    code = ("import hashlib, numpy as np; from synth.printed import print_sprite; "
            "print(hashlib.sha256(print_sprite(np.random.default_rng(5), 'cover')"
            ".tobytes()).hexdigest())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONHASHSEED": "123"})
    assert out.stdout.strip() == hashlib.sha256(first.tobytes()).hexdigest()


def test_covers_are_photographs_under_a_title() -> None:
    """A cover is a photograph nearly edge to edge: thousands of colours (a flat ground
    under three antialiased titles has about 600)."""
    for seed in range(8):
        sprite = print_sprite(np.random.default_rng(seed), "cover")[..., :3]
        h_mm, w_mm = np.array(sprite.shape[:2]) / PRINT_PX_PER_MM
        assert 110 <= w_mm <= 260 and 140 <= h_mm <= 300
        assert len(np.unique(sprite.reshape(-1, 3), axis=0)) > 1200, seed


def test_body_text_fills_its_column_and_keeps_clear_of_pictures() -> None:
    image = PILImage.new("RGB", (300, 400), (255, 255, 255))
    picture = (40, 150, 200, 260)
    _body(ImageDraw.Draw(image), np.random.default_rng(0), (20, 20, 280, 380),
          _typefaces()[0], 9, (0, 0, 0), [picture])
    ink = np.asarray(image).min(axis=2) < 128
    assert not ink[:20].any() and not ink[:, :20].any() and not ink[:, 281:].any()
    x0, y0, x1, y1 = picture
    assert not ink[y0:y1 + 1, x0:x1 + 1].any()
    rows = ink.any(axis=1)
    lines = int(np.count_nonzero(rows[1:] & ~rows[:-1]))
    assert lines >= 20  # 360 px of column at a 9 px type: about 30 lines, less the picture


def test_how_printed_matter_is_drawn_leaves_the_scenes_as_they_are(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Printed matter draws from a stream of its own: a renderer that draws it otherwise
    (here: many more numbers) still draws the same camera, and the same next scene from
    the benchmark's stream."""
    import synth.random_scenes as scenes

    def two_scenes(seed: int) -> list[object]:
        rng = np.random.default_rng(seed)
        renderer, _, _ = scenes.random_scene(rng, "train")
        _, after, _ = scenes.random_scene(rng, "train")
        return [renderer.camera.centre.tolist(),
                [(o.label, o.center, o.angle_deg) for o in after.objects if o.kind == "card"]]

    seeds = [seed for seed in range(60)
             if any(o.uid == "print0" for o in scenes.random_scene(
                 np.random.default_rng(seed), "train")[1].objects)][:3]
    assert seeds
    before = [two_scenes(seed) for seed in seeds]

    def greedy(rng: np.random.Generator) -> np.ndarray:
        rng.random(1000)
        return np.full((300, 400, 4), 255, np.uint8)

    import synth.printed as printed

    monkeypatch.setattr(printed, "print_sprite", greedy)
    assert [two_scenes(seed) for seed in seeds] == before
