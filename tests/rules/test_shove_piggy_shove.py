"""Shove Piggy Shove, rules.md section 1. Players: Ann (previous winner), Ben."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import adjudicate, card, declare, last, of_kind

GAME = "shove-piggy-shove"
PLAYERS = ["Ann", "Ben"]

# Two opening cards far apart and 4 ranks apart; then Ben shoves first.
OPENING = [card("5S", 0, 400, "Ann"), card("9H", 300, 400, "Ben")]


def rule(observations: list[dict[str, Any]], **settings: Any) -> list[dict[str, Any]]:
    return adjudicate(GAME, observations, PLAYERS, settings)


def test_opening_is_two_legal_cards_then_the_loser_shoves_first() -> None:
    rulings = rule(OPENING)
    assert [r["kind"] for r in rulings] == ["legal", "turn", "legal", "turn"]
    assert rulings[-1]["player"] == "Ben"
    assert rulings[-1]["hand_counts"] == {"Ann": 6, "Ben": 6}


def test_opening_cards_must_not_lie_closer_than_the_gap() -> None:
    rulings = rule([card("5S", 0, 0), card("9H", 63 + 5, 0)])
    assert last(rulings, "illegal")["rule"] == "opening_too_close"
    assert last(rulings, "illegal")["hand_counts"] == {"Ann": 6, "Ben": 7}
    assert rule([card("5S", 0, 0), card("9H", 63 + 10, 0)])[-2]["kind"] == "legal"


def test_a_gap_just_short_is_not_called_the_gap_it_misses() -> None:
    illegal = last(rule([card("5S", 0, 0), card("9H", 63 + 9.96, 0)]), "illegal")
    assert "it is 9.9 mm away" in illegal["message"]


def test_a_gap_of_exactly_the_setting_is_enough_wherever_the_cards_lie() -> None:
    # 73.1 - 63.1 is 9.999999999999993 in floats: still the 10 mm rules.md asks for.
    rulings = rule([card("5S", 0.1, 0.2), card("9H", 73.1, 0.2)])
    assert not of_kind(rulings, "illegal")


def test_opening_gap_is_a_setting() -> None:
    rulings = rule([card("5S", 0, 0), card("9H", 63 + 5, 0)], open_gap_mm=4)
    assert not of_kind(rulings, "illegal")


def test_with_no_gap_required_the_second_card_still_must_not_touch_the_first() -> None:
    rulings = rule([card("5S", 0, 0), card("9H", 40, 0)], open_gap_mm=0)
    assert last(rulings, "illegal")["rule"] == "opening_too_close"
    rulings = rule([card("5S", 0, 0), card("9H", 63, 0)], open_gap_mm=0)  # edges meet
    assert not of_kind(rulings, "illegal")


@pytest.mark.parametrize(
    ("first", "second", "legal"),
    [("5S", "8H", True), ("5S", "7H", False), ("2S", "4H", False), ("KS", "2H", False),
     ("KS", "3H", True), ("AS", "QH", False), ("AS", "JH", True)],
)
def test_opening_ranks_at_least_three_apart_wrapping(first: str, second: str,
                                                     legal: bool) -> None:
    rulings = rule([card(first, 0, 0), card(second, 200, 0)])
    assert (not of_kind(rulings, "illegal")) == legal
    if not legal:
        assert last(rulings, "illegal")["rule"] == "opening_rank_distance"


def test_the_second_opener_is_told_the_rank_distance_set() -> None:
    rulings = rule(OPENING[:1], open_min_distance=5)
    assert "at least 5 ranks away" in last(rulings, "turn")["message"]


def test_without_wrapping_king_and_two_are_eleven_apart() -> None:
    rulings = rule([card("KS", 0, 0), card("2H", 200, 0)], open_distance_wraps=False)
    assert not of_kind(rulings, "illegal")


def test_a_shove_onto_one_rank_lower_is_legal_and_passes_the_turn() -> None:
    rulings = rule([*OPENING, card("6D", 40, 400)])
    legal = last(rulings, "legal")
    assert legal["player"] == "Ben" and legal["card"] == "6D"
    assert legal["bonuses"] == {"match": 0, "double": 0, "chain": 0, "piggy": 0}
    assert legal["extra_turns"] == 0
    assert legal["hand_counts"] == {"Ann": 6, "Ben": 5}
    assert last(rulings, "turn")["player"] == "Ann"


def test_a_card_not_one_rank_higher_is_illegal_and_stays_in_hand() -> None:
    rulings = rule([*OPENING, card("7D", 40, 400)])
    illegal = last(rulings, "illegal")
    assert illegal["rule"] == "not_one_rank_higher"
    assert illegal["player"] == "Ben"
    assert illegal["hand_counts"] == {"Ann": 6, "Ben": 6}


def test_a_card_touching_nothing_is_illegal() -> None:
    rulings = rule([*OPENING, card("6D", 0, 0)])
    assert last(rulings, "illegal")["rule"] == "not_one_rank_higher"


def test_touching_another_rank_too_is_illegal() -> None:
    opening = [card("5S", 0, 400), card("8H", 80, 400)]  # 17 mm apart
    rulings = rule([*opening, card("6D", 40, 400)])  # touches the 5 and the 8
    assert last(rulings, "illegal")["rule"] == "touches_other_rank"


def test_covering_a_card_completely_is_illegal() -> None:
    rulings = rule([*OPENING, card("6D", -5, 395, w=80, h=100)])
    assert last(rulings, "illegal")["rule"] == "full_cover"


@pytest.mark.parametrize(("overlap_mm2", "touching"), [(15.0, False), (25.0, True)])
def test_overlap_within_tolerance_is_not_touching(overlap_mm2: float, touching: bool) -> None:
    x = 63 - overlap_mm2 / 88  # a thin sliver of the 5S
    rulings = rule([*OPENING, card("6D", x, 400)])
    assert bool(of_kind(rulings, "illegal")) != touching


def test_an_overlap_of_exactly_the_tolerance_is_not_touching_wherever_the_cards_lie() -> None:
    # 0.4 mm x 50 mm = 20 mm^2, which Shapely makes 20.000000000000x at these coordinates.
    opening = [card("5S", 0.7, 0.1), card("9H", 300, 0)]
    rulings = rule([*opening, card("6D", 63.3, 38.1, "Ben")])
    assert last(rulings, "illegal")["rule"] == "not_one_rank_higher"
    rulings = rule([card("5S", 0.7, 0.1), card("9D", 63.3, 38.1)], open_gap_mm=0)
    assert not of_kind(rulings, "illegal")  # the opening cards do not touch either


def test_touch_tolerance_is_a_setting() -> None:
    x = 63 - 15 / 88
    assert not of_kind(rule([*OPENING, card("6D", x, 400)], touch_tolerance_mm2=10), "illegal")


def test_seed_example_two_of_clubs_onto_two_aces_on_kings_earns_four_extra_turns() -> None:
    observations = [
        card("QH", 0, 100, "Ann"),
        card("5D", 400, 600, "Ben"),
        card("6S", 440, 600, "Ben"),
        card("KS", 50, 20, "Ann"),  # on QH
        card("7H", 480, 600, "Ben"),
        card("KC", 50, 180, "Ann"),  # on QH
        card("8D", 520, 600, "Ben"),
        card("AC", 100, 0, "Ann"),  # on KS only
        card("9C", 560, 600, "Ben"),
        card("AD", 100, 150, "Ann"),  # on KC only
        card("TS", 600, 600, "Ben"),
        card("2C", 140, 70, "Ann"),  # bridges AC and AD, touches no king
    ]
    rulings = rule(observations)
    assert not of_kind(rulings, "illegal"), of_kind(rulings, "illegal")
    legal = last(rulings, "legal")
    assert legal["card"] == "2C"
    assert legal["bonuses"] == {"match": 1, "double": 1, "chain": 0, "piggy": 2}
    assert legal["extra_turns"] == 4
    assert last(rulings, "turn")["player"] == "Ann"
    assert last(rulings, "turn")["extra_turns"] == 3


# 5S and 9H open; Ben 6D on 5S; Ann 7C on 6D. The gap between 7C and 9H is 57 mm.
CHAIN_TABLE = [card("5S", 0, 400, "Ann"), card("9H", 200, 400, "Ben"),
               card("6D", 40, 400, "Ben"), card("7C", 80, 400, "Ann")]


def test_chain_shove_touches_one_rank_higher_as_well() -> None:
    rulings = rule([*CHAIN_TABLE, card("8D", 140, 400, "Ben")])  # on 7C and under 9H
    legal = last(rulings, "legal")
    assert legal["bonuses"] == {"match": 0, "double": 0, "chain": 1, "piggy": 0}
    assert legal["extra_turns"] == 1
    assert last(rulings, "turn")["player"] == "Ben"


def test_double_shove_onto_two_lower_cards() -> None:
    table = [card("5S", 0, 400, "Ann"), card("JH", 400, 400, "Ben"),
             card("6D", 40, 440, "Ben"), card("QC", 440, 400, "Ann"),
             card("6C", 40, 320, "Ben"), card("KS", 480, 400, "Ann")]
    rulings = rule([*table, card("7D", 90, 380, "Ben")])  # on 6D and 6C, clear of 5S
    legal = last(rulings, "legal")
    assert legal["bonuses"] == {"match": 1, "double": 1, "chain": 0, "piggy": 0}
    assert legal["extra_turns"] == 2


def test_higher_card_alone_is_not_enough() -> None:
    opening = [card("5S", 0, 400), card("9H", 200, 400)]
    rulings = rule([*opening, card("8D", 240, 400, "Ben")])  # onto the 9 only
    assert last(rulings, "illegal")["rule"] == "not_one_rank_higher"


def test_ranks_wrap_ace_on_king_and_two_on_ace() -> None:
    opening = [card("KS", 0, 400), card("5H", 200, 400)]
    rulings = rule([*opening, card("AD", 40, 400, "Ben"), card("2C", 80, 400, "Ann")])
    assert not of_kind(rulings, "illegal")
    assert last(rulings, "legal")["bonuses"]["piggy"] == 1  # the AD touches a king


def test_extra_turns_accumulate_and_are_used_one_by_one() -> None:
    opening = [card("5S", 0, 400), card("9H", 200, 400)]
    observations = [
        *opening,
        card("6S", 40, 400, "Ben"),  # match: 1 extra turn
        card("7S", 80, 400, "Ben"),  # extra turn, match again: banked 1
        card("8D", 120, 400, "Ben"),  # uses the last extra turn; no bonus... touches 9H?
    ]
    rulings = rule(observations)
    legals = of_kind(rulings, "legal")[2:]
    assert [r["extra_turns"] for r in legals[:2]] == [1, 1]
    assert of_kind(rulings, "turn")[-1]["player"] == "Ann"


def test_play_out_of_turn_is_illegal() -> None:
    rulings = rule([*OPENING, card("6D", 40, 400, "Ann")])
    illegal = last(rulings, "illegal")
    assert illegal["rule"] == "out_of_turn" and illegal["player"] == "Ann"
    assert illegal["hand_counts"] == {"Ann": 6, "Ben": 6}


def test_an_illegal_card_taken_back_can_be_played_again() -> None:
    observations = [
        *OPENING,
        card("6D", 200, 0, "Ben"),
        {"type": "card_removed", "card": "6D"},
        card("6D", 40, 400, "Ben"),
    ]
    rulings = rule(observations)
    assert last(rulings, "legal")["card"] == "6D"
    assert last(rulings, "legal")["hand_counts"] == {"Ann": 6, "Ben": 5}


def test_an_opening_card_that_left_the_table_leaves_the_answer_free() -> None:
    # The first card leaves before the second is placed (a hand knocks it off, or the
    # camera lost it): the answer has no card to keep clear of, and the game goes on.
    observations = [OPENING[0], {"type": "card_removed", "card": "5S"},
                    card("6D", 10, 400, "Ben"), card("7C", 30, 400, "Ben")]
    rulings = rule(observations)
    assert [r["rule"] for r in of_kind(rulings, "impossible")] == ["card_left_table"]
    assert [r["card"] for r in of_kind(rulings, "legal")] == ["5S", "6D", "7C"]


def test_oink_draws_a_card_and_passes_the_turn() -> None:
    rulings = rule([*OPENING, declare("oink", "Ben")])
    assert last(rulings, "declared")["hand_counts"] == {"Ann": 6, "Ben": 7}
    assert last(rulings, "turn")["player"] == "Ann"


def test_oink_with_banked_extra_turns_uses_one_of_them() -> None:
    rulings = rule([*CHAIN_TABLE, card("8C", 140, 400, "Ben"),  # match + chain: 2 banked
                    declare("oink", "Ben"), declare("oink", "Ben")])
    assert last(rulings, "legal")["extra_turns"] == 2
    turns = of_kind(rulings, "turn")
    assert [(t["player"], t["extra_turns"]) for t in turns[-3:]] == [
        ("Ben", 1), ("Ben", 0), ("Ann", 0)]
    assert last(rulings, "declared")["hand_counts"]["Ben"] == 6


def test_the_same_card_twice_on_the_table_is_impossible() -> None:
    rulings = rule([*OPENING, card("5S", 40, 400, "Ben")])
    assert last(rulings, "impossible")["rule"] == "card_already_on_table"
    assert not of_kind(rulings, "illegal")


@pytest.mark.parametrize("phase", ["opening", "shove"])
def test_a_joker_is_no_card_of_this_game(phase: str) -> None:
    before = [] if phase == "opening" else OPENING
    rulings = rule([*before, card("JK", 40, 400, "Ann" if phase == "opening" else "Ben")])
    assert last(rulings, "impossible")["rule"] == "not_in_deck"
    assert not of_kind(rulings[len(rule(before)):], "legal")


def _race_to_empty_hand() -> list[dict[str, Any]]:
    """Ann opens far away; Ben opens an ace and the players climb a line of cards."""
    observations = [card("6S", 0, 600, "Ann"), card("AH", 0, 0, "Ben")]
    ranks = "23456789TJQK"
    suits = "CD"
    players = ["Ben", "Ann"]
    for i, rank in enumerate(ranks):
        observations.append(card(rank + suits[i % 2], 50 * (i + 1), 0, players[i % 2]))
    return observations


def test_first_to_empty_their_hand_wins() -> None:
    rulings = rule(_race_to_empty_hand())
    over = last(rulings, "game_over")
    assert over["winner"] == "Ben"
    hand_counts = last(rulings, "legal")["hand_counts"]
    assert hand_counts == {"Ann": 1, "Ben": 0}
    assert rulings[-1]["kind"] == "game_over"
    # The score every game announces: here the rounds each player has won.
    assert [r["scores"] for r in of_kind(rulings, "score")] == [{"Ann": 0, "Ben": 1}]


def test_a_hand_emptied_by_an_opening_card_wins_and_ends_the_round() -> None:
    # One card each: Ann's opening card is her last, so she is first to 0 (rules.md section 1).
    later = [card("9H", 300, 400, "Ben"), card("6S", 40, 400, "Ben"), declare("oink", "Ann")]
    rulings = rule([OPENING[0], *later], hand_size=1)
    assert [r["kind"] for r in rulings] == ["legal", "score", "game_over"]
    assert rulings[-1]["winner"] == "Ann"
    assert rulings[1]["scores"] == {"Ann": 1, "Ben": 0}
    assert rulings[0]["hand_counts"] == {"Ann": 0, "Ben": 1}  # and no play after: never below 0
    turn = rule([OPENING[0], declare("new_round")], hand_size=1)[-1]
    assert turn["message"] == "Ann won the last round and places the first card."


def test_a_new_round_is_opened_by_the_previous_winner() -> None:
    rulings = rule([*_race_to_empty_hand(), declare("new_round"), card("5S", 0, 0, "Ann")])
    assert last(rulings, "illegal")["rule"] == "out_of_turn"
    rulings = rule([*_race_to_empty_hand(), declare("new_round"), card("5S", 0, 0, "Ben")])
    assert last(rulings, "legal")["hand_counts"] == {"Ann": 7, "Ben": 6}
    turn = rule([*_race_to_empty_hand(), declare("new_round")])[-1]
    assert turn["message"] == "Ben won the last round and places the first card."


def test_a_new_round_deals_the_hand_size_setting() -> None:
    rulings = rule([*OPENING, card("6D", 30, 400, "Ben"), declare("new_round")], hand_size=2)
    assert last(rulings, "declared")["message"] == "Round 2: deal 2 cards each."
    assert last(rulings, "turn")["hand_counts"] == {"Ann": 2, "Ben": 2}
    assert last(rulings, "turn")["message"] == "Ben won the last round and places the first card."


def test_a_round_left_unfinished_is_opened_again_by_its_opener_and_nobody_won_it() -> None:
    turn = rule([*OPENING, declare("new_round")])[-1]
    assert turn["player"] == "Ann" and turn["hand_counts"] == {"Ann": 7, "Ben": 7}
    assert "nobody won" in turn["message"] and "Ann won" not in turn["message"]


def test_an_unreadable_card_gets_no_ruling() -> None:
    rulings = rule([*OPENING, card("??", 40, 400, "Ben")])
    assert rulings[-1]["kind"] == "unreadable"
    assert not of_kind(rulings, "illegal")


def test_no_oink_on_the_opening() -> None:
    rulings = rule([declare("oink", "Ann")])
    assert last(rulings, "illegal")["rule"] == "cannot_oink_now"
    assert last(rulings, "illegal")["hand_counts"] == {"Ann": 7, "Ben": 7}
