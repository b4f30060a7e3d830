"""Push Out the Pig / Gong Zhu (rules.md §3).

Four players (no jokers) unless a test is about jokers.  Each card is observed as a
`card_placed` with the player who played it; after a trick its winner collects the four cards
(`card_removed` with player = the taker).  Full 13-trick rounds are generated from a plan of
13 tricks ({player: card}); the leader of each trick is the previous trick's winner, as the
rules require, and the plans are checked here for follow-suit legality and a proper deal.
"""

from __future__ import annotations

import pytest
from scenario_tools import (
    Timeline,
    assert_illegal,
    card_codes,
    dump,
    of_kind,
    verdict,
)

GAME = "push-out-the-pig"
P4 = ["ann", "ben", "cat", "dan"]
P3 = ["ann", "ben", "cat"]
RANKS = "23456789TJQKA"
HEART_VALUES = {
    "AH": -50, "KH": -40, "QH": -30, "JH": -20,
    "TH": -10, "9H": -10, "8H": -10, "7H": -10, "6H": -10, "5H": -10,
    "4H": 0, "3H": 0, "2H": 0,
}  # fmt: skip


def suit(code: str) -> str | None:
    return None if code == "JK" else code[1]


def trick_result(plays: list[tuple[str, str]]) -> tuple[str, str | None]:
    """(winner, led suit) of a trick given (player, card) in play order."""
    led = next((suit(c) for _, c in plays if c != "JK"), None)
    if led is None:
        return plays[0][0], None
    winner = max((pc for pc in plays if suit(pc[1]) == led), key=lambda pc: RANKS.index(pc[1][0]))
    return winner[0], led


def seat_order(players: list[str], leader: str) -> list[str]:
    i = players.index(leader)
    return players[i:] + players[:i]


def placed(code: str, player: str, seat: int) -> dict:
    x, y = 150 * seat, 0
    return {
        "type": "card_placed",
        "card": code,
        "corners": [[x, y], [x + 63, y], [x + 63, y + 88], [x, y + 88]],
        "player": player,
    }


def play_trick(tl: Timeline, players: list[str], leader: str, cards: dict[str, str]) -> dict:
    """Play one trick (cards by player), leader first then clockwise; winner collects."""
    plays = [(p, cards[p]) for p in seat_order(players, leader) if p in cards]
    times = [tl.add(placed(c, p, players.index(p))) for p, c in plays]
    winner, led = trick_result(plays)
    if len(plays) == len(players):
        for _, c in plays:
            tl.add({"type": "card_removed", "card": c, "player": winner})
    return {"winner": winner, "led": led, "times": times, "plays": plays}


def check_plan(plan: list[dict[str, str]], players: list[str], first_leader: str) -> None:
    """Sanity-check a 13-trick plan for four players: proper deal and nobody revokes."""
    assert len(plan) == 13
    hands = {p: [t[p] for t in plan] for p in players}
    everything = [c for h in hands.values() for c in h]
    assert len(set(everything)) == 52 == len(everything)
    leader = first_leader
    for i, trick in enumerate(plan):
        plays = [(p, trick[p]) for p in seat_order(players, leader)]
        winner, led = trick_result(plays)
        for p, c in plays[1:]:
            if suit(c) != led:
                later = [t[p] for t in plan[i + 1 :]]
                assert all(suit(x) != led for x in later), f"{p} revokes in trick {i + 1}"
        leader = winner


def play_round(tl: Timeline, plan: list[dict[str, str]], first_leader: str, players=P4):
    check_plan(plan, players, first_leader)
    leader = first_leader
    tricks = []
    captured: dict[str, set[str]] = {p: set() for p in players}
    for trick in plan:
        res = play_trick(tl, players, leader, trick)
        tricks.append(res)
        captured[res["winner"]] |= set(trick.values())
        leader = res["winner"]
    return tricks, captured


def oracle_points(captured: dict[str, set[str]]) -> dict[str, int]:
    """Round points per rules.md §3 (used only to double-check the hand-computed numbers)."""
    out = {}
    for p, cards in captured.items():
        hearts = {c for c in cards if c in HEART_VALUES}
        specials = {"QS", "JD", "TC"} & cards
        if len(hearts) == 13 and len(specials) == 3:
            out[p] = 800
            continue
        value = 200 if len(hearts) == 13 else sum(HEART_VALUES[c] for c in hearts)
        value += -100 if "QS" in cards else 0
        value += 100 if "JD" in cards else 0
        if "TC" in cards:
            value = value * 2 if (hearts or specials - {"TC"}) else 50
        out[p] = value
    return out


