"""Slapstick (Parlett; rules.md §5).

Three players ann, ben, cat (ann listed first starts: with 55 cards she holds the extra one).
Every card is a `card_placed` with the player who played it, laid along the row; a taken
row is picked up card by card (`card_removed` with player = the taker).
"""

from __future__ import annotations

from scenario_tools import Timeline, assert_illegal, dump, first_at_or_after, of_kind, verdict

GAME = "slapstick"
P3 = ["ann", "ben", "cat"]
P2 = ["ann", "ben"]


class Table:
    def __init__(self, players: list[str]) -> None:
        self.tl = Timeline()
        self.players = players
        self.row: list[str] = []

    def play(self, player: str, code: str) -> float:
        x = 25 * len(self.row)
        self.row.append(code)
        return self.tl.add(
            {
                "type": "card_placed",
                "card": code,
                "corners": [[x, 0], [x + 63, 0], [x + 63, 88], [x, 88]],
                "player": player,
            }
        )

    def pick_up(self, taker: str) -> None:
        for code in self.row:
            self.tl.add({"type": "card_removed", "card": code, "player": taker})
        self.row = []

    def chicken_out(self, player: str) -> float:
        return self.tl.add({"type": "declare", "player": player, "what": "chicken_out"})

    def rulings(self, adjudicate) -> list[dict]:
        return adjudicate(GAME, self.tl.obs, self.players)


def only_take(rulings: list[dict]) -> dict:
    takes = of_kind(rulings, "take_row")
    assert len(takes) == 1, dump(rulings)
    return takes[0]


def opening_row(table: Table) -> None:
    table.play("ann", "5H")
    table.play("ann", "9C")
    table.play("ben", "3D")


def test_matching_the_previous_card_takes_the_row(adjudicate):
    table = Table(P3)
    opening_row(table)
    t = table.play("cat", "3S")
    take = only_take(table.rulings(adjudicate))
    assert take["t"] >= t
    assert (take["taker"], take["reason"], take["cards"]) == ("cat", "match_last", 4)


def test_matching_the_first_card_takes_the_row(adjudicate):
    table = Table(P3)
    opening_row(table)
    table.play("cat", "5S")
    take = only_take(table.rulings(adjudicate))
    assert (take["taker"], take["reason"], take["cards"]) == ("cat", "match_first", 4)


def test_matching_another_card_makes_the_next_player_take(adjudicate):
    table = Table(P3)
    opening_row(table)
    table.play("cat", "9S")  # matches the 9C, neither first nor previous
    take = only_take(table.rulings(adjudicate))
    assert (take["taker"], take["reason"], take["cards"]) == ("ann", "match_other", 4)


def test_a_joker_makes_the_next_player_take(adjudicate):
    table = Table(P3)
    table.play("ann", "5H")
    table.play("ann", "9C")
    table.play("ben", "JK")
    take = only_take(table.rulings(adjudicate))
    assert (take["taker"], take["reason"], take["cards"]) == ("cat", "joker", 3)


def test_joker_played_by_the_last_seat_passes_the_row_round_to_the_first(adjudicate):
    table = Table(P3)
    opening_row(table)
    table.play("cat", "JK")
    take = only_take(table.rulings(adjudicate))
    assert (take["taker"], take["reason"]) == ("ann", "joker")


def test_second_card_of_a_new_row_matching_the_first(adjudicate):
    # The second card is checked too; matching the first (= previous) card: the player takes.
    table = Table(P3)
    table.play("ann", "5H")
    table.play("ann", "5C")
    take = only_take(table.rulings(adjudicate))
    assert take["taker"] == "ann"
    assert take["reason"] in ("match_first", "match_last")
    assert take["cards"] == 2


