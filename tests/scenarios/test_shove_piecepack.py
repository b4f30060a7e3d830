"""Shove piecepack (rules.md §2), in the board frame: line k at y = k * 50.8 mm,
playing width x in [0, 203.2], coins of radius 9.5 mm, seams 2 mm wide.

alice (listed first) shoves first; a turn is five played coins.
"""

from __future__ import annotations

from scenario_tools import Timeline, dump, of_kind

GAME = "shove-piecepack"
PLAYERS = ["alice", "bob"]
TILE = 50.8
R = 9.5


def line_y(k: int, tile: float = TILE) -> float:
    return k * tile


def bed_y(k: int, tile: float = TILE) -> float:
    """Centre of bed k (between line k and line k+1)."""
    return (k + 0.5) * tile


def coin(cid: str, x: float, y: float, r: float = R) -> dict:
    return {"type": "coin_stopped", "id": cid, "center": [x, y], "radius": r}


# Coins resting on line 1: played (they reach line 1) but touching it, so never scoring.
DUD_XS = (30, 70, 130, 170, 190)


def shove_turn(
    tl: Timeline,
    prefix: str,
    scoring: list[tuple[float, float]],
    n_duds: int | None = None,
    tile: float = TILE,
) -> tuple[float, float]:
    """Shove the given coin centres, then duds on line 1 until five coins are played.

    Returns (t of first coin, t of last coin)."""
    n_duds = 5 - len(scoring) if n_duds is None else n_duds
    ts = []
    for i, (x, y) in enumerate(scoring, 1):
        ts.append(tl.add(coin(f"{prefix}{i}", x, y)))
    for j in range(n_duds):
        ts.append(tl.add(coin(f"{prefix}d{j}", DUD_XS[j], line_y(1, tile))))
    return ts[0], ts[-1]


def scored(rulings: list[dict], since: float | None = None, until: float | None = None):
    return [
        (r["bed"], r["scored_by"], r["credited_to"])
        for r in of_kind(rulings, "bed_scored", since=since, until=until)
    ]


def test_single_scoring_coin_credited_to_shooter_and_turn_passes(adjudicate):
    tl = Timeline()
    _, t_end = shove_turn(tl, "a", [(100, bed_y(1))])
    rulings = adjudicate(GAME, tl.obs, PLAYERS)
    assert scored(rulings) == [(1, "alice", "alice")]
    turn = of_kind(rulings, "turn", since=t_end)
    assert turn and turn[0].get("player") == "bob", dump(rulings)


def test_no_scoring_before_the_fifth_played_coin(adjudicate):
    tl = Timeline()
    shove_turn(tl, "a", [(100, bed_y(1))], n_duds=3)  # only four coins so far
    rulings = adjudicate(GAME, tl.obs, PLAYERS)
    assert scored(rulings) == []
    assert [r for r in of_kind(rulings, "turn") if r.get("player") == "bob"] == []


def test_coin_short_of_line_1_is_not_played_and_does_not_count(adjudicate):
    tl = Timeline()
    t_short = tl.add(coin("c1", 100, 40))  # far edge at 49.5 < 50.8
    tl.add(coin("c1", 100, bed_y(2)))  # shoved again, now played
    for i, x in enumerate(DUD_XS[:3], 2):
        tl.add(coin(f"c{i}", x, line_y(1)))
    # Five coin_stopped lines but only four played coins: the turn is not over.
    partial = adjudicate(GAME, tl.obs, PLAYERS)
    np = of_kind(partial, "not_played")
    assert len(np) == 1 and np[0]["t"] >= t_short, dump(partial)
    assert scored(partial) == []
    # The fifth played coin ends the turn.
    tl.add(coin("c5", DUD_XS[3], line_y(1)))
    full = adjudicate(GAME, tl.obs, PLAYERS)
    assert scored(full) == [(2, "alice", "alice")]


