"""Slapstick, rules.md section 5. Players Ann, Ben, Cat; Ann starts round 1."""

from __future__ import annotations

import random
from collections import deque
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from referee.adjudication import Session
from referee.cards import JOKER, STANDARD_DECK, Card
from referee.observations import CardPlaced, Declare
from referee.rules.slapstick import Hand
from tests.helpers import adjudicate, declare, last, of_kind, played

GAME = "slapstick"
THREE = ["Ann", "Ben", "Cat"]


def plays(*moves: str) -> list[dict[str, Any]]:
    """'Ann:5S' -> the card Ann plays."""
    return [played(m.split(":")[1], m.split(":")[0]) for m in moves]


def rule(observations: list[dict[str, Any]], players: list[str] | None = None,
         **options: Any) -> list[dict[str, Any]]:
    return adjudicate(GAME, observations, players or THREE, options)


def test_a_joker_in_a_game_without_jokers_is_not_in_the_deck() -> None:
    rulings = rule(plays("Ann:JK"), jokers=0)
    assert last(rulings, "impossible")["rule"] == "not_in_deck"


def test_a_card_played_from_a_taken_row_leaves_the_others_in_hand() -> None:
    # Nobody says in which order a taken row goes under a hand: the joker played from it
    # is the joker, not whichever card of the row was taken first.
    session = Session.start(GAME, ["Ann", "Ben"], {})
    session.state.hands["Ann"] = Hand(0, deque(Card.parse(c) for c in ("2S", "3S", "JK")))
    session.feed(CardPlaced(t=1, type="card_placed", card="JK", player="Ann"))
    assert [str(c) for c in session.state.hands["Ann"].known] == ["2S", "3S"]


def test_the_starter_holds_an_extra_card_and_plays_two() -> None:
    rulings = rule(plays("Ann:5S", "Ann:9H", "Ben:KD"))
    assert last(rulings, "legal")["hand_counts"] == {"Ann": 17, "Ben": 17, "Cat": 18}
    assert not of_kind(rulings, "illegal")


def test_matching_the_first_card_takes_the_row() -> None:
    rulings = rule(plays("Ann:5S", "Ann:9H", "Ben:KD", "Cat:5H"))
    take = last(rulings, "take_row")
    assert (take["taker"], take["reason"], take["cards"]) == ("Cat", "match_first", 4)
    assert take["hand_counts"] == {"Ann": 17, "Ben": 17, "Cat": 21}
    assert last(rulings, "turn")["player"] == "Cat"


def test_matching_the_card_just_before_takes_the_row() -> None:
    rulings = rule(plays("Ann:5S", "Ann:9H", "Ben:KD", "Cat:KH"))
    take = last(rulings, "take_row")
    assert (take["taker"], take["reason"]) == ("Cat", "match_last")


def test_matching_another_card_gives_the_row_to_the_next_player() -> None:
    rulings = rule(plays("Ann:5S", "Ann:9H", "Ben:KD", "Cat:2C", "Ann:9S"))
    take = last(rulings, "take_row")
    assert (take["taker"], take["reason"], take["cards"]) == ("Ben", "match_other", 5)
    assert last(rulings, "turn")["player"] == "Ben"


def test_every_card_that_leaves_the_row_in_progress_is_followed_by_whose_turn_it_is() -> None:
    # contract.md: `turn` (whose turn now) is a kind every game uses, after every play.
    rulings = rule(plays("Ann:5S", "Ann:9H", "Ben:KD"))
    assert [r["kind"] for r in rulings] == ["legal", "turn"] * 3
    turns = of_kind(rulings, "turn")
    assert [(t["player"], t["message"]) for t in turns] == [
        ("Ann", "Ann plays the second card of the row."), ("Ben", "Ben to play."),
        ("Cat", "Cat to play.")]
    assert turns[-1]["hand_counts"] == {"Ann": 17, "Ben": 17, "Cat": 18}


