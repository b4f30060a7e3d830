"""Shove (Blake Philley; rules.md §4) on the default layout: 7 columns x 9 rows,
row 0 is red's side, victory square (0,3), red at (2,1) (2,3) (2,5), blue at (8,0) (8,2)
(8,4) (8,6).  Squares are [row, col].

The players are named "blue" and "red"; blue is listed first because blue acts first by
default.  A game turn: `declare die_roll` with the value, then blue's phase, then red's.
Each phase is observed as one final `board_state`; a phase that uses fewer actions than
rolled is closed with `declare end_turn`.
"""

from __future__ import annotations

from itertools import pairwise

from scenario_tools import Timeline, assert_illegal, dump, of_kind

GAME = "shove"
PLAYERS = ["blue", "red"]
RED0 = [(2, 1), (2, 3), (2, 5)]
BLUE0 = [(8, 0), (8, 2), (8, 4), (8, 6)]


class Board:
    def __init__(self) -> None:
        self.tl = Timeline()
        self.red = list(RED0)
        self.blue = list(BLUE0)

    def roll(self, value: int) -> float:
        return self.tl.add(
            {"type": "declare", "player": "blue", "what": "die_roll", "value": value}
        )

    def move(self, color: str, frm: tuple[int, int], to: tuple[int, int]) -> None:
        pieces = self.red if color == "red" else self.blue
        assert frm in pieces and to not in self.red + self.blue, (frm, to)
        pieces[pieces.index(frm)] = to

    def remove(self, color: str, square: tuple[int, int]) -> None:
        (self.red if color == "red" else self.blue).remove(square)

    def show(self) -> float:
        return self.tl.add(
            {
                "type": "board_state",
                "red": [list(p) for p in sorted(self.red)],
                "blue": [list(p) for p in sorted(self.blue)],
            }
        )

    def end_turn(self, player: str) -> float:
        return self.tl.add({"type": "declare", "player": player, "what": "end_turn"})

    def rulings(self, adjudicate, settings=None) -> list[dict]:
        return adjudicate(GAME, self.tl.obs, PLAYERS, settings)


def walk(board: Board, color: str, *path: tuple[int, int]) -> None:
    """Move one piece along a path of adjacent squares (one action per step)."""
    for a, b in pairwise(path):
        board.move(color, a, b)


def phase_verdict(rulings: list[dict], since: float, player: str) -> dict:
    found = [
        r
        for r in of_kind(rulings, ("legal", "illegal"), since=since)
        if r.get("player") in (player, None)
    ]
    assert found, f"no legal/illegal ruling for {player} after t={since}:\n" + dump(rulings)
    return found[0]


def actions_of(ruling: dict) -> list[dict]:
    assert "actions" in ruling, f"a legal phase carries `actions`: {ruling}"
    return ruling["actions"]


def reports_removal(rulings: list[dict], since: float = 0) -> bool:
    if of_kind(rulings, "removed", since=since):
        return True
    return any(r.get("removed") for r in rulings if r.get("t", 0) >= since)


# ---------------------------------------------------------------- phases and actions


def test_legal_blue_phase_announces_its_actions(adjudicate):
    b = Board()
    b.roll(3)
    t = b.tl.now
    walk(b, "blue", (8, 0), (7, 0), (6, 0))
    b.show()
    b.end_turn("blue")
    rulings = b.rulings(adjudicate)
    r = phase_verdict(rulings, t, "blue")
    assert r["kind"] == "legal", dump(rulings)
    acts = [(a.get("do"), a.get("from"), a.get("to")) for a in actions_of(r)]
    assert acts == [("move", [8, 0], [7, 0]), ("move", [7, 0], [6, 0])]


def test_red_phase_follows_blue_phase(adjudicate):
    b = Board()
    b.roll(2)
    walk(b, "blue", (8, 0), (7, 0))
    b.show()
    b.end_turn("blue")
    t = b.tl.now
    walk(b, "red", (2, 1), (3, 1))
    b.show()
    b.end_turn("red")
    rulings = b.rulings(adjudicate)
    r = phase_verdict(rulings, t, "red")
    assert r["kind"] == "legal", dump(rulings)
    assert [(a.get("do"), a.get("from"), a.get("to")) for a in actions_of(r)] == [
        ("move", [2, 1], [3, 1])
    ]
    assert of_kind(rulings, "illegal") == [], dump(rulings)


def test_state_needing_more_actions_than_rolled_is_illegal(adjudicate):
    b = Board()
    b.roll(1)
    t = b.tl.now
    walk(b, "blue", (8, 2), (7, 2), (6, 2))  # two moves, one rolled
    b.show()
    b.end_turn("blue")
    assert_illegal(phase_verdict(b.rulings(adjudicate), t, "blue"))


