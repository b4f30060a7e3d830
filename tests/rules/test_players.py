"""Every engine: an observation naming someone who is not playing is bad input."""

from __future__ import annotations

from typing import Any

import pytest

from referee.adjudication.session import InputLineError
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