def test_a_take_is_followed_by_one_turn_only() -> None:
    rulings = rule(plays("Ann:5S", "Ann:9H", "Ben:KD", "Cat:5H"))
    assert [r["kind"] for r in rulings[-3:]] == ["legal", "take_row", "turn"]
    assert len(of_kind(rulings, "turn")) == 4  # three cards leaving the row going, one take


def test_the_turn_goes_past_a_player_with_no_cards_to_the_one_who_plays_next() -> None:
    session = Session.start(GAME, THREE, {})
    session.feed(CardPlaced(t=1, type="card_placed", card="5S", player="Ann"))
    session.state.hands["Ben"] = Hand(0)  # Ben is out of cards, the row still in progress
    rulings = [r.to_json() for r in session.feed(CardPlaced(t=2, type="card_placed",
                                                            card="9H", player="Ann"))]
    turn = last(rulings, "turn")
    assert (turn["player"], turn["message"]) == ("Cat", "Cat to play (Ben has no cards left).")


def test_a_chickens_cards_are_each_followed_by_their_own_turn() -> None:
    observations = [*plays("Ann:5S", "Ann:9H", "Ben:KD"), declare("chicken_out", "Cat"),
                    *plays("Cat:2C")]
    rulings = rule(observations)
    assert [r["kind"] for r in rulings[-4:]] == ["take_row", "turn", "legal", "turn"]
    assert (rulings[-1]["player"], rulings[-1]["message"]) == (
        "Cat", "Cat may play another card or stop.")


def test_a_joker_gives_the_row_to_the_next_player() -> None:
    rulings = rule(plays("Ann:5S", "Ann:9H", "Ben:JK"))
    take = last(rulings, "take_row")
    assert (take["taker"], take["reason"]) == ("Cat", "joker")


def test_first_or_previous_takes_priority_over_any_other() -> None:
    # The row 5 9 K 5: the last 5 matches the first card (and no other one counts).
    rulings = rule(plays("Ann:5S", "Ann:9H", "Ben:KD", "Cat:2C", "Ann:2D"))
    assert last(rulings, "take_row")["reason"] == "match_last"
    rulings = rule(plays("Ann:5S", "Ann:9H", "Ben:9D", "Ben:5D"))
    assert last(rulings, "take_row")["taker"] == "Ben"


def test_the_second_card_of_a_new_row_can_match() -> None:
    rulings = rule(plays("Ann:5S", "Ann:5H"))
    take = last(rulings, "take_row")
    assert (take["taker"], take["reason"], take["cards"]) == ("Ann", "match_first", 2)
    rulings = rule(plays("Ann:5S", "Ann:5H", "Ann:7C", "Ann:8C", "Ben:2D"))
    assert not of_kind(rulings, "illegal")


def test_the_taker_starts_the_new_row_with_two_cards() -> None:
    rulings = rule(plays("Ann:5S", "Ann:9H", "Ben:KD", "Cat:5H", "Ann:2C"))
    assert last(rulings, "illegal")["rule"] == "out_of_turn"
    rulings = rule(plays("Ann:5S", "Ann:9H", "Ben:KD", "Cat:5H", "Cat:2C", "Cat:3C", "Ann:4C"))
    assert not of_kind(rulings, "illegal")


def test_play_out_of_turn_is_illegal() -> None:
    rulings = rule(plays("Ann:5S", "Ann:9H", "Cat:KD"))
    illegal = last(rulings, "illegal")
    assert illegal["rule"] == "out_of_turn" and illegal["player"] == "Cat"


def test_chicken_out_takes_the_row_and_plays_on_until_a_match() -> None:
    observations = [*plays("Ann:5S", "Ann:9H", "Ben:KD"), declare("chicken_out", "Cat"),
                    *plays("Cat:2C", "Cat:3C", "Cat:4D", "Cat:4S")]
    rulings = rule(observations)
    takes = of_kind(rulings, "take_row")
    assert [(t["taker"], t["reason"], t["cards"]) for t in takes] == [
        ("Cat", "chicken_out", 3), ("Cat", "match_last", 4)]
    assert takes[0]["hand_counts"]["Cat"] == 21
    observations[-1] = played("3S", "Cat")  # matches the 3C inside the row
    take = last(rule(observations), "take_row")
    assert (take["taker"], take["reason"]) == ("Ann", "match_other")


