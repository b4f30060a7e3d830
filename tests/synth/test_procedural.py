"""Procedural deck designs: complete, card-shaped, with both index corners inked."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image as PILImage

from synth.decks import decks_for
from synth.procedural import (
    BACK_STYLES,
    BOLD_BACK_SHARE,
    FIRST_BACK_STYLES,
    FIRST_JOKER_STYLES,
    JOKER_STYLES,
    JUMBO_INDEX_END_MM,
    JUMBO_RANK_MM,
    STAND_IN_FIRST,
    H,
    W,
    _back,
    _face,
    _Recipe,
    _suit,
    procedural_decks,
    rasterise_procedural,
    turned_index_hidden,
)


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TABLETOP_CACHE", str(tmp_path))


def _ink(card: np.ndarray, rows: slice, cols: slice) -> float:
    """Fraction of pixels in the window clearly darker or more colourful than the paper."""
    bgr = card[rows, cols, :3].astype(np.int16)
    paper = np.median(card[H // 2 - 5:H // 2 + 5, 2:12, :3].reshape(-1, 3), axis=0)
    return float((np.abs(bgr - paper).max(axis=2) > 60).mean())


def test_a_procedural_deck_has_every_card_with_both_indices() -> None:
    paths = rasterise_procedural("proc:03")
    assert len(paths) == 54 and all(p.exists() for p in paths.values())
    side = 26 * 4  # 26 mm at 4 px/mm: inside every index cut the referee has read
    for code in ("AS", "7H", "TD", "QC", "KH"):
        card = cv2.imread(str(paths[code]), cv2.IMREAD_UNCHANGED)
        assert card.shape == (H, W, 4)
        assert card[0, 0, 3] == 0 and card[H // 2, W // 2, 3] == 255  # rounded corners
        top_left = _ink(card, slice(0, side), slice(0, side))
        bottom_right = _ink(card, slice(H - side, H), slice(W - side, W))
        assert top_left > 0.02 and bottom_right > 0.02, code
        assert abs(top_left - bottom_right) < 0.5 * max(top_left, bottom_right), code


def test_designs_differ_and_are_reproducible(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    a = cv2.imread(str(rasterise_procedural("proc:00")["5S"]), cv2.IMREAD_UNCHANGED)
    b = cv2.imread(str(rasterise_procedural("proc:01")["5S"]), cv2.IMREAD_UNCHANGED)
    assert np.abs(a.astype(int) - b.astype(int)).mean() > 2.0
    again_dir = tmp_path / "again"
    again_dir.mkdir()
    monkeypatch.setenv("TABLETOP_CACHE", str(again_dir))
    c = cv2.imread(str(rasterise_procedural("proc:00")["5S"]), cv2.IMREAD_UNCHANGED)
    assert np.array_equal(a, c)


def test_procedural_designs_only_train() -> None:
    names = set(procedural_decks(24))
    assert names <= set(decks_for("train"))
    assert not names & (set(decks_for("val")) | set(decks_for("test")))


@pytest.mark.parametrize("style", range(JOKER_STYLES))
def test_every_joker_style_marks_both_corners(style: int) -> None:
    recipe = _Recipe(5)
    recipe.joker_style = style
    recipe.joker_once = False
    card = cv2.cvtColor(np.asarray(_face(recipe, "JK")), cv2.COLOR_RGBA2BGRA)
    side = 26 * 4
    assert _ink(card, slice(0, side), slice(0, side)) > 0.01
    assert _ink(card, slice(H - side, H), slice(W - side, W)) > 0.01


@pytest.mark.parametrize("style", range(BACK_STYLES))
def test_every_back_style_is_patterned_and_has_no_index(style: int) -> None:
    recipe = _Recipe(7)
    recipe.back_pattern = style
    back = np.asarray(_back(recipe))[..., :3].astype(np.float32)
    middle = back[H // 4:3 * H // 4, W // 4:3 * W // 4]
    assert middle.std() > 3  # not a blank card
    # The same all over: a half turn shows the same kind of picture (no corner index).
    assert abs(back[:H // 3].std() - back[-H // 3:].std()) < 0.5 * back.std() + 5


def test_drawn_diamonds_are_rounded_or_slim_diamonds() -> None:
    recipe = _Recipe(5)
    filled = {}
    for style in ("rounded", "slim"):
        recipe.diamond, recipe.diamond_power = style, 1.3
        sign = np.asarray(_suit(recipe, "D", 80, (200, 0, 0)))[..., 3] > 127
        filled[style] = sign.mean()  # of its bounding box: a diamond 0.5, an ellipse 0.79
        assert sign.shape[0] == 80 and sign[40, sign.shape[1] // 2]
    assert 0.45 < filled["slim"] < 0.55
    assert 0.55 < filled["rounded"] < 0.75
    assert np.asarray(_suit(recipe, "H", 80, (200, 0, 0))).shape[0] == 80  # other suits: glyph


def test_a_suit_across_the_top_sits_in_the_opposite_corner() -> None:
    recipe = _Recipe(5)
    recipe.beside, recipe.across = False, True
    card = cv2.cvtColor(np.asarray(_face(recipe, "7S")), cv2.COLOR_RGBA2BGRA)
    top = slice(0, round((recipe.index_y_mm + recipe.rank_mm) * 4) + 4)
    assert _ink(card, top, slice(W - 26 * 4, W)) > 0.01  # the suit, top right
    assert _ink(card, slice(H - 26 * 4, H), slice(0, 26 * 4)) > 0.01  # and turned, bottom left


def test_a_giant_pip_deck_draws_one_big_pip_for_a_number_card() -> None:
    recipe = _Recipe(5)
    recipe.giant = True
    card = cv2.cvtColor(np.asarray(_face(recipe, "9H")), cv2.COLOR_RGBA2BGRA)
    middle = _ink(card, slice(H // 2, 3 * H // 4), slice(W // 3, 2 * W // 3))
    assert middle > 0.8  # solid ink where nine pips would leave paper between them


def _middle_ink(card: PILImage.Image) -> float:
    bgra = cv2.cvtColor(np.asarray(card), cv2.COLOR_RGBA2BGRA)
    return _ink(bgra, slice(H // 4, 3 * H // 4), slice(W // 8, 7 * W // 8))


@pytest.mark.parametrize("code", ["AS", "AC"])
def test_an_ornate_ace_is_big_and_decorated_in_either_suit(code: str) -> None:
    recipe = _Recipe(5)
    recipe.ornate_spade = recipe.ornate_others = False
    plain = _middle_ink(_face(recipe, code))
    recipe.ornate_spade = recipe.ornate_others = True
    recipe.ace_scroll = recipe.ace_ring = recipe.ace_word = True
    ornate = _face(recipe, code)
    assert _middle_ink(ornate) > 1.5 * plain
    # only the ace of spades has paper-coloured detail in its pip
    recipe.ace_inner = False
    assert (np.asarray(_face(recipe, code)) != np.asarray(ornate)).any() == (code == "AS")


def test_a_drawn_jester_fills_the_middle_in_colours_and_differs_by_design() -> None:
    faces = []
    for index in range(40):
        recipe = _Recipe(index)
        if recipe.drawn_joker:
            faces.append(np.asarray(_face(recipe, "JK"))[..., :3].astype(np.int16))
    assert 10 <= len(faces) <= 35  # most training designs, not all
    for face in faces[:5]:
        middle = face[H // 4:3 * H // 4, W // 4:3 * W // 4]
        colourful = (middle.max(axis=2) - middle.min(axis=2)) > 60
        assert colourful.mean() > 0.05  # a coloured figure, not the paper
    assert np.abs(faces[0] - faces[1]).mean() > 5  # each design draws its own jester


def test_recipes_4_give_training_designs_new_jokers_and_leave_the_stand_ins() -> None:
    """Recipes 4 draw new jokers for training designs only: the designs standing in for a
    validation or held-out design's missing joker or back stay as recipes 3 drew them."""
    stand_in = _Recipe(STAND_IN_FIRST + 57)
    assert not stand_in.drawn_joker and stand_in.joker_style < FIRST_JOKER_STYLES
    styles = {_Recipe(i).joker_style for i in range(STAND_IN_FIRST, STAND_IN_FIRST + 100)}
    assert styles <= set(range(FIRST_JOKER_STYLES))
    assert any(_Recipe(i).joker_style == 6 for i in range(96))