def test_coin_touching_a_line_does_not_score(adjudicate):
    # Lower edge 0.5 mm above line 1: within seam_mm / 2 = 1 mm, so it touches the line.
    # The second coin's far edge is at 51.5 >= 50.8: it reaches line 1 (played, no score).
    tl = Timeline()
    shove_turn(tl, "a", [(100, line_y(1) + R + 0.5), (60, 42)])
    rulings = adjudicate(GAME, tl.obs, PLAYERS)
    assert of_kind(rulings, "not_played") == [], dump(rulings)
    assert scored(rulings) == []
    assert [r for r in of_kind(rulings, "turn") if r.get("player") == "bob"], dump(rulings)


def test_coin_clear_of_the_seam_scores(adjudicate):
    # Lower edge 1.5 mm above line 1: clear of the 1 mm half-seam.
    tl = Timeline()
    shove_turn(tl, "a", [(100, line_y(1) + R + 1.5)])
    assert scored(adjudicate(GAME, tl.obs, PLAYERS)) == [(1, "alice", "alice")]


def test_seam_mm_setting(adjudicate):
    # With 4 mm seams the half-seam is 2 mm, so a 1.5 mm clearance touches the line.
    tl = Timeline()
    shove_turn(tl, "a", [(100, line_y(1) + R + 1.5)])
    assert scored(adjudicate(GAME, tl.obs, PLAYERS, {"seam_mm": 4})) == []


def test_coin_outside_the_playing_width_does_not_score(adjudicate):
    tl = Timeline()
    shove_turn(tl, "a", [(5, bed_y(2)), (4 * TILE - 5, bed_y(3)), (100, bed_y(4))])
    # the first two discs stick out over x = 0 and x = 203.2; only the bed-4 coin counts
    assert scored(adjudicate(GAME, tl.obs, PLAYERS)) == [(4, "alice", "alice")]


def test_far_beds_and_beyond_the_last_line(adjudicate):
    tl = Timeline()
    shove_turn(tl, "a", [(60, bed_y(7)), (140, bed_y(8))])  # bed 7; past line 8 (no bed)
    assert scored(adjudicate(GAME, tl.obs, PLAYERS)) == [(7, "alice", "alice")]


def test_only_final_positions_count_when_coins_are_knocked(adjudicate):
    tl = Timeline()
    tl.add(coin("a1", 100, bed_y(2)))  # a1 rests in bed 2 ...
    tl.add(coin("a2", 100, bed_y(3)))  # ... a2 knocks it ...
    tl.add(coin("a1", 60, line_y(2)))  # ... onto line 2, where it ends the turn
    for i, x in enumerate(DUD_XS[:3]):
        tl.add(coin(f"ad{i}", x, line_y(1)))
    assert scored(adjudicate(GAME, tl.obs, PLAYERS)) == [(3, "alice", "alice")]


def test_second_and_third_score_in_a_bed(adjudicate):
    # Credited in shove order: first fills alice's bed 3, the second goes to bob,
    # the third is lost because both have filled bed 3.
    tl = Timeline()
    shove_turn(tl, "a", [(40, bed_y(3)), (100, bed_y(3)), (160, bed_y(3))])
    assert scored(adjudicate(GAME, tl.obs, PLAYERS)) == [
        (3, "alice", "alice"),
        (3, "alice", "bob"),
        (3, "alice", None),
    ]


def test_scores_per_bed_setting(adjudicate):
    tl = Timeline()
    shove_turn(tl, "a", [(40, bed_y(1)), (100, bed_y(1)), (160, bed_y(1))])
    assert scored(adjudicate(GAME, tl.obs, PLAYERS, {"scores_per_bed": 2})) == [
        (1, "alice", "alice"),
        (1, "alice", "alice"),
        (1, "alice", "bob"),
    ]