def test_chicken_run_ends_when_the_next_player_plays() -> None:
    observations = [*plays("Ann:5S", "Ann:9H", "Ben:KD"), declare("chicken_out", "Cat"),
                    *plays("Cat:2C", "Cat:7D", "Cat:8H", "Ann:QS")]
    rulings = rule(observations)
    assert not of_kind(rulings, "illegal")
    assert last(rulings, "legal")["player"] == "Ann"


def test_the_next_player_may_chicken_out_of_a_chicken_run() -> None:
    observations = [*plays("Ann:5S", "Ann:9H", "Ben:KD"), declare("chicken_out", "Cat"),
                    *plays("Cat:2C", "Cat:7D"), declare("chicken_out", "Ann"),
                    *plays("Ann:8H")]
    rulings = rule(observations)
    assert not of_kind(rulings, "illegal")
    take = last(rulings, "take_row")
    assert (take["taker"], take["reason"], take["row"]) == ("Ann", "chicken_out", ["2C", "7D"])
    assert last(rulings, "legal")["player"] == "Ann"


def test_two_players_match_first_or_last_goes_to_a_penalty_pile() -> None:
    rulings = rule(plays("Ann:5S", "Ann:9H", "Ben:9D"), players=["Ann", "Ben"])
    take = last(rulings, "take_row")
    assert take["to_penalty_pile"] is True
    assert take["hand_counts"] == {"Ann": 25, "Ben": 26}
    rulings = rule(plays("Ann:5S", "Ann:9H", "Ben:KD", "Ann:9C"), players=["Ann", "Ben"])
    take = last(rulings, "take_row")
    assert (take["taker"], take["to_penalty_pile"]) == ("Ben", False)


def test_three_card_flush_obliges_the_next_player() -> None:
    base = plays("Ann:2S", "Ann:7S", "Ben:9S")
    assert not of_kind(rule([*base, *plays("Cat:4D")]), "take_row")
    rulings = rule([*base, *plays("Cat:4D")], three_card_flush=True)
    take = last(rulings, "take_row")
    assert (take["taker"], take["reason"]) == ("Cat", "failed_flush")
    rulings = rule([*base, *plays("Cat:4S", "Ann:QD")], three_card_flush=True)
    assert last(rulings, "take_row")["taker"] == "Ann"


def test_a_rank_match_takes_priority_over_a_flush() -> None:
    rulings = rule(plays("Ann:2S", "Ann:7S", "Ben:9S", "Cat:9D"), three_card_flush=True)
    assert last(rulings, "take_row")["reason"] == "match_last"


def test_three_card_straight_in_any_order() -> None:
    base = plays("Ann:9S", "Ann:JH", "Ben:TD")
    rulings = rule([*base, *plays("Cat:2C")], three_card_straight=True)
    assert last(rulings, "take_row")["reason"] == "failed_straight"
    rulings = rule([*base, *plays("Cat:QC", "Ann:8C", "Ben:4S")], three_card_straight=True)
    assert last(rulings, "take_row")["taker"] == "Ben"


def test_glide_up_and_down() -> None:
    rulings = rule(plays("Ann:5S", "Ann:8H", "Ben:KD", "Cat:2C"), glide=True)
    assert last(rulings, "take_row")["reason"] == "failed_glide"
    rulings = rule(plays("Ann:9S", "Ann:2H", "Ben:AD", "Cat:3C"), glide=True)
    assert last(rulings, "take_row")["reason"] == "failed_glide"