def T(ann: str, ben: str, cat: str, dan: str) -> dict[str, str]:
    return {"ann": ann, "ben": ben, "cat": cat, "dan": dan}


# Round A: QS and TC and JH to ann (-120 doubled = -240), QH+8H+9H+TH to ben (-60),
# AH to cat (-50), KH+7H+6H+5H and JD to dan (-70 + 100 = +30).
ROUND_A = [
    T("2S", "3S", "4S", "5S"),  # ann leads; dan wins
    T("AS", "7S", "QS", "6S"),  # ann wins QS
    T("8S", "KS", "9S", "TS"),  # ben
    T("2H", "3H", "AH", "4H"),  # cat wins AH
    T("6H", "7H", "5H", "KH"),  # dan wins KH 5H 6H 7H
    T("9H", "QH", "TH", "8H"),  # ben wins QH 8H 9H TH
    T("4D", "2D", "3D", "JD"),  # dan wins JD
    T("AD", "6D", "7D", "5D"),  # ann
    T("8D", "9D", "KD", "TD"),  # cat
    T("TC", "4C", "2C", "3C"),  # ann wins TC
    T("5C", "AC", "6C", "7C"),  # ben
    T("QC", "8C", "9C", "JC"),  # ann
    T("JS", "JH", "QD", "KC"),  # ann leads JS, wins JH
]
POINTS_A = {"ann": -240, "ben": -60, "cat": -50, "dan": 30}
WINNERS_A = [
    "dan", "ann", "ben", "cat", "dan", "ben", "dan", "ann", "cat", "ann", "ben", "ann", "ann",
]  # fmt: skip

# Round B: TC with no other scoring card: +50 to dan.
ROUND_B = [
    T("2S", "3S", "4S", "5S"),  # dan
    T("AS", "7S", "QS", "6S"),  # ann wins QS
    T("8S", "KS", "9S", "TS"),  # ben
    T("2H", "3H", "AH", "4H"),  # cat wins AH
    T("7H", "KH", "5H", "6H"),  # ben wins KH 5H 6H 7H
    T("QH", "8H", "9H", "TH"),  # ann wins QH 8H 9H TH
    T("2D", "3D", "JD", "4D"),  # cat wins JD
    T("6D", "7D", "5D", "AD"),  # dan
    T("9D", "KD", "TD", "8D"),  # ben
    T("TC", "2C", "3C", "AC"),  # dan wins TC alone
    T("4C", "6C", "7C", "5C"),  # cat
    T("JC", "QC", "8C", "9C"),  # ben
    T("JS", "KC", "JH", "QD"),  # ben leads KC, wins JH
]
POINTS_B = {"ann": -160, "ben": -90, "cat": 50, "dan": 50}

# Round F: like B, but dan's TC comes with the 2H (a zero-valued scoring card): 0, not +50.
ROUND_F = [
    T("2S", "3S", "4S", "5S"),  # dan
    T("AS", "7S", "QS", "6S"),  # ann wins QS
    T("8S", "KS", "9S", "TS"),  # ben
    T("JH", "3H", "AH", "4H"),  # cat wins AH JH
    T("7H", "KH", "5H", "6H"),  # ben wins KH 5H 6H 7H
    T("QH", "8H", "9H", "TH"),  # ann wins QH 8H 9H TH
    T("2D", "3D", "JD", "4D"),  # cat wins JD
    T("6D", "7D", "5D", "AD"),  # dan
    T("9D", "KD", "TD", "8D"),  # ben
    T("TC", "2C", "3C", "AC"),  # dan wins TC
    T("4C", "6C", "7C", "5C"),  # cat
    T("JC", "9C", "8C", "QC"),  # dan
    T("JS", "KC", "2H", "QD"),  # dan leads QD, wins 2H
]
POINTS_F = {"ann": -160, "ben": -70, "cat": 30, "dan": 0}

