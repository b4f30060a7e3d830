"""Shove Piggy Shove (rules.md §1).

Cards are axis-aligned poker cards, 63 x 88 mm, placed with their lower-left corner at (x, y).
Players: alice is listed first, so in round 1 she is the "previous winner" who places the first
card; bob is the "previous loser" who places the second card and then shoves first.
"""

from __future__ import annotations

import pytest
from scenario_tools import (
    Timeline,
    assert_illegal,
    assert_legal,
    dump,
    first_at_or_after,
    of_kind,
    verdict,
)

GAME = "shove-piggy-shove"
PLAYERS = ["alice", "bob"]
W, H = 63, 88
BONUS_KINDS = ("match", "double", "chain", "piggy")


def card(code: str, x: float, y: float, player: str) -> dict:
    return {
        "type": "card_placed",
        "card": code,
        "corners": [[x, y], [x + W, y], [x + W, y + H], [x, y + H]],
        "player": player,
    }


def take_back(code: str, player: str) -> dict:
    return {"type": "card_removed", "card": code, "player": player}


def oink(player: str) -> dict:
    return {"type": "declare", "player": player, "what": "oink"}


def bonuses(ruling: dict) -> dict:
    b = ruling.get("bonuses") or {}
    return {k: b.get(k, 0) for k in BONUS_KINDS}


NO_BONUS = dict.fromkeys(BONUS_KINDS, 0)


def run(adjudicate, tl: Timeline, settings: dict | None = None) -> list[dict]:
    return adjudicate(GAME, tl.obs, PLAYERS, settings)


def opening(tl: Timeline, first: tuple, second: tuple) -> tuple[float, float]:
    """alice places `first` (code, x, y), bob places `second`."""
    t1 = tl.add(card(*first, "alice"))
    t2 = tl.add(card(*second, "bob"))
    return t1, t2


# A standard table used by several shove tests:
#   4C at (0,0) (alice's opening card), 7D at (150,0) (bob's, 87 mm away, 3 ranks apart).
def standard_opening(tl: Timeline) -> None:
    opening(tl, ("4C", 0, 0), ("7D", 150, 0))


# ---------------------------------------------------------------- opening


def test_opening_far_apart_and_three_ranks_apart_is_legal(adjudicate):
    tl = Timeline()
    t1, t2 = opening(tl, ("2C", 0, 0), ("5D", 100, 0))  # gap 37 mm, ranks 2 and 5
    rulings = run(adjudicate, tl)
    assert_legal(verdict(rulings, t1))
    second = verdict(rulings, t2)
    assert_legal(second)
    assert second["hand_counts"] == {"alice": 6, "bob": 6}


def test_first_card_by_previous_loser_is_out_of_turn(adjudicate):
    tl = Timeline()
    t = tl.add(card("2C", 0, 0, "bob"))
    rulings = run(adjudicate, tl)
    r = verdict(rulings, t)
    assert_illegal(r, "out_of_turn")
    assert r["hand_counts"] == {"alice": 7, "bob": 7}


def test_opening_two_ranks_apart_is_illegal_and_hand_unchanged(adjudicate):
    tl = Timeline()
    _, t2 = opening(tl, ("2C", 0, 0), ("4D", 100, 0))
    tl.add(take_back("4D", "bob"))
    t3 = tl.add(card("5D", 100, 0, "bob"))
    rulings = run(adjudicate, tl)
    bad = verdict(rulings, t2)
    assert_illegal(bad)
    assert bad["hand_counts"] == {"alice": 6, "bob": 7}
    good = verdict(rulings, t3)
    assert_legal(good)
    assert good["hand_counts"] == {"alice": 6, "bob": 6}


def test_opening_gap_below_open_gap_mm_is_illegal(adjudicate):
    tl = Timeline()
    _, t2 = opening(tl, ("2C", 0, 0), ("6D", 68, 0))  # 5 mm gap < default 10 mm
    assert_illegal(verdict(run(adjudicate, tl), t2))


def test_opening_gap_setting_open_gap_mm(adjudicate):
    tl = Timeline()
    _, t2 = opening(tl, ("2C", 0, 0), ("6D", 68, 0))  # 5 mm gap >= 3 mm
    assert_legal(verdict(run(adjudicate, tl, {"open_gap_mm": 3}), t2))