# ---------------------------------------------------------------- pushing


def test_red_push_moves_blue_two_squares_away(adjudicate):
    b = Board()
    b.roll(4)
    walk(b, "blue", (8, 2), (7, 2), (6, 2), (5, 2), (4, 2))
    b.show()  # all four actions used
    walk(b, "red", (2, 1), (2, 2))
    b.show()
    b.end_turn("red")
    b.roll(2)
    b.end_turn("blue")  # blue passes
    t = b.tl.now
    walk(b, "red", (2, 2), (3, 2))  # 1 action: now touching the blue at (4,2)
    b.move("blue", (4, 2), (6, 2))  # 1 action: push it two squares away
    b.show()
    rulings = b.rulings(adjudicate)
    r = phase_verdict(rulings, t, "red")
    assert r["kind"] == "legal", dump(rulings)
    acts = actions_of(r)
    assert [a.get("do") for a in acts] == ["move", "push"]


def test_chain_push_displaces_the_blue_piece_in_the_way(adjudicate):
    b = Board()
    # turn 1: blue A (8,2) -> (4,2); red (2,1) -> (2,2)
    b.roll(4)
    walk(b, "blue", (8, 2), (7, 2), (6, 2), (5, 2), (4, 2))
    b.show()
    walk(b, "red", (2, 1), (2, 2))
    b.show()
    b.end_turn("red")
    # turn 2: blue B (8,0) -> (6,2); red (2,2) -> (3,2), touching A
    b.roll(4)
    walk(b, "blue", (8, 0), (8, 1), (8, 2), (7, 2), (6, 2))
    b.show()
    walk(b, "red", (2, 2), (3, 2))
    b.show()
    b.end_turn("red")
    # turn 3: the blue pieces that have not moved yet move first, then B (6,2) -> (5,2)
    b.roll(4)
    b.move("blue", (8, 4), (7, 4))
    b.move("blue", (8, 6), (7, 6))
    b.move("blue", (6, 2), (5, 2))
    b.show()
    b.end_turn("blue")
    t = b.tl.now
    # red pushes A (4,2): A takes B's square (5,2), B is pushed two on to (7,2)
    b.move("blue", (5, 2), (7, 2))
    b.move("blue", (4, 2), (5, 2))
    b.show()
    b.end_turn("red")
    rulings = b.rulings(adjudicate)
    assert of_kind(rulings, "illegal") == [], dump(rulings)
    r = phase_verdict(rulings, t, "red")
    assert r["kind"] == "legal"
    assert [a.get("do") for a in actions_of(r)] == ["push"]


def test_push_over_the_open_top_edge_removes_the_piece(adjudicate):
    b = Board()
    b.roll(4)
    walk(b, "blue", (8, 0), (8, 1), (7, 1))
    b.show()
    b.end_turn("blue")
    walk(b, "red", (2, 1), (3, 1), (4, 1), (5, 1), (6, 1))
    b.show()  # red used all four actions
    b.roll(2)
    b.end_turn("blue")
    t = b.tl.now
    b.remove("blue", (7, 1))  # pushed from (7,1) over row 8 and off the board
    b.show()
    b.end_turn("red")
    rulings = b.rulings(adjudicate)
    r = phase_verdict(rulings, t, "red")
    assert r["kind"] == "legal", dump(rulings)
    assert [a.get("do") for a in actions_of(r)] == ["push"]
    assert reports_removal(rulings, since=t), dump(rulings)


def test_push_over_the_open_bottom_edge_removes_the_piece(adjudicate):
    b = Board()
    b.roll(4)
    walk(b, "blue", (8, 0), (7, 0), (6, 0), (5, 0), (4, 0))
    b.show()
    b.end_turn("red")  # red passes
    b.roll(4)
    walk(b, "blue", (4, 0), (3, 0), (2, 0), (1, 0))
    b.show()
    b.end_turn("blue")
    t = b.tl.now
    walk(b, "red", (2, 1), (2, 0))  # touching the blue at (1,0) from above
    b.remove("blue", (1, 0))  # pushed towards row -1: off the board
    b.show()
    b.end_turn("red")
    rulings = b.rulings(adjudicate)
    r = phase_verdict(rulings, t, "red")
    assert r["kind"] == "legal", dump(rulings)
    assert [a.get("do") for a in actions_of(r)] == ["move", "push"]
    assert reports_removal(rulings, since=t), dump(rulings)


def test_blue_cannot_push(adjudicate):
    b = Board()
    b.roll(4)
    walk(b, "blue", (8, 2), (7, 2), (6, 2), (5, 2), (4, 2))
    b.show()
    walk(b, "red", (2, 1), (2, 2), (3, 2))  # red now touches the blue at (4,2)
    b.show()
    b.end_turn("red")
    b.roll(1)
    t = b.tl.now
    b.move("red", (3, 2), (1, 2))  # as if blue had pushed red two squares
    b.show()
    b.end_turn("blue")
    assert_illegal(phase_verdict(b.rulings(adjudicate), t, "blue"))