# Round C: small slam for cat (+200); QS and TC to ann (-200); JD to dan.
ROUND_C = [
    T("2S", "3S", "4S", "5S"),  # dan
    T("AS", "7S", "QS", "6S"),  # ann wins QS
    T("8S", "KS", "9S", "TS"),  # ben
    T("4H", "2H", "AH", "3H"),  # cat
    T("6H", "7H", "KH", "5H"),  # cat
    T("9H", "TH", "QH", "8H"),  # cat
    T("3D", "4D", "2D", "JD"),  # dan wins JD
    T("AD", "6D", "7D", "5D"),  # ann
    T("8D", "9D", "TD", "KD"),  # dan
    T("TC", "3C", "4C", "2C"),  # ann wins TC
    T("5C", "AC", "6C", "7C"),  # ben
    T("JC", "8C", "KC", "9C"),  # cat
    T("JS", "QD", "JH", "QC"),  # cat leads JH: all 13 hearts
]
POINTS_C = {"ann": -200, "ben": 0, "cat": 200, "dan": 100}

# Round C2: like C, but cat also takes the TC: the small slam's +200 is doubled to +400.
ROUND_C2 = [
    *ROUND_C[:9],
    T("TC", "3C", "AC", "2C"),  # cat wins TC
    T("5C", "4C", "6C", "7C"),  # dan
    T("JC", "8C", "KC", "9C"),  # cat
    T("JS", "QD", "JH", "QC"),  # cat leads JH
]
POINTS_C2 = {"ann": -100, "ben": 0, "cat": 400, "dan": 100}

# Round D: grand slam.  Each player holds one whole suit; ann leads spades every trick and
# takes everything: hearts +200, QS +100, JD +100, doubled by TC = +800.
ROUND_D = [
    T(s, h, d, c)
    for s, h, d, c in zip(
        [r + "S" for r in RANKS],
        [r + "H" for r in RANKS],
        [r + "D" for r in RANKS],
        [r + "C" for r in RANKS],
        strict=True,
    )
]
POINTS_D = {"ann": 800, "ben": 0, "cat": 0, "dan": 0}

# Round E: ben takes QS, TC and every heart but the 2H: (-100 - 200) x 2 = -600; JD to ann.
ROUND_E = [
    T("2S", "AS", "3S", "QS"),  # ben wins QS
    T("KS", "4S", "5S", "6S"),  # ann
    T("7S", "8S", "9S", "TS"),  # dan
    T("4H", "AH", "5H", "3H"),  # ben
    T("8H", "KH", "6H", "7H"),  # ben
    T("JH", "QH", "9H", "TH"),  # ben
    T("4C", "AC", "TC", "3C"),  # ben wins TC
    T("7C", "2C", "5C", "6C"),  # ann
    T("8C", "9C", "JC", "QC"),  # dan
    T("JD", "3D", "4D", "2D"),  # ann wins JD
    T("5D", "6D", "AD", "7D"),  # cat
    T("9D", "TD", "8D", "KD"),  # dan
    T("JS", "QD", "2H", "KC"),  # dan leads KC, takes the 2H
]
POINTS_E = {"ann": 100, "ben": -600, "cat": 0, "dan": 0}


@pytest.mark.parametrize(
    ("plan", "leader", "points"),
    [
        (ROUND_A, "ann", POINTS_A),
        (ROUND_B, "ann", POINTS_B),
        (ROUND_F, "ann", POINTS_F),
        (ROUND_C, "ann", POINTS_C),
        (ROUND_C2, "ann", POINTS_C2),
        (ROUND_D, "ann", POINTS_D),
        (ROUND_E, "ann", POINTS_E),
    ],
)
def test_plans_are_consistent(plan, leader, points):
    """Self-check of the test data (no referee involved)."""
    _, captured = play_round(Timeline(), plan, leader)
    assert oracle_points(captured) == points


def round_rulings(adjudicate, plan):
    tl = Timeline()
    tricks, _ = play_round(tl, plan, "ann")
    return tl, tricks, adjudicate(GAME, tl.obs, P4)


def only_round_score(rulings):
    scores = of_kind(rulings, "round_score")
    assert len(scores) == 1, dump(rulings)
    return scores[0]


# ---------------------------------------------------------------- tricks


