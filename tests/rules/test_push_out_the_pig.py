"""Push Out the Pig, rules.md section 3."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from referee.cards import JOKER, STANDARD_DECK, Card
from referee.observations import Setup, parse_line
from referee.rules.base import SettingsError
from referee.rules.push_out_the_pig import round_points
from referee.rules.registry import rules_for
from tests.helpers import adjudicate, last, of_kind, played

GAME = "push-out-the-pig"
FOUR = ["Ann", "Ben", "Cat", "Dan"]


def cards(text: str) -> list[Card]:
    return [Card.parse(code) for code in text.split()]


def trick(*plays: tuple[str, str]) -> list[dict[str, Any]]:
    return [played(code, player) for player, code in plays]


def rule(observations: list[dict[str, Any]], players: list[str] | None = None,
         **settings: Any) -> list[dict[str, Any]]:
    return adjudicate(GAME, observations, players or FOUR, settings)


# --- tricks ---------------------------------------------------------------------------

def test_highest_card_of_the_led_suit_wins_and_leads_next() -> None:
    rulings = rule(trick(("Ann", "2S"), ("Ben", "KS"), ("Cat", "AH"), ("Dan", "9S")))
    won = last(rulings, "trick")
    assert won["winner"] == "Ben"
    assert won["cards"] == ["2S", "KS", "AH", "9S"]
    assert won["led_suit"] == "S"
    assert last(rulings, "turn")["player"] == "Ben"


def test_every_card_of_a_trick_but_the_last_says_whose_turn_it_is() -> None:
    rulings = rule(trick(("Ann", "2S"), ("Ben", "KS"), ("Cat", "AH"), ("Dan", "9S")))
    assert [(r["t"], r["player"]) for r in of_kind(rulings, "turn")] == [
        (1.0, "Ben"), (2.0, "Cat"), (3.0, "Dan"), (4.0, "Ben")]  # then the winner leads


def test_ace_is_high() -> None:
    rulings = rule(trick(("Ann", "2S"), ("Ben", "KS"), ("Cat", "AS"), ("Dan", "QS")))
    assert last(rulings, "trick")["winner"] == "Cat"


def test_the_next_trick_is_led_by_the_winner() -> None:
    observations = [*trick(("Ann", "2S"), ("Ben", "KS"), ("Cat", "AH"), ("Dan", "9S")),
                    played("3D", "Cat")]
    assert last(rule(observations), "illegal")["rule"] == "out_of_turn"
    observations[-1] = played("3D", "Ben")
    assert not of_kind(rule(observations), "illegal")


def test_play_follows_seating_order() -> None:
    rulings = rule(trick(("Ann", "2S"), ("Cat", "KS")))
    illegal = last(rulings, "illegal")
    assert illegal["rule"] == "out_of_turn" and illegal["player"] == "Cat"


def test_a_joker_lead_lets_the_first_suit_card_set_the_suit() -> None:
    rulings = rule(trick(("Ann", "2S"), ("Ben", "JK"), ("Cat", "AS")), players=FOUR[:3])
    assert last(rulings, "trick")["winner"] == "Cat"
    rulings = rule([*trick(("Ann", "2S"), ("Ben", "3S"), ("Cat", "4S")),
                    *trick(("Cat", "JK"), ("Ann", "5D"), ("Ben", "KS"))], players=FOUR[:3])
    won = last(rulings, "trick")
    assert won["led_suit"] == "D" and won["winner"] == "Ann"


def test_a_joker_never_wins() -> None:
    rulings = rule(trick(("Ann", "2S"), ("Ben", "JK"), ("Cat", "3S")), players=FOUR[:3])
    assert last(rulings, "trick")["winner"] == "Cat"


def test_jokers_by_player_count() -> None:
    none = last(rule([played("JK", "Ann")]), "impossible")  # 4 players: no jokers
    assert (none["card"], none["rule"]) == ("JK", "not_in_deck")
    three = rule(trick(("Ann", "2S"), ("Ben", "JK"), ("Cat", "JK")), players=FOUR[:3])
    assert not of_kind(three, "impossible")
    observations = [*trick(("Ann", "2S"), ("Ben", "JK"), ("Cat", "JK")), played("JK", "Ann")]
    assert of_kind(rule(observations, players=FOUR[:3]), "impossible")


def test_a_card_played_twice_in_a_round_is_a_misread() -> None:
    rulings = rule(trick(("Ann", "2S"), ("Ben", "2S")))
    assert last(rulings, "impossible")["rule"] == "card_already_played"


def test_wrong_leader_when_the_two_of_spades_comes_from_another_player() -> None:
    rulings = rule(trick(("Ann", "9D"), ("Ben", "2S"), ("Cat", "3D"), ("Dan", "4D")))
    illegal = last(rulings, "illegal")
    assert illegal["rule"] == "wrong_leader" and illegal["player"] == "Ben"
    assert [r["kind"] for r in rulings if r.get("card") == "2S"] == ["illegal"]  # not legal too
    assert last(rulings, "trick")["winner"] == "Ann"  # the play itself stands


def test_the_first_leader_may_be_anyone() -> None:
    rulings = rule(trick(("Cat", "2S"), ("Dan", "3S"), ("Ann", "4S"), ("Ben", "5S")))
    assert not of_kind(rulings, "illegal")
    assert last(rulings, "trick")["winner"] == "Ben"


def test_revoke_is_ruled_when_the_player_later_plays_the_suit() -> None:
    observations = [
        *trick(("Ann", "2S"), ("Ben", "3S"), ("Cat", "4H"), ("Dan", "5S")),  # Cat: no spade?
        *trick(("Dan", "6D"), ("Ann", "7D"), ("Ben", "8D"), ("Cat", "9S")),  # Cat plays one
    ]
    rulings = rule(observations)
    revoke = last(rulings, "revoke")
    assert revoke["player"] == "Cat"
    assert revoke["tricks"] == [1, 2]
    assert revoke["suit"] == "S"


def test_no_revoke_when_the_suit_never_comes_back() -> None:
    observations = trick(("Ann", "2S"), ("Ben", "3S"), ("Cat", "4H"), ("Dan", "5S"))
    assert not of_kind(rule(observations), "revoke")


# --- scoring --------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("taken", "points"),
    [
        ("QS", -100), ("JD", 100), ("AH", -50), ("KH", -40), ("QH", -30), ("JH", -20),
        ("TH", -10), ("5H", -10), ("4H 3H 2H", 0), ("TC", 50), ("TC JD", 200),
        ("TC QS", -200), ("TC AH KH", -180), ("TC 2H", 0), ("QS JD", 0), ("9S 8C", 0),
    ],
)
def test_card_values(taken: str, points: int) -> None:
    assert round_points(cards(taken)) == points


def test_all_hearts_count_plus_two_hundred() -> None:
    hearts = [c for c in STANDARD_DECK if c.suit == "H"]
    assert round_points(hearts) == 200
    assert round_points([*hearts, *cards("QS")]) == 100  # small slam
    assert round_points([*hearts, *cards("TC")]) == 400
    assert round_points(hearts[:-1]) == sum(round_points([h]) for h in hearts[:-1])


def test_grand_slam_is_eight_hundred() -> None:
    hearts = [c for c in STANDARD_DECK if c.suit == "H"]
    assert round_points([*hearts, *cards("QS JD TC")]) == 800


def deal(players: list[str], seed: int) -> dict[str, list[Card]]:
    jokers = {3: 2, 4: 0, 5: 3, 6: 2}[len(players)]
    deck = [*STANDARD_DECK, *[JOKER] * jokers]
    random.Random(seed).shuffle(deck)
    size = len(deck) // len(players)
    return {p: deck[i * size:(i + 1) * size] for i, p in enumerate(players)}


def play_round(players: list[str], hands: dict[str, list[Card]], leader: str,
               rng: random.Random) -> tuple[list[dict[str, Any]], dict[str, list[Card]], str]:
    """Legal play: follow suit when able. Returns observations, captures, QS taker."""
    hands = {p: list(h) for p, h in hands.items()}
    observations: list[dict[str, Any]] = []
    captured: dict[str, list[Card]] = {p: [] for p in players}
    while hands[leader]:
        order = players[players.index(leader):] + players[:players.index(leader)]
        table: list[tuple[str, Card]] = []
        for p in order:
            led = next((c.suit for _, c in table if not c.is_joker), None)
            options = [c for c in hands[p] if led is not None and c.suit == led] or hands[p]
            choice = rng.choice(options)
            hands[p].remove(choice)
            table.append((p, choice))
            observations.append(played(str(choice), p))
        led = next((c.suit for _, c in table if not c.is_joker), None)
        if led is None:
            winner = table[0][0]
        else:
            winner = max((pc for pc in table if pc[1].suit == led),
                         key=lambda pc: 14 if pc[1].rank == 1 else pc[1].rank)[0]
        captured[winner] += [c for _, c in table]
        leader = winner
    pig = next(p for p in players if Card.parse("QS") in captured[p])
    return observations, captured, pig


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_a_whole_round_is_scored_after_its_last_trick(n: int) -> None:
    players = FOUR[:n] if n <= 4 else [*FOUR, "Eve", "Fay"][:n]
    hands = deal(players, seed=n)
    holder = next((p for p, h in hands.items() if Card.parse("2S") in h), players[0])
    observations, captured, _ = play_round(players, hands, holder, random.Random(n))
    rulings = rule(observations, players=players)
    assert len(of_kind(rulings, "trick")) == len(hands[players[0]])
    score = last(rulings, "round_score")
    assert score["round"] == 1
    assert score["points"] == {p: round_points(captured[p]) for p in players}
    assert score["total"] == score["points"]
    assert last(rulings, "score")["scores"] == score["total"]
    assert not of_kind(rulings, "illegal") and not of_kind(rulings, "revoke")


def test_the_pig_taker_leads_the_next_round() -> None:
    hands = deal(FOUR, seed=7)
    holder = next(p for p, h in hands.items() if Card.parse("2S") in h)
    first, _, pig = play_round(FOUR, hands, holder, random.Random(1))
    rulings = rule(first)
    assert last(rulings, "turn")["player"] == pig
    second, _, _ = play_round(FOUR, deal(FOUR, seed=8), pig, random.Random(2))
    rulings = rule([*first, *second])
    assert [r["round"] for r in of_kind(rulings, "round_score")] == [1, 2]
    assert not of_kind(rulings, "illegal")


def _sweep_hands() -> dict[str, list[Card]]:
    """Ann holds the top of every suit and all the scoring cards she must win."""
    ann = cards("AS KS QS AH KH QH JH TH 9H 8H 7H AD KD")
    rest = [c for c in STANDARD_DECK if c not in ann]
    return {"Ann": ann, "Ben": rest[0:13], "Cat": rest[13:26], "Dan": rest[26:39]}


def test_grand_slams_end_the_game_by_knockout() -> None:
    # Ann leads every trick with a card nobody can beat, so she takes all 52 cards.
    rng = random.Random(3)
    observations: list[dict[str, Any]] = []
    for _ in range(2):
        round_observations, captured, _ = _sweep_round(rng)
        assert len(captured["Ann"]) == 52
        observations += round_observations
    rulings = rule(observations)
    scores = of_kind(rulings, "round_score")
    assert [s["points"]["Ann"] for s in scores] == [800, 800]
    over = last(rulings, "game_over")
    assert over["winner"] == "Ann" and over["knockout"] is True
    assert rulings[-1]["kind"] == "game_over"


def _sweep_round(rng: random.Random) -> tuple[list[dict[str, Any]], dict[str, list[Card]],
                                              str]:
    hands = _sweep_hands()
    observations: list[dict[str, Any]] = []
    captured: dict[str, list[Card]] = {p: [] for p in FOUR}
    # Ann leads her cards top-down by suit; followers follow suit when able.
    for lead in list(hands["Ann"]):
        hands["Ann"].remove(lead)
        table = [lead]
        observations.append(played(str(lead), "Ann"))
        for p in FOUR[1:]:
            options = [c for c in hands[p] if c.suit == lead.suit] or hands[p]
            choice = rng.choice(options)
            hands[p].remove(choice)
            table.append(choice)
            observations.append(played(str(choice), p))
        captured["Ann"] += table
    return observations, captured, "Ann"


def test_game_end_waits_for_the_end_of_the_round() -> None:
    rulings = rule(_sweep_round(random.Random(4))[0])
    assert not of_kind(rulings, "game_over")
    assert last(rulings, "round_score")["total"]["Ann"] == 800


def test_minus_one_thousand_ends_the_game_too() -> None:
    # With game_end=500 a single slam ends it; the same check covers -1000 by symmetry.
    rulings = rule(_sweep_round(random.Random(5))[0], game_end=500)
    over = last(rulings, "game_over")
    assert over["winner"] == "Ann" and over["knockout"] is True


def test_revoke_penalty_setting_adds_points() -> None:
    observations = [
        *trick(("Ann", "2S"), ("Ben", "3S"), ("Cat", "4H"), ("Dan", "5S")),
        *trick(("Dan", "6D"), ("Ann", "7D"), ("Ben", "8D"), ("Cat", "9S")),
    ]
    rulings = rule(observations, revoke_penalty=-50)
    assert last(rulings, "revoke")["player"] == "Cat"


@pytest.mark.parametrize("penalty", ["50", "-50", "50.0"])
def test_a_revoke_penalty_is_taken_off_whatever_its_sign(penalty: str) -> None:
    rules = rules_for(GAME)
    state = rules.new_game(FOUR, rules.settings({"revoke_penalty": penalty}))
    observations = [
        *trick(("Ann", "2S"), ("Ben", "3S"), ("Cat", "4H"), ("Dan", "5S")),
        *trick(("Dan", "6D"), ("Ann", "7D"), ("Ben", "8D"), ("Cat", "9S")),
    ]
    for t, observation in enumerate(observations, start=1):
        parsed = parse_line(json.dumps({"t": t, **observation}))
        assert not isinstance(parsed, Setup)
        state = rules.apply(state, parsed).state
    assert state.penalties["Cat"] == -50


@pytest.mark.parametrize("value", ["1.5", "abc", "true"])
def test_a_revoke_penalty_is_flag_or_whole_points(value: str) -> None:
    with pytest.raises(SettingsError, match="flag or a whole number of points"):
        rules_for(GAME).settings({"revoke_penalty": value})


def test_first_lead_none_makes_the_first_listed_player_lead() -> None:
    rulings = rule(trick(("Ben", "9D")), first_lead="none")
    assert last(rulings, "illegal")["rule"] == "out_of_turn"