def test_with_two_runs_in_force_failing_either_picks_up_the_row() -> None:
    base = plays("Ann:4H", "Ann:7H", "Ben:9H")  # a flush and an upward glide at once
    rulings = rule([*base, *plays("Cat:KC")], three_card_flush=True, glide=True)
    take = last(rulings, "take_row")  # the king carries the glide on but breaks the flush
    assert (take["taker"], take["reason"]) == ("Cat", "failed_flush")
    rulings = rule([*base, *plays("Cat:KH")], three_card_flush=True, glide=True)
    assert not of_kind(rulings, "take_row")  # both carried on


def test_ten_card_string_can_be_passed_on() -> None:
    run = ["Ann:AS", "Ann:3H", "Ben:5D", "Cat:7C", "Ann:9S", "Ben:JH", "Cat:KD",
           "Ann:2C", "Ben:4S", "Cat:6H"]
    rulings = rule([*plays(*run), declare("ten_card_string", "Cat")], ten_card_string=True)
    take = last(rulings, "take_row")
    assert (take["taker"], take["reason"], take["cards"]) == ("Ann", "ten_card_string", 10)


# --- whole rounds on a real shuffled deck ----------------------------------------------

def _deal(players: list[str], starter: str, jokers: int,
          rng: random.Random) -> dict[str, deque[Card]]:
    deck = [*STANDARD_DECK, *[JOKER] * jokers]
    rng.shuffle(deck)
    order = players[players.index(starter):] + players[:players.index(starter)]
    hands: dict[str, deque[Card]] = {p: deque() for p in players}
    for i, c in enumerate(deck):
        hands[order[i % len(order)]].append(c)
    return hands


def _play_game(players: list[str], seed: int, chicken_rate: float) -> None:
    """The physical game (real face-down piles), refereed card by card."""
    rng = random.Random(seed)
    jokers = len(players)
    session = Session.start(GAME, players, {})
    hands = _deal(players, players[0], jokers, rng)
    piles: dict[str, list[Card]] = {p: [] for p in players}
    row: list[Card] = []
    t = 0.0
    seen: set[tuple[object, ...]] = set()
    looped = False
    for _ in range(4000):
        if session.state.game_over:
            return
        t += 1
        player = session.state.to_play
        table = (player, session.state.mode, session.state.round, tuple(row),
                 tuple(tuple(hands[p]) for p in players))
        looped = looped or table in seen
        seen.add(table)
        if row and rng.random() < chicken_rate and session.state.mode == "play":
            rulings = session.feed(Declare(t=t, type="declare", what="chicken_out",
                                           player=player))
        else:
            top = hands[player].popleft()
            row.append(top)
            rulings = session.feed(CardPlaced(t=t, type="card_placed", card=str(top),
                                              player=player))
        assert not [r for r in rulings if r.kind in ("illegal", "impossible")], rulings
        for ruling in rulings:
            data = ruling.to_json()
            if data["kind"] == "take_row":
                taken = [Card.parse(c) for c in data["row"]]
                assert taken == row
                (piles[data["taker"]] if data["to_penalty_pile"] else
                 hands[data["taker"]]).extend(row)
                row = []
            if "hand_counts" in data:
                assert data["hand_counts"] == {p: len(hands[p]) for p in players}
            if data["kind"] == "score":
                expected = {p: sum(5 if c.is_joker else 1 for c in [*hands[p], *piles[p]])
                            for p in players}
                if session.state.unrevealed_jokers == 0:
                    assert data["evidence"]["penalties"] == expected
                if not session.state.game_over:
                    hands = _deal(players, session.state.to_play, jokers, rng)
                    piles = {p: [] for p in players}
                    row = []
        in_play = sum(len(h) for h in hands.values()) + len(row) + sum(map(len, piles.values()))
        assert in_play == 52 + jokers
    # The physical game can loop for ever (seed 5035: a player holding K K 2 2 starts a row
    # with K K and takes it, starts one with 2 2 and takes it, ...); any other must end.
    assert looped, "the game did not end"