def test_highest_card_of_led_suit_wins(adjudicate):
    tl = Timeline()
    # ann leads 5H; cat has no heart and plays KS (higher rank but not the led suit)
    play_trick(tl, P4, "ann", T("5H", "9H", "KS", "2H"))
    rulings = adjudicate(GAME, tl.obs, P4)
    tricks = of_kind(rulings, "trick")
    assert len(tricks) == 1, dump(rulings)
    assert tricks[0]["winner"] == "ben"
    assert tricks[0]["led_suit"] == "H"
    assert sorted(card_codes(tricks[0]["cards"])) == sorted(["5H", "9H", "KS", "2H"])


def test_trick_winner_leads_next(adjudicate):
    tl = Timeline()
    play_trick(tl, P4, "ann", T("5H", "9H", "KS", "2H"))  # ben wins
    res = play_trick(tl, P4, "ben", T("3C", "AC", "4C", "5C"))
    rulings = adjudicate(GAME, tl.obs, P4)
    tricks = of_kind(rulings, "trick")
    assert [t["winner"] for t in tricks] == ["ben", "ben"]
    assert of_kind(rulings, "illegal", since=res["times"][0]) == []


def test_leading_after_someone_else_won_is_out_of_turn(adjudicate):
    tl = Timeline()
    play_trick(tl, P4, "ann", T("5H", "9H", "KS", "2H"))  # ben wins, so ben leads next
    t = tl.add(placed("3C", "ann", 0))
    assert_illegal(verdict(adjudicate(GAME, tl.obs, P4), t), "out_of_turn")


def test_playing_out_of_turn_within_a_trick(adjudicate):
    tl = Timeline()
    tl.add(placed("5H", "ann", 0))
    t = tl.add(placed("9H", "cat", 2))  # ben should play second
    assert_illegal(verdict(adjudicate(GAME, tl.obs, P4), t), "out_of_turn")


def test_joker_lead_first_non_joker_sets_the_suit(adjudicate):
    tl = Timeline()
    play_trick(tl, P3, "ann", {"ann": "JK", "ben": "7D", "cat": "KD"})
    tricks = of_kind(adjudicate(GAME, tl.obs, P3), "trick")
    assert len(tricks) == 1
    assert tricks[0]["winner"] == "cat"
    assert tricks[0]["led_suit"] == "D"


def test_joker_never_wins(adjudicate):
    tl = Timeline()
    play_trick(tl, P3, "ann", {"ann": "5C", "ben": "JK", "cat": "3C"})
    tricks = of_kind(adjudicate(GAME, tl.obs, P3), "trick")
    assert tricks[0]["winner"] == "ann"
    assert tricks[0]["led_suit"] == "C"


def test_joker_may_be_played_while_holding_the_led_suit(adjudicate):
    # joker_any_time (default true): ben plays a joker on a club lead and a club later on.
    tl = Timeline()
    play_trick(tl, P3, "ann", {"ann": "5C", "ben": "JK", "cat": "3C"})  # ann wins
    play_trick(tl, P3, "ann", {"ann": "6C", "ben": "9C", "cat": "4C"})  # ben follows clubs
    rulings = adjudicate(GAME, tl.obs, P3)
    assert of_kind(rulings, "revoke") == [], dump(rulings)
    assert of_kind(rulings, "illegal") == [], dump(rulings)


# ---------------------------------------------------------------- revoke and first lead


def test_revoke_is_ruled_when_the_suit_reappears(adjudicate):
    tl = Timeline()
    # trick 1: hearts led, ben discards a spade (claims to have no heart); cat wins with 9H
    play_trick(tl, P4, "ann", T("5H", "3S", "9H", "2H"))
    # trick 2: cat leads hearts, ben now plays a heart -> revoke by ben
    res = play_trick(tl, P4, "cat", T("7H", "8H", "4H", "6H"))
    ben_time = res["times"][[p for p, _ in res["plays"]].index("ben")]
    rulings = adjudicate(GAME, tl.obs, P4)
    revokes = of_kind(rulings, "revoke")
    assert len(revokes) == 1, dump(rulings)
    assert revokes[0].get("player") == "ben"
    assert revokes[0]["t"] >= ben_time


def test_no_revoke_in_a_clean_round(adjudicate):
    # ann leads the first trick with the 2S herself: no wrong_leader either
    _, _, rulings = round_rulings(adjudicate, ROUND_A)
    assert of_kind(rulings, ("revoke", "illegal", "wrong_leader")) == [], dump(rulings)
    assert [r for r in rulings if r.get("rule") == "wrong_leader"] == []