# ---------------------------------------------------------------- removal, victory square


def test_red_piece_touching_two_blue_pieces_is_removed(adjudicate):
    b = Board()
    b.roll(4)
    walk(b, "blue", (8, 0), (7, 0), (6, 0), (5, 0), (4, 0))
    b.show()
    walk(b, "red", (2, 1), (3, 1), (4, 1))  # touches the blue at (4,0) only
    b.show()
    b.end_turn("red")
    b.roll(4)
    t = b.tl.now
    walk(b, "blue", (8, 2), (7, 2), (6, 2), (5, 2), (4, 2))  # now (4,1) touches two blues
    b.remove("red", (4, 1))
    b.show()
    rulings = b.rulings(adjudicate)
    assert of_kind(rulings, "illegal") == [], dump(rulings)
    assert phase_verdict(rulings, t, "blue")["kind"] == "legal"
    assert reports_removal(rulings, since=t), dump(rulings)


def test_red_ending_on_the_victory_square_is_illegal(adjudicate):
    b = Board()
    b.roll(3)
    b.end_turn("blue")
    t = b.tl.now
    walk(b, "red", (2, 3), (1, 3), (0, 3))
    b.show()
    b.end_turn("red")
    assert_illegal(phase_verdict(b.rulings(adjudicate), t, "red"))


def test_red_must_leave_blue_a_path_to_the_victory_square(adjudicate):
    b = Board()
    b.roll(4)
    b.end_turn("blue")
    walk(b, "red", (2, 3), (1, 3))
    walk(b, "red", (2, 1), (2, 2), (1, 2), (0, 2))
    b.show()  # (0,4) still open
    b.roll(3)
    b.end_turn("blue")
    t = b.tl.now
    walk(b, "red", (2, 5), (2, 4), (1, 4), (0, 4))  # (0,3) now sealed off
    b.show()
    rulings = b.rulings(adjudicate)
    assert of_kind(rulings, "illegal", until=t) == [], dump(rulings)
    assert_illegal(phase_verdict(rulings, t, "red"))


def test_blue_reaching_the_victory_square_wins(adjudicate):
    b = Board()
    b.roll(4)
    walk(b, "blue", (8, 2), (7, 2), (6, 2), (5, 2), (4, 2))
    b.show()
    b.end_turn("red")
    b.roll(4)
    walk(b, "blue", (4, 2), (3, 2), (2, 2), (1, 2), (0, 2))
    b.show()
    b.end_turn("red")
    b.roll(4)
    t = b.tl.now
    # the three blue pieces that have not moved for two turns move first, then the winner
    b.move("blue", (8, 0), (7, 0))
    b.move("blue", (8, 4), (7, 4))
    b.move("blue", (8, 6), (7, 6))
    b.move("blue", (0, 2), (0, 3))
    b.show()
    rulings = b.rulings(adjudicate)
    assert of_kind(rulings, "illegal") == [], dump(rulings)
    over = of_kind(rulings, "game_over", since=t)
    assert over and over[0]["winner"] == "blue", dump(rulings)


def test_red_wins_when_ten_turns_pass(adjudicate):
    b = Board()
    for turn in range(10):
        up = turn % 2 == 0
        b.roll(4)
        for r, c in list(b.blue):
            b.move("blue", (r, c), (r - 1 if up else r + 1, c))
        b.show()  # four actions: blue's phase is over
        for r, c in list(b.red):
            b.move("red", (r, c), (r + 1 if up else r - 1, c))
        b.show()
        b.end_turn("red")
    rulings = b.rulings(adjudicate)
    assert of_kind(rulings, "illegal") == [], dump(rulings)
    over = of_kind(rulings, "game_over")
    assert over and over[0]["winner"] == "red", dump(rulings)


# ---------------------------------------------------------------- settings and required movement


def king_touch_position() -> tuple[Board, float]:
    """Red ends up at (3,1), diagonal to blues at (4,0) and (4,2); returns (board, t)."""
    b = Board()
    b.roll(4)
    walk(b, "blue", (8, 0), (7, 0), (6, 0), (5, 0), (4, 0))
    b.show()
    walk(b, "red", (2, 1), (3, 1))
    b.show()
    b.end_turn("red")
    b.roll(4)
    t = b.tl.now
    walk(b, "blue", (8, 2), (7, 2), (6, 2), (5, 2), (4, 2))
    return b, t


