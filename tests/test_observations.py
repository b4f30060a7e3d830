"""Parsing observation lines and card codes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.cards import STANDARD_DECK, Card, CardCodeError, rank_distance, rank_step
from referee.observations import (
    CardPlaced,
    CoinStopped,
    ObservationError,
    dump_observation,
    parse_line,
)


@given(st.sampled_from(STANDARD_DECK))
def test_card_codes_round_trip(card: Card) -> None:
    assert Card.parse(str(card)) == card
    assert eval(repr(card)) == card  # a repr you can paste back


@pytest.mark.parametrize("code", ["1S", "QX", "10S", "", "JKR", "Q"])
def test_bad_card_codes(code: str) -> None:
    with pytest.raises(CardCodeError):
        Card.parse(code)


def test_lower_case_codes_are_accepted() -> None:
    assert str(Card.parse("qs")) == "QS" and Card.parse("jk").is_joker


def test_rank_arithmetic_wraps() -> None:
    assert rank_step(13, 1) == 1 and rank_step(1, -1) == 13
    assert rank_distance(13, 2, wraps=True) == 2
    assert rank_distance(13, 2, wraps=False) == 11


def test_parse_keeps_known_fields_and_ignores_others() -> None:
    line = ('{"t": 2, "type": "card_placed", "card": "th", "frame": 60, '
            '"corners": [[0,0],[63,0],[63,88],[0,88]]}')
    observation = parse_line(line)
    assert isinstance(observation, CardPlaced) and observation.card == "TC".replace("C", "H")
    assert dump_observation(observation)["card"] == "TH"


def test_coin_ids_may_be_numbers() -> None:
    observation = parse_line('{"t": 1, "type": "coin_stopped", "id": 7, "center": [1, 2], '
                             '"radius": 9.5}')
    assert isinstance(observation, CoinStopped) and observation.id == "7"


@pytest.mark.parametrize("line", ['{"t": 1, "type": "coin_stopped", "id": 1, "center": [1, 2], '
                                  '"radius": -1}',
                                  '{"t": 1, "type": "coin_stopped", "id": 1, "center": [1], '
                                  '"radius": 9}',
                                  '{"t": -1, "type": "declare", "what": "oink"}',
                                  '{"t": 1, "type": "board_state", "red": [[1]], "blue": []}'])
def test_wrong_fields_are_refused(line: str) -> None:
    with pytest.raises(ObservationError):
        parse_line(line)


@pytest.mark.parametrize(("line", "field"), [
    ('{"t": true, "type": "declare", "what": "oink"}', "t"),
    ('{"t": "1", "type": "declare", "what": "oink"}', "t"),
    ('{"t": 1, "type": "coin_stopped", "id": 1, "center": ["3", 2]}', "center.0"),
    ('{"t": 1, "type": "coin_stopped", "id": 1, "center": [3, 2], "radius": true}', "radius"),
    ('{"t": 1, "type": "board_state", "red": [[1, true]], "blue": []}', "red.0.1"),
    ('{"t": 1, "type": "card_placed", "card": "5S", '
     '"corners": [["300", 0], [363, 0], [363, 88], [300, 88]]}', "corners.0.0"),
])
def test_a_number_written_as_text_or_true_false_is_refused_naming_the_field(
        line: str, field: str) -> None:
    with pytest.raises(ObservationError, match=f"field '{field}': must be a number"):
        parse_line(line)


def test_whole_and_decimal_numbers_are_both_numbers() -> None:
    observation = parse_line('{"t": 2, "type": "coin_stopped", "id": "a", "center": [1, 2.5], '
                             '"radius": 9}')
    assert isinstance(observation, CoinStopped)
    assert (observation.t, observation.center, observation.radius) == (2.0, (1.0, 2.5), 9.0)
