"""The rule a ruling applies, in the words of the rules the referee enforces (rules.md)."""

from __future__ import annotations

from typing import Final

BY_RULE: Final = {
    "out_of_turn": "A play or declaration by someone whose turn it is not is illegal.",
    "opening_row": "Slapstick: a row opens with two cards from its starter; there is "
                   "nothing to chicken out of before the second.",
    "opening_too_close": "The previous loser's opening card must not touch the first: its "
                         "gap must be at least open_gap_mm.",
    "opening_rank_distance": "The second opening card must be at least 3 ranks away from the "
                             "first (wrapping K-A-2 when open_distance_wraps).",
    "not_one_rank_higher": "A shove is one card placed so it overlaps (touches, by more than "
                           "touch_tolerance_mm2) at least one card exactly one rank lower.",
    "touches_other_rank": "The new card may touch only cards one rank lower and, if it touches "
                          "a lower one, cards one rank higher; any other rank is illegal.",
    "full_cover": "A card that fully covers another is illegal: a shove must be partial.",
    "wrong_leader": "Whoever leads round 1 is taken to hold 2S; 2S from anyone else is ruled.",
    "revoke": "Follow suit if able: playing a suit you failed to follow earlier in the round "
              "is a revoke.",
    "too_many_actions": "Each player takes at most the rolled number of actions per phase.",
    "illegal_position": "No legal sequence of actions reaches the board seen.",
    "red_on_victory_square": "Red may pass through the victory square but not end a turn on it.",
    "victory_path_blocked": "Red must always leave blue a path to the victory square.",
    "no_die_roll": "A game turn starts with the d4 roll; the board changed before one.",
    "bad_die_roll": "A die roll is 1 to 4.",
    "board_not_restored": "A phase's result is the board on the table, and that board was "
                          "ruled illegal: put the pieces back or correct the board before "
                          "ending the phase or rolling again.",
    "cannot_end_turn": "The declaration means nothing at this point of the game.",
    "no_ten_card_string": "A ten-card string needs the setting and ten cards in sequence.",
    "card_already_on_table": "A card cannot be on the table twice: one of the readings is a "
                             "misread.",
    "card_already_played": "A card cannot be played twice: one of the readings is a misread.",
    "not_in_deck": "The game is played without jokers (Shove Piggy Shove; Push Out the Pig "
                   "with 4 players; Slapstick with jokers=0).",
    "cannot_oink_now": "Oink (draw a card) only when you cannot shove; on the opening any "
                       "card may be placed.",
    "overdue_not_moved": "Each red piece must move at least once every 4 turns, each blue "
                         "piece every 3; an overdue piece must be moved before any other "
                         "piece moves.",
    "coin_vanished": "A coin cannot leave the board unless a hand takes it (or another coin "
                     "knocks it off): a coin no longer seen otherwise is a misread.",
    "card_left_table": "A card was seen leaving that was never on the table.",
    "no_cards_left": "A player with no cards left cannot play.",
    "bad_board": "The board reading is impossible.",
    "not_in_this_game": "That piece or card is not part of this game.",
}

BY_KIND: Final = {
    ("shove-piggy-shove", "legal"): "A shove overlaps at least one card exactly one rank lower "
        "(overlap above touch_tolerance_mm2). Bonuses: match, double, chain, piggy; each is "
        "one extra turn.",
    ("shove-piecepack", "bed_scored"): "A coin scores in bed k if its disc lies wholly inside "
        "the bed, touching no line (within seam_mm / 2 of a line) and inside the playing width.",
    ("shove-piecepack", "not_played"): "A coin whose far edge does not pass line 1 is not "
        "played: shove it again.",
    ("push-out-the-pig", "trick"): "Highest card of the led suit wins; a joker never wins.",
    ("push-out-the-pig", "round_score"): "QS -100, hearts -10 to -50, JD +100, TC doubles; "
        "all hearts +200 instead.",
    ("shove", "legal"): "The board is explained by at most the rolled number of actions "
        "(moves one square, red pushes two squares).",
    ("slapstick", "take_row"): "Matching the first or the previous card: the player takes the "
        "row; matching another card or a joker: the next player takes it.",
}


def rule_text(game: str, kind: str, rule: str | None) -> str:
    if rule and rule in BY_RULE:
        return BY_RULE[rule]
    return BY_KIND.get((game, kind), "")