def test_two_of_spades_from_another_player_than_the_first_leader(adjudicate):
    tl = Timeline()
    res = play_trick(tl, P4, "ann", T("5S", "2S", "3S", "4S"))
    rulings = adjudicate(GAME, tl.obs, P4)
    flagged = [
        r for r in rulings if r.get("rule") == "wrong_leader" or r.get("kind") == "wrong_leader"
    ]
    assert flagged, dump(rulings)
    assert flagged[0]["t"] >= res["times"][1]


# ---------------------------------------------------------------- round scoring


def test_full_round_trick_winners(adjudicate):
    _, tricks, rulings = round_rulings(adjudicate, ROUND_A)
    assert [t["winner"] for t in tricks] == WINNERS_A  # the plan's own bookkeeping
    assert [t["winner"] for t in of_kind(rulings, "trick")] == WINNERS_A


def test_round_score_qs_jd_and_tc_doubling(adjudicate):
    _, _, rulings = round_rulings(adjudicate, ROUND_A)
    rs = only_round_score(rulings)
    assert rs["round"] == 1
    assert rs["points"] == POINTS_A
    assert rs["total"] == POINTS_A


def test_round_is_scored_as_soon_as_the_13th_trick_is_complete(adjudicate):
    tl = Timeline()
    tricks, _ = play_round(tl, ROUND_A, "ann")
    last_card_t = tricks[-1]["times"][-1]
    # drop the final collection of the cards: the trick is complete once its 4th card is down
    obs = [o for o in tl.obs if o["t"] <= last_card_t]
    rulings = adjudicate(GAME, obs, P4)
    assert only_round_score(rulings)["points"] == POINTS_A


def test_ten_of_clubs_alone_is_plus_50(adjudicate):
    _, _, rulings = round_rulings(adjudicate, ROUND_B)
    assert only_round_score(rulings)["points"] == POINTS_B


def test_ten_of_clubs_with_only_a_zero_heart_doubles_zero(adjudicate):
    _, _, rulings = round_rulings(adjudicate, ROUND_F)
    assert only_round_score(rulings)["points"] == POINTS_F


def test_all_hearts_small_slam_is_plus_200(adjudicate):
    _, _, rulings = round_rulings(adjudicate, ROUND_C)
    assert only_round_score(rulings)["points"] == POINTS_C


def test_small_slam_doubled_by_ten_of_clubs(adjudicate):
    _, _, rulings = round_rulings(adjudicate, ROUND_C2)
    assert only_round_score(rulings)["points"] == POINTS_C2


def test_grand_slam_is_plus_800(adjudicate):
    _, _, rulings = round_rulings(adjudicate, ROUND_D)
    rs = only_round_score(rulings)
    assert rs["points"] == POINTS_D
    assert of_kind(rulings, "game_over") == [], "800 is below 1000: the game goes on"


def test_qs_doubled_by_tc_with_hearts(adjudicate):
    _, _, rulings = round_rulings(adjudicate, ROUND_E)
    assert only_round_score(rulings)["points"] == POINTS_E


# ---------------------------------------------------------------- later rounds and game end


def test_game_ends_after_the_round_reaching_plus_1000(adjudicate):
    tl = Timeline()
    play_round(tl, ROUND_D, "ann")
    t_round2 = tl.now
    play_round(tl, ROUND_D, "ann")  # ann took the QS, so ann leads round 2
    rulings = adjudicate(GAME, tl.obs, P4)
    scores = of_kind(rulings, "round_score")
    assert [s["round"] for s in scores] == [1, 2]
    assert scores[1]["points"] == POINTS_D
    assert scores[1]["total"] == {"ann": 1600, "ben": 0, "cat": 0, "dan": 0}
    assert of_kind(rulings, "game_over", until=t_round2) == []
    over = of_kind(rulings, "game_over")
    assert over and over[0]["winner"] == "ann", dump(rulings)


def test_game_ends_after_the_round_reaching_minus_1000(adjudicate):
    tl = Timeline()
    play_round(tl, ROUND_E, "ann")
    play_round(tl, ROUND_E, "ben")  # ben took the QS, so ben leads round 2
    rulings = adjudicate(GAME, tl.obs, P4)
    scores = of_kind(rulings, "round_score")
    assert [s["round"] for s in scores] == [1, 2]
    assert scores[1]["total"] == {"ann": 200, "ben": -1200, "cat": 0, "dan": 0}
    assert of_kind(rulings, "illegal") == [], dump(rulings)
    over = of_kind(rulings, "game_over")
    assert over and over[0]["winner"] == "ann", dump(rulings)


