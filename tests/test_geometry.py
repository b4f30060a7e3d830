"""Shared table geometry: card outlines, touching, cover, coin beds."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from referee.geometry import (
    GeometryError,
    bed_of_disc,
    card_outline,
    fully_covers,
    gap_mm,
    overlap_mm2,
    touches,
)


def rect(x: float, y: float, w: float = 63, h: float = 88) -> list[tuple[float, float]]:
    return [(x, y), (x + w, y), (x + w, y + h), (x, y + h)]


def test_corner_order_does_not_matter() -> None:
    a = card_outline(rect(0, 0))
    b = card_outline([(63, 88), (0, 0), (0, 88), (63, 0)])
    assert a.area == pytest.approx(63 * 88) and a.equals(b)


@pytest.mark.parametrize("corners", [rect(0, 0)[:3], [(0, 0)] * 4, rect(0, 0, 1, 1)])
def test_degenerate_corners_are_refused(corners: list[tuple[float, float]]) -> None:
    with pytest.raises(GeometryError):
        card_outline(corners)


def test_touching_needs_more_overlap_than_the_tolerance() -> None:
    a = card_outline(rect(0, 0))
    assert not touches(a, card_outline(rect(63, 0)), 20)  # edges meet
    assert not touches(a, card_outline(rect(63 - 0.2, 0)), 20)  # 17.6 mm^2
    assert touches(a, card_outline(rect(63 - 0.3, 0)), 20)  # 26.4 mm^2


def test_full_cover_and_gap() -> None:
    small = card_outline(rect(10, 10))
    big = card_outline(rect(0, 0, 90, 110))
    assert fully_covers(big, small, 20) and not fully_covers(small, big, 20)
    assert gap_mm(card_outline(rect(0, 0)), card_outline(rect(73, 0))) == pytest.approx(10)


@example(dx=4.5633932766262895e-174, dy=4.5633932766262895e-174, angle=3.0)  # found by CI
@given(dx=st.floats(-200, 200), dy=st.floats(-200, 200), angle=st.floats(0, 6.28))
def test_overlap_is_symmetric_and_bounded(dx: float, dy: float, angle: float) -> None:
    import math

    c, s = math.cos(angle), math.sin(angle)
    turned = [(dx + x * c - y * s, dy + x * s + y * c) for x, y in rect(0, 0)]
    a, b = card_outline(rect(0, 0)), card_outline(turned)
    area = overlap_mm2(a, b)
    assert area == pytest.approx(overlap_mm2(b, a), abs=1e-6)
    assert 0 <= area <= 63 * 88 + 1e-6


@pytest.mark.parametrize(
    ("y", "bed"),
    [(76.2, 1), (50.8 + 10.6, 1), (50.8 + 10.4, None), (101.6 - 10.6, 1), (101.6 - 10.4, None),
     (30.0, None), (7.5 * 50.8, 7), (8.5 * 50.8, None)],
)
def test_coin_beds(y: float, bed: int | None) -> None:
    verdict = bed_of_disc((100.0, y), 9.5, tile_mm=50.8, seam_mm=2, beds=7)
    assert verdict.bed == bed
    assert (verdict.clearance_mm > 0) == (bed is not None) or y < 50.8 or y > 8 * 50.8