@pytest.mark.parametrize(
    ("first", "second", "legal_when_wrapping", "legal_without_wrap"),
    [
        ("KS", "2H", False, True),  # K-A-2: 2 apart when wrapping, 11 apart otherwise
        ("KS", "AH", False, True),  # 1 apart when wrapping
        ("KS", "3H", True, True),  # 3 apart when wrapping
    ],
)
def test_opening_rank_distance_wraps_setting(
    adjudicate, first, second, legal_when_wrapping, legal_without_wrap
):
    tl = Timeline()
    _, t2 = opening(tl, (first, 0, 0), (second, 200, 0))
    default = verdict(run(adjudicate, tl), t2)
    no_wrap = verdict(run(adjudicate, tl, {"open_distance_wraps": "false"}), t2)
    assert default["kind"] == ("legal" if legal_when_wrapping else "illegal"), default
    assert no_wrap["kind"] == ("legal" if legal_without_wrap else "illegal"), no_wrap


# ---------------------------------------------------------------- turn order after the opening


def test_previous_loser_shoves_first_after_the_opening(adjudicate):
    tl = Timeline()
    standard_opening(tl)
    t = tl.add(card("5H", 40, 60, "bob"))
    rulings = run(adjudicate, tl)
    assert_legal(verdict(rulings, t))
    turns = of_kind(rulings, "turn", until=t)
    assert turns and turns[-1].get("player") == "bob", dump(rulings)


def test_shove_by_previous_winner_after_opening_is_out_of_turn(adjudicate):
    tl = Timeline()
    standard_opening(tl)
    t = tl.add(card("5H", 40, 60, "alice"))
    r = verdict(run(adjudicate, tl), t)
    assert_illegal(r, "out_of_turn")
    assert r["hand_counts"] == {"alice": 6, "bob": 6}


# ---------------------------------------------------------------- shoves


def test_plain_shove_is_legal_without_bonus_and_passes_the_turn(adjudicate):
    tl = Timeline()
    standard_opening(tl)
    t = tl.add(card("5H", 40, 60, "bob"))  # overlaps 4C by 23 x 28 mm
    rulings = run(adjudicate, tl)
    r = verdict(rulings, t)
    assert_legal(r)
    assert bonuses(r) == NO_BONUS
    assert r["extra_turns"] == 0
    assert r["hand_counts"] == {"alice": 6, "bob": 5}
    turn = first_at_or_after(rulings, t, "turn")
    assert turn.get("player") == "alice"
    assert turn["hand_counts"] == {"alice": 6, "bob": 5}


def test_card_not_one_rank_higher_is_illegal(adjudicate):
    tl = Timeline()
    standard_opening(tl)
    t = tl.add(card("6H", 40, 60, "bob"))  # a 6 overlapping only the 4
    r = verdict(run(adjudicate, tl), t)
    assert_illegal(r, "not_one_rank_higher")
    assert r["hand_counts"] == {"alice": 6, "bob": 6}


def test_card_that_fully_covers_another_is_illegal(adjudicate):
    tl = Timeline()
    standard_opening(tl)
    t = tl.add(card("5H", 0, 0, "bob"))  # exactly on top of 4C
    r = verdict(run(adjudicate, tl), t)
    assert_illegal(r)
    assert r["hand_counts"] == {"alice": 6, "bob": 6}


def test_edge_contact_within_tolerance_is_not_touching(adjudicate):
    # 5H overlaps 4C by a 0.2 mm sliver: 0.2 x 88 = 17.6 mm^2 <= 20 mm^2, so it touches nothing.
    tl = Timeline()
    standard_opening(tl)
    t = tl.add(card("5H", 62.8, 0, "bob"))
    assert_illegal(verdict(run(adjudicate, tl), t))


def test_touch_tolerance_setting(adjudicate):
    # The same 17.6 mm^2 sliver counts as touching when the tolerance is 10 mm^2 ...
    tl = Timeline()
    standard_opening(tl)
    t = tl.add(card("5H", 62.8, 0, "bob"))
    assert_legal(verdict(run(adjudicate, tl, {"touch_tolerance_mm2": 10}), t))
    # ... and a 23 x 28 = 644 mm^2 overlap does not count when the tolerance is 1000 mm^2.
    tl2 = Timeline()
    standard_opening(tl2)
    t2 = tl2.add(card("5H", 40, 60, "bob"))
    assert_illegal(verdict(run(adjudicate, tl2, {"touch_tolerance_mm2": 1000}), t2))