def test_coins_are_cleared_after_each_turn(adjudicate):
    tl = Timeline()
    shove_turn(tl, "a", [(100, bed_y(3))])
    t_bob = tl.now
    shove_turn(tl, "b", [])  # bob: five duds
    rulings = adjudicate(GAME, tl.obs, PLAYERS)
    assert scored(rulings, until=t_bob) == [(3, "alice", "alice")]
    assert scored(rulings, since=t_bob) == []
    # and after bob's turn it is alice's again
    turns = of_kind(rulings, "turn", since=tl.now - 1)
    assert turns and turns[-1].get("player") == "alice", dump(rulings)


def test_bob_scores_for_himself_on_his_turn(adjudicate):
    tl = Timeline()
    shove_turn(tl, "a", [(100, bed_y(5))])
    t_bob = tl.now
    shove_turn(tl, "b", [(100, bed_y(5)), (40, bed_y(5))])
    rulings = adjudicate(GAME, tl.obs, PLAYERS)
    # bob's first bed-5 score is his own; his second would go to alice, who has filled it: lost.
    assert scored(rulings, since=t_bob) == [(5, "bob", "bob"), (5, "bob", None)]


SHORT = {"tiles_per_side": 4}  # lines 1-3, beds 1-2


def test_short_shove_has_fewer_beds(adjudicate):
    tl = Timeline()
    shove_turn(tl, "a", [(60, bed_y(2)), (140, bed_y(3))])  # bed 3 does not exist here
    assert scored(adjudicate(GAME, tl.obs, PLAYERS, SHORT)) == [(2, "alice", "alice")]


def test_first_to_fill_every_bed_wins(adjudicate):
    tl = Timeline()
    shove_turn(tl, "a", [(60, bed_y(1)), (140, bed_y(2))])
    rulings = adjudicate(GAME, tl.obs, PLAYERS, SHORT)
    assert scored(rulings) == [(1, "alice", "alice"), (2, "alice", "alice")]
    over = of_kind(rulings, "game_over")
    assert over and over[0]["winner"] == "alice", dump(rulings)


def test_score_completing_opponents_last_bed_is_never_given(adjudicate):
    tl = Timeline()
    shove_turn(tl, "a", [(100, bed_y(2))])  # alice fills bed 2
    shove_turn(tl, "b", [(100, bed_y(1))])  # bob fills bed 1; bed 2 is his last
    t3 = tl.now
    shove_turn(tl, "a", [(100, bed_y(2))])  # would go to bob and complete his board
    rulings = adjudicate(GAME, tl.obs, PLAYERS, SHORT)
    assert scored(rulings, since=t3) == [(2, "alice", None)]
    assert of_kind(rulings, "game_over") == [], dump(rulings)


def test_tile_mm_setting_moves_the_lines(adjudicate):
    # y = 60: in bed 1 of a 40 mm board (lines at 40 and 80), on line 1 of the default board.
    tl = Timeline()
    shove_turn(tl, "a", [(100, 60)], tile=40)
    assert scored(adjudicate(GAME, tl.obs, PLAYERS, {"tile_mm": 40})) == [(1, "alice", "alice")]
    tl2 = Timeline()
    shove_turn(tl2, "a", [(100, 60)])
    assert scored(adjudicate(GAME, tl2.obs, PLAYERS)) == []


def test_progressive_variant_scoring_coin_is_replayed_in_the_same_turn(adjudicate):
    tl = Timeline()
    _, t_end = shove_turn(tl, "a", [(100, bed_y(2))])
    rulings = adjudicate(GAME, tl.obs, PLAYERS, {"variant": "progressive"})
    assert scored(rulings) == [(2, "alice", "alice")]
    # the scoring coin comes back to alice: her turn is not over
    assert [r for r in of_kind(rulings, "turn", since=t_end) if r.get("player") == "bob"] == []
    # in the standard game the same five coins end her turn
    standard = adjudicate(GAME, tl.obs, PLAYERS)
    assert [r for r in of_kind(standard, "turn", since=t_end) if r.get("player") == "bob"]
