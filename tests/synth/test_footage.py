"""The scripted clips' ground truth: no ruling may hang on less than the camera can see."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.calibration.layouts import PiecepackLayout, layout_for_game
from referee.geometry.shapes import bed_of_disc
from synth.footage.board_games import DECISIVE_MM, SEAM_MM, _knocks, decisive
from synth.footage.clip import ClipBuilder
from synth.pieces import COIN_MM
from synth.scene import Placed

LAYOUT = layout_for_game("shove-piecepack")
assert isinstance(LAYOUT, PiecepackLayout)
PITCH = LAYOUT.pitch_mm
R = COIN_MM / 2


@settings(max_examples=300, deadline=None)
@given(st.floats(0, 4 * PITCH), st.floats(10, 9 * PITCH))
def test_a_scripted_coin_is_clearly_on_or_clear_of_every_line(x: float, y: float) -> None:
    x2, y2 = decisive(LAYOUT, x, y)
    verdict = bed_of_disc((x2, y2), R, tile_mm=PITCH, seam_mm=SEAM_MM, beds=LAYOUT.lines - 1)
    assert abs(verdict.clearance_mm) >= DECISIVE_MM - 1e-9
    assert abs(y2 + R - PITCH) >= DECISIVE_MM - 1e-9  # line 1's reach
    assert math.dist((x, y), (x2, y2)) <= 2 * DECISIVE_MM + 1.0


def _coin(uid: str, x: float, y: float) -> Placed:
    return Placed(uid, "coin", "suns", (x, y), 0.0, (COIN_MM, COIN_MM), height_mm=2.5)


def test_coins_knocked_together_never_end_up_lying_on_each_other() -> None:
    for seed in range(30):
        rng = np.random.default_rng(seed)
        clip = ClipBuilder(rng)
        # Two coins one behind the other in the path of a third.
        for uid, x, y in (("a", 100.0, 120.0), ("b", 102.0, 150.0)):
            clip.objects[uid] = _coin(uid, x, y)
        shoved = _coin("c", 101.0, 140.0)
        knocks = _knocks(rng, clip, ["a", "b"], shoved, LAYOUT)
        assert len(knocks) == 2
        places = [shoved.center, *(after.center for _, after in knocks)]
        for i, p in enumerate(places):
            for q in places[i + 1:]:
                assert math.dist(p, q) >= COIN_MM


def test_a_script_filmed_at_30_fps_has_twice_the_frames_and_the_same_story() -> None:
    from synth.footage.make import SCRIPTS

    for game, script in SCRIPTS.items():
        slow = script(np.random.default_rng(3), "kde:svg-jolly-royal", fps=15.0).clip
        fast = script(np.random.default_rng(3), "kde:svg-jolly-royal", fps=30.0).clip
        assert abs(len(fast.frames) - 2 * len(slow.frames)) <= 0.05 * len(fast.frames), game
        assert [o["type"] for o in fast.observations] == [o["type"] for o in slow.observations]
        # Events happen at the same time of the game (each action's length is rounded to
        # whole frames, so the times drift apart a little).
        for a, b in zip(slow.observations, fast.observations, strict=True):
            assert abs(a["t"] - b["t"]) <= 0.1 + 0.04 * a["t"], (game, a, b)



def test_a_shove_board_ruled_illegal_is_put_back_on_the_table_and_in_the_truth() -> None:
    # `synth.footage.make --game shove --seed 1302 --fps 25`: red ended its phase on the
    # victory square and was ruled illegal; the script went on from the engine's last legal
    # board while the token stayed on the victory square, so the truth no longer described
    # the table. Every board_state a script records must be the tokens lying on the table.
    from synth.decks import decks_for
    from synth.footage.board_games import shove_grid

    square = layout_for_game("shove").square_mm  # type: ignore[union-attr]
    for seed in (1302, *range(1290, 1300)):
        rng = np.random.default_rng(seed)  # as make_clip draws the deck, then the script
        decks = decks_for("val")
        clip = shove_grid(rng, decks[int(rng.integers(len(decks)))], fps=25.0).clip
        for board in (o for o in clip.observations if o["type"] == "board_state"):
            scene = clip.frames[round(board["t"] * clip.fps) - 1]
            seen: dict[str, list[list[int]]] = {"red": [], "blue": []}
            for obj in scene.objects:
                if obj.kind == "token":
                    row, col = (int(v // square) for v in obj.center[::-1])
                    seen[obj.label].append([row, col])
            assert sorted(seen["red"]) == board["red"], (seed, board["t"])
            assert sorted(seen["blue"]) == board["blue"], (seed, board["t"])


@pytest.mark.parametrize("game", ["shove-piggy-shove", "push-out-the-pig", "slapstick"])
def test_a_card_game_is_played_with_cards_of_the_size_asked(game: str) -> None:
    # (``synth.footage.make --card-mm``: a bridge deck, for the referee's card_mm)
    from synth.footage.make import SCRIPTS

    bridge = (57.0, 89.0)
    script = SCRIPTS[game](np.random.default_rng(4), "aisleriot:anglo_poker", fps=10.0,
                           card_mm=bridge)
    placed = [o for o in script.clip.observations if o["type"] == "card_placed"]
    assert placed
    for observation in placed:
        corners = np.array(observation["corners"])
        sides = np.linalg.norm(corners - np.roll(corners, -1, axis=0), axis=1)
        assert np.allclose(sorted(sides), [57.0, 57.0, 89.0, 89.0], atol=0.05)
    cards = [o for scene in script.clip.frames for o in scene.objects if o.kind == "card"]
    assert cards and all(o.size_mm == bridge for o in cards)