def test_touching_another_rank_is_illegal(adjudicate):
    tl = Timeline()
    standard_opening(tl)
    tl.add(card("5H", 40, 60, "bob"))  # legal, turn passes to alice
    t = tl.add(card("6S", 20, 50, "alice"))  # on 5H, but also overlapping 4C
    r = verdict(run(adjudicate, tl), t)
    assert_illegal(r)
    assert r["hand_counts"] == {"alice": 6, "bob": 5}


def test_grazing_another_rank_within_tolerance_is_still_legal(adjudicate):
    # 6S overlaps 5H (40.2 x 38 mm) and grazes 4C by 0.2 x 78 = 15.6 mm^2 (not touching).
    tl = Timeline()
    standard_opening(tl)
    tl.add(card("5H", 40, 60, "bob"))
    t = tl.add(card("6S", 62.8, 10, "alice"))
    assert_legal(verdict(run(adjudicate, tl), t))


def test_illegal_card_taken_back_then_legal_play_by_same_player(adjudicate):
    tl = Timeline()
    standard_opening(tl)
    t_bad = tl.add(card("9H", 40, 60, "bob"))
    tl.add(take_back("9H", "bob"))
    t_good = tl.add(card("5H", 40, 60, "bob"))
    rulings = run(adjudicate, tl)
    assert_illegal(verdict(rulings, t_bad))
    good = verdict(rulings, t_good)
    assert_legal(good)
    assert good["hand_counts"] == {"alice": 6, "bob": 5}


def test_match_shove_earns_an_extra_turn(adjudicate):
    tl = Timeline()
    standard_opening(tl)
    t1 = tl.add(card("5C", 40, 60, "bob"))  # clubs on clubs
    t2 = tl.add(card("6H", 80, 120, "bob"))  # bob's extra turn: plain shove on 5C
    t3 = tl.add(card("7S", 120, 180, "alice"))  # now alice again
    rulings = run(adjudicate, tl)
    r1 = verdict(rulings, t1)
    assert_legal(r1)
    assert bonuses(r1) == {**NO_BONUS, "match": 1}
    assert r1["extra_turns"] == 1
    assert first_at_or_after(rulings, t1, "turn").get("player") == "bob"
    r2 = verdict(rulings, t2)
    assert_legal(r2)
    assert r2["extra_turns"] == 0
    assert first_at_or_after(rulings, t2, "turn").get("player") == "alice"
    assert_legal(verdict(rulings, t3))


def test_previous_winner_cannot_play_during_opponents_extra_turn(adjudicate):
    tl = Timeline()
    standard_opening(tl)
    tl.add(card("5C", 40, 60, "bob"))  # match: bob keeps the turn
    t = tl.add(card("6H", 80, 120, "alice"))
    r = verdict(run(adjudicate, tl), t)
    assert_illegal(r, "out_of_turn")


def test_bonuses_earned_on_a_bonus_turn_add_on(adjudicate):
    tl = Timeline()
    standard_opening(tl)
    t1 = tl.add(card("5C", 40, 60, "bob"))  # match -> 1 banked
    t2 = tl.add(card("6C", 80, 120, "bob"))  # bonus turn, match again -> still 1 banked
    t3 = tl.add(card("7H", 120, 180, "bob"))  # bonus turn, plain -> 0 banked
    t4 = tl.add(card("8S", 160, 240, "alice"))
    rulings = run(adjudicate, tl)
    assert [verdict(rulings, t)["kind"] for t in (t1, t2, t3, t4)] == ["legal"] * 4, dump(rulings)
    assert verdict(rulings, t1)["extra_turns"] == 1
    assert bonuses(verdict(rulings, t2)) == {**NO_BONUS, "match": 1}
    assert verdict(rulings, t2)["extra_turns"] == 1
    assert verdict(rulings, t3)["extra_turns"] == 0
    assert verdict(rulings, t4)["hand_counts"] == {"alice": 5, "bob": 3}


def test_double_shove(adjudicate):
    # 5H and 5S both on 4C (not touching each other); 6D then touches both fives.
    tl = Timeline()
    standard_opening(tl)
    tl.add(card("5H", -40, 60, "bob"))
    tl.add(card("5S", 40, 60, "alice"))
    t = tl.add(card("6D", 0, 130, "bob"))
    rulings = run(adjudicate, tl)
    r = verdict(rulings, t)
    assert_legal(r)
    assert bonuses(r) == {**NO_BONUS, "double": 1}
    assert r["extra_turns"] == 1
    assert r["hand_counts"] == {"alice": 5, "bob": 4}