@pytest.mark.parametrize("players", [THREE, ["Ann", "Ben"]])
def test_whole_games_keep_every_card_and_score_real_hands(players: list[str]) -> None:
    _play_game(players, seed=1, chicken_rate=0.0)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), chicken=st.sampled_from([0.0, 0.05]),
       two=st.booleans())
# Both players ran out with a row of two standing (the last taker began it with his last
# card): the round must end, not wait for a card nobody has.
@example(seed=4550, chicken=0.05, two=True)
@example(seed=5035, chicken=0.05, two=False)
def test_random_games_conserve_cards(seed: int, chicken: float, two: bool) -> None:
    _play_game(["Ann", "Ben"] if two else THREE, seed, chicken)


def test_a_last_card_that_makes_its_player_take_the_row_does_not_end_the_round() -> None:
    from referee.rules.slapstick import Hand

    session = Session.start(GAME, THREE, {})
    for t, (player, code) in enumerate([("Ann", "5S"), ("Ann", "9H"), ("Ben", "KD")], 1):
        session.feed(CardPlaced(t=t, type="card_placed", card=code, player=player))
    session.state.hands["Cat"] = Hand(1)  # Cat is down to one card
    rulings = [r.to_json() for r in session.feed(CardPlaced(t=4, type="card_placed",
                                                            card="KH", player="Cat"))]
    take = last(rulings, "take_row")
    assert (take["taker"], take["hand_counts"]["Cat"]) == ("Cat", 4)
    # Cat holds the row now: nobody is out of cards, so the round goes on (rules.md: it
    # ends when a player has no cards once the row is taken).
    assert not of_kind(rulings, "score") and last(rulings, "turn")["player"] == "Cat"


@pytest.mark.parametrize("players", [THREE, ["Ann", "Ben"]])
def test_the_next_player_takes_a_row_given_away_even_with_no_cards_left(
        players: list[str]) -> None:
    from referee.rules.slapstick import Hand

    session = Session.start(GAME, players, {})
    last_seat = players[-1]
    moves = [("Ann", "5S"), ("Ann", "9H")] + ([("Ben", "7D")] if len(players) == 3 else [])
    for t, (player, code) in enumerate(moves, 1):
        session.feed(CardPlaced(t=t, type="card_placed", card=code, player=player))
    session.state.hands[last_seat] = Hand(1)  # the last seat plays its last card
    session.feed(CardPlaced(t=5, type="card_placed", card="2C", player=last_seat))
    matcher = players[-2]
    if matcher != "Ann":
        session.feed(CardPlaced(t=6, type="card_placed", card="4D", player="Ann"))
    rulings = [r.to_json() for r in session.feed(CardPlaced(t=7, type="card_placed",
                                                            card="9S", player=matcher))]
    take = last(rulings, "take_row")
    # 9S matches the 9H, neither first nor last: the next player by seat takes the row,
    # though out of cards (not the matcher, nor the player after the empty seat).
    assert (take["taker"], take["reason"]) == (last_seat, "match_other")
    assert take["hand_counts"][last_seat] == take["cards"]
    # Holding cards again, they start the new row; nobody is out, the round goes on.
    assert not of_kind(rulings, "score") and last(rulings, "turn")["player"] == last_seat


def test_a_card_played_out_of_turn_does_not_end_a_chicken_run() -> None:
    observations = [*plays("Ann:5S", "Ann:9H", "Ben:KD"), declare("chicken_out", "Cat"),
                    *plays("Cat:2C", "Cat:7D", "Ben:8H", "Cat:9S")]
    rulings = rule(observations)
    assert [r["player"] for r in of_kind(rulings, "illegal")] == ["Ben"]  # Ann is next
    assert last(rulings, "legal")["player"] == "Cat"  # still chickening