def test_later_round_is_led_by_the_queen_of_spades_taker(adjudicate):
    tl = Timeline()
    play_round(tl, ROUND_E, "ann")  # ben takes the QS
    t = tl.add(placed("2S", "ann", 0))  # ann leads round 2 instead of ben
    assert_illegal(verdict(adjudicate(GAME, tl.obs, P4), t))


def test_cumulative_totals_across_rounds(adjudicate):
    tl = Timeline()
    play_round(tl, ROUND_A, "ann")  # ann takes the QS
    play_round(tl, ROUND_D, "ann")
    rulings = adjudicate(GAME, tl.obs, P4)
    scores = of_kind(rulings, "round_score")
    assert [s["round"] for s in scores] == [1, 2]
    assert scores[1]["points"] == POINTS_D
    assert scores[1]["total"] == {p: POINTS_A[p] + POINTS_D[p] for p in P4}


# ---------------------------------------------------------------- other table sizes (jokers)


def simulate_round(players: list[str], seed: int) -> tuple[Timeline, list[dict], dict]:
    """A random but legal round: deck per rules.md §3 for len(players), dealt evenly;
    the first listed player holds the 2S and leads it; everybody follows suit when able."""
    import random

    rng = random.Random(seed)
    jokers = {3: 2, 4: 0, 5: 3, 6: 2}[len(players)]
    deck = [r + s for s in "SHDC" for r in RANKS] + ["JK"] * jokers
    rng.shuffle(deck)
    per = len(deck) // len(players)
    assert per * len(players) == len(deck)
    hands = {p: deck[i * per : (i + 1) * per] for i, p in enumerate(players)}
    first = players[0]
    if "2S" not in hands[first]:
        holder = next(p for p in players if "2S" in hands[p])
        i, j = hands[holder].index("2S"), 0
        hands[holder][i], hands[first][j] = hands[first][j], hands[holder][i]
    tl = Timeline()
    tricks = []
    captured: dict[str, list[str]] = {p: [] for p in players}
    leader = first
    for n in range(per):
        cards: dict[str, str] = {}
        led = None
        for p in seat_order(players, leader):
            hand = hands[p]
            if n == 0 and p == first:
                choice = "2S"
            elif led is not None and any(suit(c) == led for c in hand):
                choice = rng.choice([c for c in hand if suit(c) == led])
            else:
                choice = rng.choice(hand)
            hand.remove(choice)
            cards[p] = choice
            if led is None and choice != "JK":
                led = suit(choice)
        res = play_trick(tl, players, leader, cards)
        tricks.append(res)
        captured[res["winner"]] += list(cards.values())
        leader = res["winner"]
    return tl, tricks, {p: set(c) for p, c in captured.items()}


@pytest.mark.parametrize(
    ("players", "seed"),
    [
        (["ann", "ben", "cat"], 1),  # 2 jokers, 18 tricks
        (["ann", "ben", "cat", "dan"], 2),  # 13 tricks
        (["ann", "ben", "cat", "dan", "eve"], 4),  # 3 jokers, 11 tricks
        (["ann", "ben", "cat", "dan", "eve", "fay"], 5),  # 2 jokers, 9 tricks
    ],
)
def test_round_length_and_scoring_for_each_table_size(adjudicate, players, seed):
    tl, tricks, captured = simulate_round(players, seed)
    rulings = adjudicate(GAME, tl.obs, players)
    assert of_kind(rulings, ("illegal", "revoke")) == [], dump(rulings)
    ruled = of_kind(rulings, "trick")
    assert [t["winner"] for t in ruled] == [t["winner"] for t in tricks]
    last_card_t = tricks[-1]["times"][-1]
    scores = of_kind(rulings, "round_score")
    assert len(scores) == 1, dump(rulings)
    assert scores[0]["t"] >= last_card_t
    assert scores[0]["round"] == 1
    expected = oracle_points(captured)
    assert scores[0]["points"] == expected
    assert scores[0]["total"] == expected
