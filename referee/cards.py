"""Playing-card codes: ``Card.parse("QS")`` and ``str(card) == "QS"``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

RANKS: Final = "A23456789TJQK"
SUITS: Final = "SHDC"
SUIT_NAMES: Final = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}
RANK_NAMES: Final = {
    1: "ace", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven",
    8: "eight", 9: "nine", 10: "ten", 11: "jack", 12: "queen", 13: "king",
}
JOKER_CODE: Final = "JK"
UNREADABLE_CODE: Final = "??"
BACK_CODE: Final = "back"
#: A playing card's width and length on the table (mm): a standard (poker-size) card. Decks
#: of other sizes (bridge: 57 x 89) are named in the calibration (``card_mm``).
CARD_MM: Final = (63.0, 88.0)
BRIDGE_MM: Final = (57.0, 89.0)
#: The sizes decks come in, tried in turn where nobody named the deck's (``referee detect``
#: without a calibration: ``detection.card_plane``).
DECK_SIZES_MM: Final = (CARD_MM, BRIDGE_MM)


def card_size(text: str) -> tuple[float, float]:
    """A card size written ``WIDTHxLENGTH`` in mm (as ``57x89``): (width, length). A
    ValueError says how to write one."""
    try:
        width, length = (float(v) for v in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"{text!r} is no card size: give WIDTHxLENGTH in mm, as 63x88") \
            from None
    return width, length


class CardCodeError(ValueError):
    """A string that is not a card code."""


@dataclass(frozen=True, order=True)
class Card:
    """One playing card. ``rank`` is 1 (ace) .. 13 (king); a joker has rank 0 and no suit."""

    rank: int
    suit: str | None

    @classmethod
    def parse(cls, code: str) -> Card:
        text = code.strip()
        if text.upper() == JOKER_CODE:
            return JOKER
        if len(text) != 2 or text[0].upper() not in RANKS or text[1].upper() not in SUITS:
            raise CardCodeError(f"unknown card code {code!r} (expected e.g. QS, TC, 2H or JK)")
        return cls(RANKS.index(text[0].upper()) + 1, text[1].upper())

    @property
    def is_joker(self) -> bool:
        return self.rank == 0

    @property
    def name(self) -> str:
        if self.is_joker or self.suit is None:
            return "joker"
        return f"{RANK_NAMES[self.rank]} of {SUIT_NAMES[self.suit]}"

    def __str__(self) -> str:
        if self.is_joker or self.suit is None:
            return JOKER_CODE
        return RANKS[self.rank - 1] + self.suit

    def __repr__(self) -> str:
        return f"Card.parse({str(self)!r})"


JOKER: Final = Card(0, None)
STANDARD_DECK: Final = tuple(Card(rank, suit) for suit in SUITS for rank in range(1, 14))


def is_card_code(code: str) -> bool:
    try:
        Card.parse(code)
    except CardCodeError:
        return False
    return True


def rank_step(rank: int, step: int) -> int:
    """The rank ``step`` places above ``rank``, wrapping K-A-2 (1..13)."""
    return (rank - 1 + step) % 13 + 1


def rank_distance(a: int, b: int, *, wraps: bool) -> int:
    """How many ranks apart two cards are; with ``wraps`` K and 2 are 2 apart."""
    direct = abs(a - b)
    return min(direct, 13 - direct) if wraps else direct