def test_a_ten_card_string_grown_to_thirteen_ends_the_round_without_a_new_row() -> None:
    run = ["Ann:AS", "Ann:3H", "Ben:5D", "Cat:7C", "Ann:9S", "Ben:JH", "Cat:KD",
           "Ann:2C", "Ben:4S", "Cat:6H", "Ann:8D", "Ben:TS", "Cat:QH"]
    rulings = rule(plays(*run), ten_card_string=True)
    take = last(rulings, "take_row")
    assert (take["reason"], take["cards"]) == ("ten_card_string", 13)
    after = rulings[rulings.index(take) + 1:]
    assert after[0]["kind"] == "score"
    assert not any("new row" in r.get("message", "") for r in after)


def test_the_starter_cannot_chicken_out_of_a_row_half_opened() -> None:
    rulings = rule([*plays("Ann:5C"), declare("chicken_out", "Ann")])
    illegal = last(rulings, "illegal")
    assert (illegal["rule"], illegal["player"]) == ("opening_row", "Ann")
    assert "second card" in illegal["message"]


def test_a_string_owner_with_no_cards_left_does_not_take_the_turn_from_the_next_player(
        ) -> None:
    # Ann wins ten pairs (each matched first, so each row is hers), then opens a row of ten
    # unmatched cards with her last card: Ben is to play, unless Ann plays on, which she
    # cannot. A card read as hers is impossible, and Ben still plays.
    pairs = [f"Ann:{r}{s}" for r in "A23456789T" for s in "SH"]
    row = [f"{p}:{c}" for p, c in zip(
        ["Ann", "Ann", "Ben", "Ann", "Ben", "Ann", "Ben", "Ann", "Ben", "Ann"],
        ["AD", "3D", "5D", "7D", "9D", "JD", "KD", "2C", "4C", "6C"], strict=True)]
    rulings = rule(plays(*pairs, *row, "Ann:8D", "Ben:8C"), ["Ann", "Ben"],
                   ten_card_string=True, jokers=0)
    assert last(rulings, "impossible")["rule"] == "no_cards_left"
    assert not of_kind(rulings, "illegal")
    assert last(rulings, "legal")["card"] == "8C"


def test_a_card_in_a_penalty_pile_played_again_is_a_misread() -> None:
    # Two players: Ben matches the first card, so the row goes to his penalty pile, out of
    # play; the five of hearts seen again is a misread, and Ben still has his turn.
    rulings = rule(plays("Ann:5H", "Ann:9C", "Ben:5S", "Ben:5H"), ["Ann", "Ben"])
    assert last(rulings, "take_row")["to_penalty_pile"]
    impossible = last(rulings, "impossible")
    assert (impossible["rule"], impossible["card"]) == ("card_already_played", "5H")
    assert "penalty pile" in impossible["message"]
    assert rulings[-1]["kind"] == "impossible"  # nothing else ruled on it


def test_a_card_another_player_took_cannot_be_played_by_someone_else() -> None:
    # Cat takes the row holding the three of spades: it lies in her hand, not in Ann's.
    moves = ("Ann:5H", "Ann:9C", "Ben:3D", "Cat:3S", "Cat:2C", "Cat:7D")
    taken = rule(plays(*moves))
    assert last(taken, "take_row")["taker"] == "Cat"
    rulings = rule(plays(*moves, "Ann:3S"))
    impossible = last(rulings, "impossible")
    assert (impossible["rule"], impossible["player"]) == ("card_already_played", "Ann")
    assert "Cat's hand" in impossible["message"]
    assert last(rulings, "legal") == last(taken, "legal")  # Ann's turn is still to come
    # Cat herself may play it from her hand.
    assert not of_kind(rule(plays(*moves[:-1], "Cat:3S")), "impossible")


def test_a_joker_is_a_misread_once_every_joker_is_taken() -> None:
    moves = ("Ann:JK", "Ann:5C", "Ben:JK", "Cat:4C", "Cat:9D")
    rulings = rule(plays(*moves, "Ann:JK"), jokers=2)
    assert last(rulings, "take_row")["taker"] == "Cat"
    assert last(rulings, "impossible")["rule"] == "card_already_played"
    assert not of_kind(rule(plays(*moves, "Ann:JK"), jokers=3), "impossible")