def test_chain_shove(adjudicate):
    # 6S touches 5H (one lower) and 7D (one higher).
    tl = Timeline()
    standard_opening(tl)
    tl.add(card("5H", 40, 60, "bob"))
    t = tl.add(card("6S", 95, 70, "alice"))
    r = verdict(run(adjudicate, tl), t)
    assert_legal(r)
    assert bonuses(r) == {**NO_BONUS, "chain": 1}
    assert r["extra_turns"] == 1


def test_touching_only_a_higher_card_is_illegal(adjudicate):
    # 6S touches 7D (one higher) but no 5.
    tl = Timeline()
    standard_opening(tl)
    t = tl.add(card("6S", 140, 60, "bob"))
    assert_illegal(verdict(run(adjudicate, tl), t))


def seed_example(tl: Timeline) -> dict[str, float]:
    """KS (alice) and 8H (bob) open; AC (bob) and AD (alice) each lie on the KS;
    then bob's 2C touches both aces (and not the king)."""
    ts = {}
    opening(tl, ("KS", 0, 0), ("8H", 300, 0))
    ts["AC"] = tl.add(card("AC", -50, 80, "bob"))  # 13 x 8 mm on KS
    ts["AD"] = tl.add(card("AD", 50, 80, "alice"))  # 13 x 8 mm on KS, clear of AC
    ts["2C"] = tl.add(card("2C", 0, 160, "bob"))  # 13 x 8 mm on each ace, clear of KS
    return ts


def test_ace_goes_on_king(adjudicate):
    tl = Timeline()
    ts = seed_example(tl)
    rulings = run(adjudicate, tl)
    for code in ("AC", "AD"):
        r = verdict(rulings, ts[code])
        assert_legal(r)
        assert bonuses(r) == NO_BONUS


def test_seed_example_2c_on_two_aces_on_kings(adjudicate):
    tl = Timeline()
    ts = seed_example(tl)
    rulings = run(adjudicate, tl)
    r = verdict(rulings, ts["2C"])
    assert_legal(r)
    assert set(BONUS_KINDS) <= set(r["bonuses"]), r
    assert bonuses(r) == {"match": 1, "double": 1, "chain": 0, "piggy": 2}
    assert r["extra_turns"] == 4
    assert r["hand_counts"] == {"alice": 5, "bob": 4}
    assert first_at_or_after(rulings, ts["2C"], "turn").get("player") == "bob"


def test_piggy_shove_single_ace_on_king(adjudicate):
    # 2H overlaps only the AC (63 x 8 mm); the AC lies on the KS.  Not the same suit: no match.
    tl = Timeline()
    opening(tl, ("KS", 0, 0), ("8H", 300, 0))
    tl.add(card("AC", -50, 80, "bob"))
    t = tl.add(card("2H", -50, 160, "alice"))
    r = verdict(run(adjudicate, tl), t)
    assert_legal(r)
    assert bonuses(r) == {**NO_BONUS, "piggy": 1}
    assert r["extra_turns"] == 1


# ---------------------------------------------------------------- oink and winning


def test_oink_draws_a_card_and_passes_the_turn(adjudicate):
    tl = Timeline()
    standard_opening(tl)
    t = tl.add(oink("bob"))
    t2 = tl.add(card("5H", 40, 60, "alice"))
    rulings = run(adjudicate, tl)
    turn = first_at_or_after(rulings, t, "turn")
    assert turn.get("player") == "alice"
    assert turn["hand_counts"] == {"alice": 6, "bob": 7}
    r = verdict(rulings, t2)
    assert_legal(r)
    assert r["hand_counts"] == {"alice": 5, "bob": 7}


def test_first_to_empty_hand_wins(adjudicate):
    # bob opens with 5H and then shoves 6H..JH, each a match shove keeping him on turn.
    tl = Timeline()
    opening(tl, ("2C", -500, -500), ("5H", 0, 0))
    ts = []
    for i, code in enumerate(["6H", "7H", "8H", "9H", "TH", "JH"], start=1):
        ts.append(tl.add(card(code, 40 * i, 60 * i, "bob")))
    rulings = run(adjudicate, tl)
    for t in ts:
        assert_legal(verdict(rulings, t))
    last = verdict(rulings, ts[-1])
    assert last["hand_counts"] == {"alice": 6, "bob": 0}
    over = of_kind(rulings, "game_over")
    assert over, dump(rulings)
    assert over[0]["winner"] == "bob"
    assert of_kind(rulings, "game_over", until=ts[-1]) == []
