"""Every engine: an observation naming someone who is not playing is bad input."""

from __future__ import annotations

from typing import Any

import pytest

from referee.adjudication.session import InputLineError
from referee.rules.registry import GAMES, rules_for
from tests.helpers import adjudicate, card

STRANGER = "Zed"
CASES: list[tuple[str, list[str], dict[str, Any]]] = [
    ("shove-piggy-shove", ["Ann", "Ben"], card("5S", 0, 400, STRANGER)),
    ("shove-piggy-shove", ["Ann", "Ben"], {"type": "card_removed", "card": "5S",
                                           "player": STRANGER}),
    ("shove-piggy-shove", ["Ann", "Ben"], {"type": "declare", "what": "new_round",
                                           "player": STRANGER}),
    ("shove-piggy-shove", ["Ann", "Ben"], {"type": "declare", "what": "oink",
                                           "player": STRANGER}),
    ("shove", ["red", "blue"], {"type": "declare", "what": "die_roll", "value": 3,
                                "player": STRANGER}),
    ("shove", ["red", "blue"], {"type": "declare", "what": "end_turn", "player": STRANGER}),
    ("shove-piecepack", ["Ann", "Ben"], {"type": "declare", "what": "end_turn",
                                         "player": STRANGER}),
    ("push-out-the-pig", ["Ann", "Ben", "Cat"], card("2S", 0, 0, STRANGER)),
    ("slapstick", ["Ann", "Ben", "Cat"], {"type": "declare", "what": "chicken_out",
                                          "player": STRANGER}),
]


@pytest.mark.parametrize(("game", "players", "observation"), CASES)
def test_a_player_not_in_the_game_is_bad_input(game: str, players: list[str],
                                               observation: dict[str, Any]) -> None:
    with pytest.raises(InputLineError, match="line 1: unknown player 'Zed'"):
        adjudicate(game, [observation], players)


def test_a_shove_side_may_be_named_by_its_colour() -> None:
    roll = {"type": "declare", "what": "die_roll", "value": 2, "player": "Blue"}
    rulings = adjudicate("shove", [roll], ["Ann", "Ben"])
    assert (rulings[0]["kind"], rulings[0]["value"], rulings[0]["player"]) == ("declared", 2, "Ann")


@pytest.mark.parametrize("game", GAMES)
def test_a_game_answers_exactly_the_declarations_it_lists(game: str) -> None:
    # The dashboard shows a button for each of the game's ``declares``.
    rules = rules_for(game)
    players = list(rules.default_players)
    for what in ("oink", "chicken_out", "end_turn", "die_roll", "new_round"):
        observation = {"type": "declare", "what": what, "player": players[0], "value": 2}
        rulings = adjudicate(game, [observation], players)
        meaningless = [r for r in rulings if r.get("rule") == "not_in_this_game"]
        assert bool(meaningless) is (what not in rules.declares), (what, rulings)


@pytest.mark.parametrize("game", GAMES)
def test_a_meaningless_declaration_names_who_made_it(game: str) -> None:
    # rules.md's contract: rulings carry ``player`` where a player is concerned.
    rules = rules_for(game)
    players = list(rules.default_players)
    what = next(w for w in ("oink", "chicken_out", "die_roll") if w not in rules.declares)
    observation = {"type": "declare", "what": what, "player": players[1], "value": 2}
    (ruling,) = [r for r in adjudicate(game, [observation], players)
                 if r.get("rule") == "not_in_this_game"]
    assert (ruling["kind"], ruling["player"]) == ("impossible", players[1])
    assert ruling["message"].startswith(f"Declaring '{what}' means nothing in ")