def test_recipes_7_write_some_jokers_across_the_top_some_only_once() -> None:
    """Recipes 7: about three in ten training designs write "Joker" across the top (a big
    "J", "oker" small beside it); about half of those print it only at the top, whose
    turned corner then shows no index and is no sample of one."""
    across = [i for i in range(96) if _Recipe(i).joker_style == 7]
    assert 15 <= len(across) <= 45
    once = [i for i in across if _Recipe(i).joker_once]
    assert 0 < len(once) < len(across)
    assert all(_Recipe(i).joker_style < 7 for i in range(STAND_IN_FIRST, STAND_IN_FIRST + 100))
    card = cv2.cvtColor(np.asarray(_face(_Recipe(once[0]), "JK")), cv2.COLOR_RGBA2BGRA)
    top = _ink(card, slice(0, 20 * 4), slice(0, W))
    recipe = _Recipe(once[0])
    recipe.joker_once = False
    twice = cv2.cvtColor(np.asarray(_face(recipe, "JK")), cv2.COLOR_RGBA2BGRA)
    assert np.array_equal(card[:H // 2], twice[:H // 2])  # the same word at the top
    assert top > 0.01
    assert not np.array_equal(card[-20 * 4:], twice[-20 * 4:])  # the turned copy is gone
    assert turned_index_hidden(f"proc:{once[0]:02d}", "JK")
    printed_twice = next(i for i in across if i not in once)
    assert not turned_index_hidden(f"proc:{printed_twice:02d}", "JK")


def test_recipes_8_print_some_training_backs_to_the_edge_in_a_bold_repeat() -> None:
    """Recipes 8: about four in ten training designs print their back to the card's edge
    (or a thin margin) as a lattice, rosettes or checks; the stand-ins keep their backs."""
    bold = [i for i in range(96) if _Recipe(i).back_pattern >= FIRST_BACK_STYLES]
    assert 0.5 * BOLD_BACK_SHARE * 96 <= len(bold) <= 1.5 * BOLD_BACK_SHARE * 96
    assert {_Recipe(i).back_pattern for i in bold} == set(range(FIRST_BACK_STYLES, BACK_STYLES))
    assert all(_Recipe(i).back_pattern < FIRST_BACK_STYLES
               for i in range(STAND_IN_FIRST, STAND_IN_FIRST + 100))
    edge = next(i for i in bold if _Recipe(i).back_inset_mm == 0.0)
    back = cv2.cvtColor(np.asarray(_back(_Recipe(edge))), cv2.COLOR_RGBA2BGRA)
    paper = np.array(_Recipe(edge).paper[::-1])
    rim = np.concatenate([back[:3, 12:-12, :3].reshape(-1, 3), back[12:-12, :3, :3].reshape(-1, 3)])
    assert (np.abs(rim.astype(int) - paper).max(axis=1) > 40).mean() > 0.5  # print, not margin


@pytest.mark.parametrize("style", range(FIRST_BACK_STYLES, BACK_STYLES))
def test_a_bold_back_shows_more_than_one_colour_in_both_index_corners(style: int) -> None:
    """Each bold style, printed to the edge, shows more than one colour within both
    corners' 26 x 32 mm the index model cuts (no plain ground for it to take for table)."""
    recipe = _Recipe(9)
    recipe.back_pattern, recipe.back_inset_mm = style, 0.0
    back = np.asarray(_back(recipe))[..., :3].astype(np.float32)
    for corner in (back[:32 * 4, :26 * 4], back[-32 * 4:, -26 * 4:]):
        assert corner.std(axis=(0, 1)).max() > 20


def test_recipes_5_give_some_training_designs_jumbo_indices_that_fit_the_index_cut() -> None:
    """Recipes 5: about a fifth of the training designs print a rank 11.5-17 mm tall (real
    jumbo-index decks, aisleriot tango_nuevo), its suit below it inside the 32 mm index cut
    or across the top; the stand-in designs keep their indices."""
    jumbo = [r for r in (_Recipe(i) for i in range(96)) if r.rank_mm > 10.5]
    assert 10 <= len(jumbo) <= 30
    assert all(JUMBO_RANK_MM[0] <= r.rank_mm <= JUMBO_RANK_MM[1] for r in jumbo)
    assert any(r.across for r in jumbo) and any(not r.across for r in jumbo)
    assert any(r.across and r.giant for r in jumbo)
    for r in jumbo:
        if not r.across:
            end = r.index_y_mm + r.rank_mm + 0.9 + r.suit_mm
            assert end <= JUMBO_INDEX_END_MM + 1e-9
    assert all(_Recipe(i).rank_mm <= 10.5 for i in range(STAND_IN_FIRST, STAND_IN_FIRST + 100))
    recipe = next(r for r in jumbo if not r.across)
    card = cv2.cvtColor(np.asarray(_face(recipe, "7S")), cv2.COLOR_RGBA2BGRA)
    rank_bottom = round((recipe.index_y_mm + recipe.rank_mm) * 4)
    suit = slice(rank_bottom + 4, round(JUMBO_INDEX_END_MM * 4))
    assert _ink(card, suit, slice(0, 26 * 4)) > 0.01  # the suit under the rank, in the cut


def test_recipes_6_draw_some_giant_pips_running_off_the_card_over_the_turned_index() -> None:
    """Recipes 6: some giant-pip designs draw the pip 0.6-0.8 of the card tall, low and
    right, cut by the card's edges (aisleriot tango_nuevo's cartoon pips), clear of the
    top-left index; the turned index it covers is no sample for the index model."""
    bleeding = [i for i in range(96) if _Recipe(i).bleed]
    assert bleeding and all(_Recipe(i).giant for i in bleeding)
    assert not any(_Recipe(i).bleed for i in range(STAND_IN_FIRST, STAND_IN_FIRST + 100))
    recipe = _Recipe(bleeding[0])
    card = cv2.cvtColor(np.asarray(_face(recipe, "7S")), cv2.COLOR_RGBA2BGRA)
    edges = (_ink(card, slice(H - 12, H - 4), slice(W // 3, W - 4)),  # the bottom edge
             _ink(card, slice(H // 2, H - 4), slice(W - 10, W - 4)))  # the right edge
    assert max(edges) > 0.1  # the pip runs off the card
    rank_end = round((recipe.index_y_mm + recipe.rank_mm) * 4)
    assert _ink(card, slice(0, rank_end), slice(0, 26 * 4)) > 0.01  # the index still shows
    assert _ink(card, slice(rank_end + 24, rank_end + 28), slice(0, 8)) == 0.0  # pip below it
    assert turned_index_hidden(f"proc:{bleeding[0]:02d}", "7S")
    assert not turned_index_hidden(f"proc:{bleeding[0]:02d}", "KS")  # courts: no pip
    plain = next(i for i in range(96) if not _Recipe(i).bleed)
    assert not turned_index_hidden(f"proc:{plain:02d}", "7S")
    assert not turned_index_hidden("aisleriot:tango_nuevo", "7S")
