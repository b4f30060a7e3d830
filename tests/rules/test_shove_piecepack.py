"""Shove piecepack, rules.md section 2. Board frame: line k at y = k * 50.8 mm."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import adjudicate, declare, last, of_kind

GAME = "shove-piecepack"
PLAYERS = ["Ann", "Ben"]
TILE = 50.8
R = 9.5  # a 19 mm coin


def bed_centre(bed: int) -> float:
    return (bed + 0.5) * TILE


def coin(cid: str, y: float, x: float = 100.0) -> dict[str, Any]:
    return {"type": "coin_stopped", "id": cid, "center": [x, y], "radius": R}


def turn(*beds: int | float, prefix: str = "c") -> list[dict[str, Any]]:
    """Five coins: an int is a bed centre, a float an exact y."""
    return [coin(f"{prefix}{i}", bed_centre(b) if isinstance(b, int) else b)
            for i, b in enumerate(beds)]


MISSES = (60.0, 60.0, 60.0, 60.0, 60.0)  # all on line 1's edge: played, no score


def rule(observations: list[dict[str, Any]], **settings: Any) -> list[dict[str, Any]]:
    return adjudicate(GAME, observations, PLAYERS, settings)


def test_a_coin_short_of_line_one_is_not_played() -> None:
    rulings = rule([coin("a", TILE - R - 1)])
    assert rulings[0]["kind"] == "not_played"
    assert rulings[0]["player"] == "Ann"


def test_a_coin_whose_far_edge_passes_line_one_is_played() -> None:
    rulings = rule([coin("a", TILE - R + 0.1)])
    assert not of_kind(rulings, "not_played")


@pytest.mark.parametrize(("coin_mm", "played"), [(19.0, False), (30.0, True)])
def test_a_coin_given_without_a_radius_is_the_size_of_the_coin_mm_setting(
        coin_mm: float, played: bool) -> None:
    # Far edge 41 + 9.5 = 50.5 mm falls short of line 1 (50.8); 41 + 15 passes it.
    line = {"type": "coin_stopped", "id": "a", "center": [100.0, 41.0]}
    rulings = rule([line], coin_mm=coin_mm)
    assert bool(of_kind(rulings, "not_played")) is not played


def test_a_coin_not_played_does_not_use_one_of_the_five() -> None:
    rulings = rule([coin("a", 20.0), *turn(1, 2, 3, 4)])
    assert not of_kind(rulings, "bed_scored")  # only four played so far
    rulings = rule([coin("a", 20.0), *turn(1, 2, 3, 4), coin("a", bed_centre(5))])
    assert [r["bed"] for r in of_kind(rulings, "bed_scored")] == [1, 2, 3, 4, 5]


def test_five_played_coins_end_the_turn_and_score_in_shove_order() -> None:
    rulings = rule(turn(3, 1, 7, 2, 5))
    scored = of_kind(rulings, "bed_scored")
    assert [r["bed"] for r in scored] == [3, 1, 7, 2, 5]
    assert all(r["scored_by"] == "Ann" and r["credited_to"] == "Ann" for r in scored)
    assert last(rulings, "score")["scores"] == {"Ann": 5, "Ben": 0}
    assert last(rulings, "turn")["player"] == "Ben"


@pytest.mark.parametrize(
    ("y", "scores"),
    [
        (TILE + 1 + R + 0.1, True),  # clear of line 1's seam by 0.1 mm
        (TILE + 1 + R - 0.1, False),  # within seam/2 of line 1: touching
        (2 * TILE - 1 - R - 0.1, True),
        (2 * TILE - 1 - R + 0.1, False),  # touching line 2
    ],
)
def test_a_coin_touching_a_line_does_not_score(y: float, scores: bool) -> None:
    rulings = rule([coin("a", y), *turn(*MISSES[:4])])
    assert bool(of_kind(rulings, "bed_scored")) == scores


def test_seam_width_is_a_setting() -> None:
    y = TILE + R + 0.3  # 0.3 mm clear of line 1's centre
    assert not of_kind(rule([coin("a", y), *turn(*MISSES[:4])]), "bed_scored")
    assert of_kind(rule([coin("a", y), *turn(*MISSES[:4])], seam_mm=0.4), "bed_scored")


@pytest.mark.parametrize(("x", "scores"), [(R, True), (R - 0.5, False),
                                           (4 * TILE - R, True), (4 * TILE - R + 0.5, False)])
def test_a_coin_must_lie_within_the_playing_width(x: float, scores: bool) -> None:
    rulings = rule([coin("a", bed_centre(2), x), *turn(*MISSES[:4])])
    assert bool(of_kind(rulings, "bed_scored")) == scores


def test_only_final_positions_count_after_knocks() -> None:
    observations = [
        *turn(2, *MISSES[:3]),
        coin("c0", 2 * TILE),  # c0 knocked onto line 2
        {**coin("c9", bed_centre(4)), "t": 6.0},  # the fifth coin...
        {**coin("c2", bed_centre(6)), "t": 6.0},  # ...knocks c2 into bed 6: same moment
    ]
    scored = of_kind(rule(observations), "bed_scored")
    assert [(r["bed"], r["coin"]) for r in scored] == [(6, "c2"), (4, "c9")]


def test_a_coin_knocked_by_the_fifth_that_stops_a_moment_later_counts_where_it_stops() -> None:
    observations = [
        *turn(2, *MISSES[:3]),
        {**coin("c9", bed_centre(4)), "t": 6.0},  # the fifth coin knocks c0...
        {**coin("c0", 2 * TILE), "t": 6.4},  # ...which stops on line 2 a moment later
        *[{**c, "t": 8.0 + i} for i, c in enumerate(turn(*MISSES, prefix="d"))],
        {**coin("d9", bed_centre(3)), "t": 20.0},  # a sixth coin of the next turn
    ]
    rulings = rule(observations)
    scored = of_kind(rulings, "bed_scored")
    assert [(r["bed"], r["coin"]) for r in scored] == [(4, "c9")]  # not c0 in bed 2
    # The late stop was no coin of the next player's: their turn is the next five coins.
    assert [(r["t"], r["player"]) for r in of_kind(rulings, "turn")] == [(6.0, "Ben"),
                                                                        (12.0, "Ann")]


@pytest.mark.parametrize("line", range(2, 9))
def test_a_disc_exactly_half_a_seam_from_a_line_touches_it_at_every_line(line: int) -> None:
    # Written as people write them (to 0.1 mm): each disc's edge 1 mm (half the 2 mm seam)
    # from the line, above and below it. Float round-off (3 x 50.8 = 152.39999999999998)
    # once let such a disc score at lines 3, 6 and 7 only.
    above, below = round(line * TILE + 1 + R, 1), round(line * TILE - 1 - R, 1)
    rulings = rule(turn(above, below, *MISSES[:3]))
    assert not of_kind(rulings, "bed_scored")
    assert len(of_kind(rulings, "turn")) == 1  # all five were played


def test_a_coin_id_of_the_last_turn_stopping_a_second_later_is_the_next_player_s() -> None:
    # Ids are stable within a turn only: the next player's coins may reuse them.
    first = [{**c, "t": 1.0 + i} for i, c in enumerate(turn(1, *MISSES[:4]))]
    second = [{**c, "t": 6.0 + i} for i, c in enumerate(turn(2, *MISSES[:4]))]
    rulings = rule([*first, *second])
    scored = of_kind(rulings, "bed_scored")
    assert [(r["scored_by"], r["bed"]) for r in scored] == [("Ann", 1), ("Ben", 2)]
    assert [(r["t"], r["player"]) for r in of_kind(rulings, "turn")] == [(5.0, "Ben"),
                                                                        (10.0, "Ann")]


def test_the_next_player_s_coins_half_a_second_later_are_theirs() -> None:
    # A knock settles in less than KNOCK_SETTLE_S; a coin 0.5 s after the fifth is the
    # next shove, even with a reused id.
    first = [{**c, "t": 0.5 * (i + 1)} for i, c in enumerate(turn(1, *MISSES[:4]))]
    second = [{**c, "t": 3.0 + 0.5 * i} for i, c in enumerate(turn(2, *MISSES[:4]))]
    rulings = rule([*first, *second])
    scored = of_kind(rulings, "bed_scored")
    assert [(r["scored_by"], r["bed"]) for r in scored] == [("Ann", 1), ("Ben", 2)]


def test_a_cleared_coin_s_id_stopping_again_is_a_new_coin_of_the_next_turn() -> None:
    coins = [{**c, "t": 1.0 + i} for i, c in enumerate(turn(1, *MISSES[:4]))]
    cleared = [{"type": "coin_removed", "id": c["id"], "t": 5.0} for c in coins]
    again = [{**coin("c0", bed_centre(2)), "t": 5.2}, {**coin("c1", 60.0), "t": 6.0}]
    rulings = rule([*coins, *cleared, *again])
    scored = of_kind(rulings, "bed_scored")
    assert [(r["scored_by"], r["bed"]) for r in scored] == [("Ann", 1)]
    assert [r["message"] for r in of_kind(rulings, "legal")][-2:] == [
        "Ben's coin passed line 1: 1 of 5 played.", "Ben's coin passed line 1: 2 of 5 played."]


def test_a_coin_short_of_line_one_knocked_by_the_fifth_is_no_sixth_shove() -> None:
    observations = [coin("s", TILE - R - 5), *turn(*MISSES),
                    {**coin("s", bed_centre(1)), "t": 6.2}, {**coin("d0", 60.0), "t": 7.0}]
    rulings = rule(observations)
    assert not any("6 of 5" in r["message"] for r in rulings)
    assert [(r["coin"], r["bed"]) for r in of_kind(rulings, "bed_scored")] == [("s", 1)]
    assert [(r["t"], r["player"]) for r in of_kind(rulings, "turn")] == [(6.0, "Ben")]


def test_a_coin_short_of_line_one_knocked_on_by_an_earlier_shove_uses_none_of_the_five() -> None:
    # s falls short; the next coin stops on line 1's edge and, at that same moment, s
    # stops in bed 2 (knocked). Four more coins are the rest of the five.
    observations = [{**coin("s", TILE - R - 5), "t": 1.0}, {**coin("c0", 60.0), "t": 2.0},
                    {**coin("s", bed_centre(2)), "t": 2.0},
                    *({**coin(f"c{i}", 60.0), "t": 2.0 + i} for i in range(1, 5))]
    rulings = rule(observations[:-1])
    assert not of_kind(rulings, "bed_scored")  # four shoves so far: the turn goes on
    assert [r["coin"] for r in of_kind(rulings, "legal")] == ["c0", "c1", "c2", "c3"]
    rulings = rule(observations)
    assert [(r["coin"], r["bed"]) for r in of_kind(rulings, "bed_scored")] == [("s", 2)]
    assert [r["player"] for r in of_kind(rulings, "turn")] == ["Ben"]


@pytest.mark.parametrize("knocked_first", [False, True])
def test_coins_stopping_together_are_ruled_the_same_whichever_the_input_lists_first(
        knocked_first: bool) -> None:
    # s falls short; b is shoved and knocks s into bed 2: one shove, whatever the order
    # of the two lines of that moment.
    shoved, knocked = {**coin("b", 60.0), "t": 2.0}, {**coin("s", bed_centre(2)), "t": 2.0}
    together = [knocked, shoved] if knocked_first else [shoved, knocked]
    observations = [{**coin("s", TILE - R - 5), "t": 1.0}, *together,
                    *({**coin(f"c{i}", 60.0), "t": 2.0 + i} for i in range(1, 5))]
    rulings = rule(observations)
    assert [r["coin"] for r in of_kind(rulings, "legal")] == ["b", "c1", "c2", "c3", "c4"]
    assert [(r["coin"], r["bed"]) for r in of_kind(rulings, "bed_scored")] == [("s", 2)]


def test_a_coin_ruled_out_of_turn_and_then_knocked_is_still_not_played() -> None:
    observations = [{**coin("x", bed_centre(3)), "t": 1.0, "player": "Ben"},
                    {**coin("a", 60.0), "t": 2.0}, {**coin("x", bed_centre(2)), "t": 2.0},
                    *({**coin(f"c{i}", 60.0), "t": 2.0 + i} for i in range(1, 5))]
    rulings = rule(observations)
    assert [r["coin"] for r in of_kind(rulings, "illegal")] == ["x"]
    assert [r["coin"] for r in of_kind(rulings, "legal")] == ["a", "c1", "c2", "c3", "c4"]
    assert not of_kind(rulings, "bed_scored")


def test_a_coin_of_the_turn_reported_moved_by_the_other_player_is_out_of_turn() -> None:
    rulings = rule([coin("a", bed_centre(1)), {**coin("a", bed_centre(2)), "player": "Ben"}])
    assert [(r["rule"], r["player"], r["coin"]) for r in of_kind(rulings, "illegal")] \
        == [("out_of_turn", "Ben", "a")]


def test_a_coin_short_of_line_one_knocked_and_still_short_is_not_ruled_again() -> None:
    observations = [{**coin("s", TILE - R - 20), "t": 1.0}, {**coin("c0", 60.0), "t": 2.0},
                    {**coin("s", TILE - R - 5), "t": 2.0}]
    assert [r["coin"] for r in of_kind(rule(observations), "not_played")] == ["s"]


def test_a_coin_short_of_line_one_shoved_again_on_its_own_is_a_shove() -> None:
    rulings = rule([coin("s", TILE - R - 5), coin("s", bed_centre(1))])
    assert last(rulings, "legal")["message"] == "Ann's coin passed line 1: 1 of 5 played."


def test_a_second_score_in_a_filled_bed_goes_to_the_opponent() -> None:
    rulings = rule(turn(3, 3, *MISSES[:3]))
    scored = of_kind(rulings, "bed_scored")
    assert [(r["scored_by"], r["credited_to"]) for r in scored] == [("Ann", "Ann"),
                                                                  ("Ann", "Ben")]
    assert last(rulings, "score")["scores"] == {"Ann": 1, "Ben": 1}


def test_a_score_in_a_bed_both_filled_is_lost() -> None:
    rulings = rule(turn(3, 3, 3, *MISSES[:2]))
    scored = of_kind(rulings, "bed_scored")
    assert [r["credited_to"] for r in scored] == ["Ann", "Ben", None]


def test_the_score_completing_the_opponents_last_bed_is_lost() -> None:
    # Ben fills beds 1-6 over two turns; Ann then scores twice in bed 7: the second
    # would complete Ben's board, so it is lost rather than given.
    observations = [
        *turn(*MISSES, prefix="a"),
        *turn(1, 2, 3, 4, 5, prefix="b"),
        *turn(*MISSES, prefix="c"),
        *turn(6, *MISSES[:4], prefix="d"),
        *turn(7, 7, *MISSES[:3], prefix="e"),
    ]
    rulings = rule(observations)
    last_two = of_kind(rulings, "bed_scored")[-2:]
    assert [(r["scored_by"], r["credited_to"]) for r in last_two] == [("Ann", "Ann"),
                                                                     ("Ann", None)]
    assert not of_kind(rulings, "game_over")


def test_first_to_fill_every_bed_wins_at_once() -> None:
    observations = [*turn(1, 2, 3, 4, 5, prefix="a"), *turn(*MISSES, prefix="b"),
                    *turn(6, 7, 1, 1, 1, prefix="c")]
    rulings = rule(observations)
    over = last(rulings, "game_over")
    assert over["winner"] == "Ann"
    # Ann won with the coin in bed 7; the later coins are not scored.
    assert [r["bed"] for r in of_kind(rulings, "bed_scored")][-2:] == [6, 7]
    assert rulings[-1]["kind"] == "game_over"


def test_traditional_three_scores_per_bed() -> None:
    rulings = rule(turn(2, 2, 2, 2, *MISSES[:1]), scores_per_bed=3)
    credited = [r["credited_to"] for r in of_kind(rulings, "bed_scored")]
    assert credited == ["Ann", "Ann", "Ann", "Ben"]
    score = last(rulings, "score")
    assert score["scores"] == {"Ann": 3, "Ben": 1}  # scores, not beds
    assert "beds filled (3 each): Ann 1, Ben 0" in score["message"], score["message"]


def test_short_shove_has_fewer_lines_and_beds() -> None:
    # tiles_per_side=5: lines 1-4, beds 1-3; the strip past line 4 is no bed.
    rulings = rule(turn(3, 4, *MISSES[:3]), tiles_per_side=5)
    assert [r["bed"] for r in of_kind(rulings, "bed_scored")] == [3]
    rulings = rule(turn(1, 2, 3, *MISSES[:2]), tiles_per_side=5)
    assert last(rulings, "game_over")["winner"] == "Ann"


def test_progressive_variant_replays_scoring_coins() -> None:
    observations = [
        *turn(2, 5, *MISSES[:3]),
        {"type": "coin_removed", "id": "c0"},
        {"type": "coin_removed", "id": "c1"},
        coin("c0", bed_centre(3)),
        coin("c1", 60.0),
    ]
    rulings = rule(observations, variant="progressive")
    turns = of_kind(rulings, "turn")
    assert turns[0]["player"] == "Ann" and turns[0]["coins_left"] == 2
    assert [r["bed"] for r in of_kind(rulings, "bed_scored")] == [2, 5, 3]
    assert turns[1]["player"] == "Ann" and turns[1]["coins_left"] == 1
    rulings = rule([*observations, coin("c0", 60.0)], variant="progressive")
    assert last(rulings, "turn")["player"] == "Ben"


def test_a_coin_knocked_off_the_board_by_the_fifth_does_not_score() -> None:
    observations = [*turn(2, *MISSES[:3]), {**coin("c9", 60.0), "t": 6.0},
                    {"type": "coin_removed", "id": "c0", "t": 6.0}]  # gone with the fifth
    rulings = rule(observations)
    assert not of_kind(rulings, "bed_scored")
    assert last(rulings, "turn")["player"] == "Ben"


def test_a_coin_knocked_off_the_board_seen_gone_a_moment_after_the_fifth_does_not_score(
        ) -> None:
    observations = [*turn(2, *MISSES[:4]), {"type": "coin_removed", "id": "c0", "t": 5.2}]
    rulings = rule(observations)
    assert not of_kind(rulings, "bed_scored")
    assert last(rulings, "turn")["player"] == "Ben"


def test_coins_cleared_the_moment_the_fifth_stops_still_score() -> None:
    coins = turn(2, *MISSES[:4])
    cleared = [{"type": "coin_removed", "id": c["id"], "t": 5.0} for c in coins]
    rulings = rule([*coins, *cleared])  # the fifth coin itself goes: a clearing
    assert [(r["bed"], r["coin"]) for r in of_kind(rulings, "bed_scored")] == [(2, "c0")]


@pytest.mark.parametrize("player", ["Ann", None])
def test_end_turn_after_the_fifth_coin_says_nothing_more(player: str | None) -> None:
    rulings = rule([*turn(2, *MISSES[:4]), declare("end_turn", player),
                    coin("d0", bed_centre(3))])
    assert not of_kind(rulings, "illegal") and not of_kind(rulings, "declared")
    assert [r["player"] for r in of_kind(rulings, "turn")] == ["Ben"]
    assert last(rulings, "legal")["player"] == "Ben"  # Ben's turn goes on: 1 of 5


def test_turn_can_be_ended_early_by_declaration() -> None:
    rulings = rule([*turn(2, 3), declare("end_turn", "Ann")])
    assert [r["bed"] for r in of_kind(rulings, "bed_scored")] == [2, 3]
    assert last(rulings, "turn")["player"] == "Ben"


def test_pending_turn_is_scored_at_the_end_of_the_input() -> None:
    rulings = rule(turn(1, 2, 3, 4, 5))
    assert rulings[-1]["kind"] == "turn"


@pytest.mark.parametrize("setting", ["tiles_per_side=12", "variant=short", "colour=red"])
def test_bad_settings_are_refused(setting: str) -> None:
    from referee.adjudication import InputLineError

    name, value = setting.split("=")
    with pytest.raises(InputLineError):
        rule(turn(1), **{name: value})


def test_each_coin_that_passes_line_one_is_a_legal_play_of_the_five() -> None:
    rulings = rule([coin("a", 20.0), *turn(1, 2, *MISSES[:3])])
    legal = of_kind(rulings, "legal")
    assert [(r["coin"], r["player"]) for r in legal] == [(f"c{i}", "Ann") for i in range(5)]
    assert legal[0]["message"] == "Ann's coin passed line 1: 1 of 5 played."
    assert of_kind(rulings, "not_played")[0]["coin"] == "a"  # short of line 1: no legal


def test_a_coin_shoved_by_the_player_not_on_turn_is_out_of_turn_and_not_played() -> None:
    rulings = rule([{**coin("a", bed_centre(1)), "player": "Ben"}, *turn(1, 2, 3, 4, 5)])
    illegal = of_kind(rulings, "illegal")[0]
    assert (illegal["rule"], illegal["player"], illegal["coin"]) == ("out_of_turn", "Ben", "a")
    assert len(of_kind(rulings, "bed_scored")) == 5  # Ann's five, none of them Ben's coin
    assert {r["player"] for r in of_kind(rulings, "legal")} == {"Ann"}


def test_the_last_moment_before_a_bad_line_is_ruled_and_the_bad_line_named() -> None:
    import json

    from referee.adjudication import InputLineError, adjudicate_lines

    lines = [json.dumps({"t": 1.0, **coin("a", bed_centre(1))}),
             json.dumps({"t": 2.0, **coin("b", bed_centre(2))}),
             json.dumps({"t": 2.0, **coin("c", bed_centre(3))}), '{"t": 3, "type": "nonsense"}']
    seen: list[dict[str, Any]] = []
    with pytest.raises(InputLineError, match=r"^line 4: "):
        for ruling in adjudicate_lines(lines, game=GAME, players=PLAYERS, settings={}):
            seen.append(ruling.to_json())
    assert [r["coin"] for r in of_kind(seen, "legal")] == ["a", "b", "c"]


def test_a_coin_ruled_out_of_turn_and_knocked_by_the_fifth_is_not_the_next_player_s_shove(
        ) -> None:
    observations = [{**coin("x", bed_centre(3)), "t": 1.0, "player": "Ben"},
                    *({**coin(f"c{i}", 60.0), "t": 2.0 + i} for i in range(5)),
                    {**coin("x", bed_centre(2)), "t": 6.0}]
    rulings = rule(observations)
    assert [(r["coin"], r["player"]) for r in of_kind(rulings, "illegal")] == [("x", "Ben")]
    assert [r["coin"] for r in of_kind(rulings, "legal")] == [f"c{i}" for i in range(5)]


def test_only_the_coins_of_one_moment_trade_places_a_declaration_stays_last() -> None:
    # At t=3 the coin shoved (n) knocks the short coin s into bed 2, listed before it; the
    # end of the turn declared at that moment comes after both.
    observations = [{**coin("s", TILE - R - 5), "t": 1.0}, {**coin("c0", 60.0), "t": 2.0},
                    {**coin("s", bed_centre(2)), "t": 3.0}, {**coin("n", 60.0), "t": 3.0},
                    {**declare("end_turn"), "t": 3.0}]
    rulings = rule(observations)
    assert [(r["coin"], r["bed"]) for r in of_kind(rulings, "bed_scored")] == [("s", 2)]
    assert [r["coin"] for r in of_kind(rulings, "legal")] == ["c0", "n"]


def test_a_line_going_back_in_time_is_named_while_its_moment_is_held() -> None:
    import json

    from referee.adjudication import InputLineError, adjudicate_lines

    lines = [json.dumps({"t": 2.0, **coin("a", bed_centre(1))}),
             json.dumps({"t": 1.0, **coin("b", bed_centre(2))}), '{"t": 3, "type": "nonsense"}']
    with pytest.raises(InputLineError, match=r"^line 2: time goes backwards"):
        list(adjudicate_lines(lines, game=GAME, players=PLAYERS, settings={}))