def test_taker_starts_the_new_row_and_play_goes_on_after_them(adjudicate):
    table = Table(P3)
    opening_row(table)
    table.play("cat", "9S")  # ann must take
    table.pick_up("ann")
    t = table.play("ann", "2C")
    table.play("ann", "7D")
    table.play("ben", "KD")
    table.play("cat", "QH")
    rulings = table.rulings(adjudicate)
    assert of_kind(rulings, "illegal") == [], dump(rulings)
    assert of_kind(rulings, "take_row", since=t) == [], dump(rulings)


def test_player_who_matches_first_starts_the_next_row(adjudicate):
    table = Table(P3)
    opening_row(table)
    table.play("cat", "3S")  # cat takes
    table.pick_up("cat")
    table.play("cat", "4C")
    table.play("cat", "8C")
    t = table.play("ann", "4S")  # matches the first card: ann takes
    rulings = table.rulings(adjudicate)
    assert of_kind(rulings, "illegal") == [], dump(rulings)
    take = first_at_or_after(rulings, t, "take_row")
    assert (take["taker"], take["reason"], take["cards"]) == ("ann", "match_first", 3)


def test_playing_out_of_turn_is_illegal(adjudicate):
    table = Table(P3)
    table.play("ann", "5H")
    table.play("ann", "9C")
    t = table.play("cat", "3D")  # ben's turn
    assert_illegal(verdict(table.rulings(adjudicate), t), "out_of_turn")


def test_chicken_out_takes_the_row(adjudicate):
    table = Table(P3)
    opening_row(table)
    t = table.chicken_out("cat")
    take = only_take(table.rulings(adjudicate))
    assert take["t"] >= t
    assert (take["taker"], take["reason"], take["cards"]) == ("cat", "chicken_out", 3)


# ---------------------------------------------------------------- two players, penalty pile

SL_RANKS = "A23456789TJQK"


def two_player_round() -> Table:
    """ann gets rid of all 27 of her cards.

    Nine times: ann starts a row with two cards, ben plays one, ann matches ben's card (the
    last card) and so takes the row -- into her penalty pile, as two players play.  Her 27th
    card is such a match, so the round ends when she takes that row.
    """
    table = Table(P2)
    suits = {r: list("SHDC") for r in SL_RANKS}

    def card(i: int) -> str:
        rank = SL_RANKS[i % 13]
        return rank + suits[rank].pop(0)

    for cycle in range(9):
        x, y, z = 3 * cycle, 3 * cycle + 1, 3 * cycle + 2
        table.play("ann", card(x))
        table.play("ann", card(y))
        table.play("ben", card(z))
        table.play("ann", card(z))
        table.pick_up("ann")
    return table


def test_two_players_rows_taken_by_matching_last(adjudicate):
    table = two_player_round()
    rulings = table.rulings(adjudicate)
    takes = of_kind(rulings, "take_row")
    assert [(t["taker"], t["reason"], t["cards"]) for t in takes] == [("ann", "match_last", 4)] * 9
    assert of_kind(rulings, "illegal") == [], dump(rulings)


def test_two_players_penalty_pile_counts_at_the_end(adjudicate):
    # ann: hand empty, penalty pile 36 cards -> -36.
    # ben: 27 dealt - 9 played = 18 in hand, among them both jokers (none was seen, and every
    # card ann held was seen): 16 + 2 x 5 = 26 -> -26.
    table = two_player_round()
    rulings = table.rulings(adjudicate)
    scores = of_kind(rulings, "score")
    assert scores, dump(rulings)
    assert scores[-1]["scores"] == {"ann": -36, "ben": -26}


def test_optional_extras_are_off_by_default(adjudicate):
    # Three hearts in a row (a three-card flush) and 4-5-6 (a straight, a glide): nothing
    # happens while the optional extras are off.
    table = Table(P3)
    table.play("ann", "4H")
    table.play("ann", "5H")
    table.play("ben", "6H")
    table.play("cat", "TC")
    table.play("ann", "2D")
    rulings = table.rulings(adjudicate)
    assert of_kind(rulings, "take_row") == [], dump(rulings)
    assert of_kind(rulings, "illegal") == [], dump(rulings)
