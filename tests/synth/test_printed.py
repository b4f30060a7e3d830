"""Printed matter: pages, flyers and covers with photographs of people and things."""

from __future__ import annotations

import numpy as np

from synth.printed import PRINT_PX_PER_MM, _photo, photo_files, print_sprite


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
    first = print_sprite(np.random.default_rng(5))
    again = print_sprite(np.random.default_rng(5))
    other = print_sprite(np.random.default_rng(6))
    assert np.array_equal(first, again)
    assert first.shape != other.shape or not np.array_equal(first, other)


def test_pages_carry_dark_text_and_covers_carry_pictures() -> None:
    """Across seeds both kinds come up: pages mostly pale paper with fine dark strokes
    (text), and pieces mostly covered by colourful picture."""
    pages = pictures = 0
    for seed in range(30):
        sprite = print_sprite(np.random.default_rng(seed))[..., :3].astype(int)
        h_mm, w_mm = np.array(sprite.shape[:2]) / PRINT_PX_PER_MM
        assert 110 <= w_mm <= 260 and 140 <= h_mm <= 300
        grey = sprite.mean(axis=2)
        pale = (grey > 200).mean()
        dark = (grey < 80).mean()
        colourful = (sprite.max(axis=2) - sprite.min(axis=2) > 40).mean()
        pages += pale > 0.4 and 0.01 < dark < 0.4
        pictures += colourful > 0.4
    assert pages >= 5 and pictures >= 5, (pages, pictures)