def test_diagonal_contact_does_not_remove_by_default(adjudicate):
    b, t = king_touch_position()
    b.show()  # red (3,1) stays: it touches no blue orthogonally
    rulings = b.rulings(adjudicate)
    assert of_kind(rulings, "illegal") == [], dump(rulings)
    assert phase_verdict(rulings, t, "blue")["kind"] == "legal"
    assert not reports_removal(rulings, since=t), dump(rulings)


def test_touch_king_setting_counts_diagonal_contact(adjudicate):
    b, t = king_touch_position()
    b.remove("red", (3, 1))
    b.show()
    rulings = b.rulings(adjudicate, {"touch": "king"})
    assert of_kind(rulings, "illegal") == [], dump(rulings)
    assert phase_verdict(rulings, t, "blue")["kind"] == "legal"
    assert reports_removal(rulings, since=t), dump(rulings)


def test_first_setting_lets_red_act_first(adjudicate):
    b = Board()
    b.roll(2)
    t_red = b.tl.now
    walk(b, "red", (2, 1), (3, 1))
    b.show()
    b.end_turn("red")
    t_blue = b.tl.now
    walk(b, "blue", (8, 0), (7, 0))
    b.show()
    b.end_turn("blue")
    rulings = b.rulings(adjudicate, {"first": "red"})
    assert of_kind(rulings, "illegal") == [], dump(rulings)
    assert phase_verdict(rulings, t_red, "red")["kind"] == "legal"
    assert phase_verdict(rulings, t_blue, "blue")["kind"] == "legal"


def test_red_moving_during_blues_phase_is_illegal(adjudicate):
    # Blue acts first by default, and blue's phase ends only by end_turn or by using all its
    # actions.  Here red moves before blue has done either: no sequence of blue actions can
    # produce that state, so the referee must rule it illegal (it must not assume that blue
    # silently passed).
    b = Board()
    b.roll(2)
    t = b.tl.now
    walk(b, "red", (2, 1), (3, 1))
    b.show()
    walk(b, "blue", (8, 0), (7, 0))  # blue then takes its own phase
    b.show()
    b.end_turn("blue")
    rulings = b.rulings(adjudicate)
    first = of_kind(rulings, ("legal", "illegal"), since=t)
    assert first, dump(rulings)
    assert_illegal(first[0])


def test_blue_piece_left_unmoved_too_long_is_ruled(adjudicate):
    # Blue only ever moves the piece from (8,0); its other three pieces never move.  By turn 4
    # at the latest they are overdue (each blue piece must move at least once every 3 turns),
    # so moving the (8,0) piece again must be ruled illegal.  Red moves all its pieces.
    b = Board()
    t_turn3 = None
    for turn in range(4):
        if turn == 2:
            t_turn3 = b.tl.now
        up = turn % 2 == 0
        b.roll(4)
        b.move("blue", (8, 0) if up else (7, 0), (7, 0) if up else (8, 0))
        b.show()
        b.end_turn("blue")
        for r, c in list(b.red):
            b.move("red", (r, c), (r + 1 if up else r - 1, c))
        b.show()
        b.end_turn("red")
    rulings = b.rulings(adjudicate)
    assert of_kind(rulings, "illegal", until=t_turn3) == [], dump(rulings)
    assert [r for r in of_kind(rulings, "illegal") if r.get("player") in ("blue", None)], dump(
        rulings
    )


def test_end_turn_on_a_board_ruled_illegal_is_refused_until_it_is_corrected(adjudicate):
    # Blue's piece goes 3 squares on a roll of 2 and blue ends the phase without putting it
    # back: the phase is ruled on the observed board (rules.md §4), which is illegal, so the
    # end is refused and blue's phase stays open; once corrected, play goes on normally.
    b = Board()
    b.roll(2)
    walk(b, "blue", (8, 0), (7, 0), (6, 0), (5, 0))
    b.show()
    t_end = b.end_turn("blue")
    walk(b, "blue", (5, 0), (6, 0), (7, 0))  # corrected: one square from the start
    b.show()
    t_blue = b.end_turn("blue")
    t_red = b.tl.now
    walk(b, "red", (2, 1), (3, 1))
    b.show()
    b.end_turn("red")
    rulings = b.rulings(adjudicate)
    refused = of_kind(rulings, ("legal", "illegal"), since=t_end, until=t_end + 0.5)
    assert [r["kind"] for r in refused] == ["illegal"], dump(rulings)
    assert_illegal(refused[0], "board_not_restored")
    assert refused[0]["player"] == "blue"
    blue = phase_verdict(rulings, t_blue, "blue")
    assert blue["kind"] == "legal" and len(actions_of(blue)) == 1, dump(rulings)
    assert of_kind(rulings, "illegal", since=t_red) == [], dump(rulings)
    assert phase_verdict(rulings, t_red, "red")["kind"] == "legal"
