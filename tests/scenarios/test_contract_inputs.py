"""Contract-level checks (contract.md): ruling shape, setup line, and bad input handling."""

from __future__ import annotations

import json
import re

from scenario_tools import Timeline, assert_legal, dump, verdict

GAME = "shove-piggy-shove"
PLAYERS = ["alice", "bob"]


def card(code, x, y, player):
    return {
        "type": "card_placed",
        "card": code,
        "corners": [[x, y], [x + 63, y], [x + 63, y + 88], [x, y + 88]],
        "player": player,
    }


def good_lines() -> list[dict]:
    tl = Timeline()
    tl.add(card("4C", 0, 0, "alice"))
    tl.add(card("7D", 150, 0, "bob"))
    tl.add(card("5H", 40, 60, "bob"))
    return tl.obs


def test_every_ruling_has_t_kind_and_a_message(adjudicate):
    rulings = adjudicate(GAME, good_lines(), PLAYERS)
    assert rulings, "expected some rulings"
    for r in rulings:
        assert isinstance(r.get("t"), (int, float)), r
        assert isinstance(r.get("kind"), str) and r["kind"], r
        assert isinstance(r.get("message"), str) and r["message"].strip(), r
        if r["kind"] == "illegal":
            assert isinstance(r.get("rule"), str) and r["rule"], r


def test_rulings_are_in_time_order(adjudicate):
    rulings = adjudicate(GAME, good_lines(), PLAYERS)
    ts = [r["t"] for r in rulings]
    assert ts == sorted(ts), dump(rulings)


def test_setup_line_gives_players_and_settings(adjudicate):
    setup = {
        "type": "setup",
        "game": GAME,
        "players": PLAYERS,
        "settings": {"open_distance_wraps": False},
    }
    tl = Timeline()
    tl.add(card("KS", 0, 0, "alice"))
    t = tl.add(card("2H", 200, 0, "bob"))  # 11 apart without wrapping
    rulings = adjudicate(GAME, [setup, *tl.obs], None)
    r = verdict(rulings, t)
    assert_legal(r)
    assert r["hand_counts"] == {"alice": 6, "bob": 6}


def test_unreadable_card_code_is_accepted(adjudicate):
    tl = Timeline()
    tl.add(card("4C", 0, 0, "alice"))
    tl.add(card("??", 150, 0, "bob"))
    adjudicate(GAME, tl.obs, PLAYERS)  # exit status 0 is asserted by the helper


def assert_bad_input(adjudicate_failure, lines, line_no: int) -> None:
    code, stderr = adjudicate_failure(GAME, lines, PLAYERS)
    assert code == 2, f"exit status {code}, stderr: {stderr!r}"
    assert "Traceback" not in stderr, stderr
    text = stderr.strip()
    assert text, "expected an error message on stderr"
    assert len(text.splitlines()) == 1, f"expected a single line on stderr, got: {stderr!r}"
    assert re.search(rf"(?<![\d.]){line_no}(?![\d.])", text), (
        f"stderr should name line {line_no}: {text!r}"
    )


def as_lines(obs: list[dict]) -> list[str]:
    return [json.dumps(o) for o in obs]


def test_malformed_json_line(adjudicate_failure):
    lines = as_lines(good_lines())
    lines[1] = '{"t": 2.0, "type": "card_placed", "card": "7D", "corners": [[150, 0],'
    assert_bad_input(adjudicate_failure, lines, 2)


def test_unknown_card_code(adjudicate_failure):
    obs = good_lines()
    obs[2]["card"] = "ZZ"
    assert_bad_input(adjudicate_failure, obs, 3)


def test_missing_field(adjudicate_failure):
    obs = good_lines()
    del obs[1]["corners"]
    assert_bad_input(adjudicate_failure, obs, 2)


def test_malformed_corners(adjudicate_failure):
    obs = good_lines()
    obs[2]["corners"] = [[0, 0], [63, 0]]  # two corners instead of four
    assert_bad_input(adjudicate_failure, obs, 3)


def test_time_going_backwards(adjudicate_failure):
    obs = good_lines()
    obs[2]["t"] = 0.5  # earlier than line 2's t = 2.0
    assert_bad_input(adjudicate_failure, obs, 3)
