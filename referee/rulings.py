"""What the referee announces: the ruling JSON lines of the contract.

One model per ruling kind. Optional fields are only written when an engine set them,
so a ruling carries exactly the fields that mean something for its game.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

Square = tuple[int, int]


class Ruling(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ClassVar[str]
    t: float
    message: str
    player: str | None = None
    #: Numbers the ruling rests on (overlap areas, distances, thresholds), for dispute review.
    evidence: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        data = self.model_dump(mode="json", by_alias=True, include=self.model_fields_set)
        head = {"t": data.pop("t"), "kind": self.kind, "message": data.pop("message")}
        evidence = {"evidence": data.pop("evidence")} if "evidence" in data else {}
        return {**head, **data, **evidence}


class Bonuses(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    match: int = 0
    double: int = 0
    chain: int = 0
    piggy: int = 0

    @property
    def total(self) -> int:
        return self.match + self.double + self.chain + self.piggy


class Action(BaseModel):
    """One action of a Shove (grid) phase: a move, or a red push of a blue piece."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    do: Literal["move", "push"]
    piece: Literal["red", "blue"]
    # move: the piece's squares. push: the pushed blue piece's squares (to None: off the board).
    from_: Square = Field(alias="from")
    to: Square | None
    by: Square | None = None  # push: the red piece that pushes

    @model_serializer(mode="wrap")
    def _without_unset_by(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("by") is None:
            data.pop("by", None)
        return data


class RemovedPiece(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    colour: Literal["red", "blue"]
    square: Square
    why: str


class Legal(Ruling):
    kind: ClassVar[str] = "legal"
    card: str | None = None
    coin: str | None = None  # Shove piecepack: the coin shoved
    bonuses: Bonuses | None = None
    extra_turns: int | None = None
    hand_counts: dict[str, int] | None = None
    actions: list[Action] | None = None
    removed: list[RemovedPiece] | None = None
    hand_count: int | None = None


class Illegal(Ruling):
    kind: ClassVar[str] = "illegal"
    rule: str
    card: str | None = None
    coin: str | None = None  # Shove piecepack: a coin shoved out of turn
    hand_counts: dict[str, int] | None = None
    needed_actions: int | None = None
    allowed_actions: int | None = None


class Impossible(Ruling):
    """An observation that cannot be true (a misread), reported instead of ruled on."""

    kind: ClassVar[str] = "impossible"
    rule: str
    card: str | None = None


class Unreadable(Ruling):
    kind: ClassVar[str] = "unreadable"
    card: str | None = None


class Turn(Ruling):
    kind: ClassVar[str] = "turn"
    hand_counts: dict[str, int] | None = None
    extra_turns: int | None = None
    turn: int | None = None
    actions_allowed: int | None = None
    colour: str | None = None
    coins_left: int | None = None


class Score(Ruling):
    kind: ClassVar[str] = "score"
    scores: dict[str, int]


class GameOver(Ruling):
    kind: ClassVar[str] = "game_over"
    winner: str | None
    scores: dict[str, int] | None = None
    knockout: bool | None = None
    reason: str | None = None


class Declared(Ruling):
    """A manual input the referee accepted (oink, chicken out, die roll...)."""

    kind: ClassVar[str] = "declared"
    what: str
    value: Any = None
    hand_counts: dict[str, int] | None = None


class BedScored(Ruling):
    kind: ClassVar[str] = "bed_scored"
    bed: int
    scored_by: str
    credited_to: str | None
    coin: str | None = None


class NotPlayed(Ruling):
    kind: ClassVar[str] = "not_played"
    coin: str


class Trick(Ruling):
    kind: ClassVar[str] = "trick"
    winner: str
    cards: list[str]
    led_suit: str | None
    trick: int | None = None


class Revoke(Ruling):
    kind: ClassVar[str] = "revoke"
    suit: str
    tricks: list[int]
    rule: str = "revoke"


class RoundScore(Ruling):
    kind: ClassVar[str] = "round_score"
    round: int
    points: dict[str, int]
    total: dict[str, int]


class TakeRow(Ruling):
    kind: ClassVar[str] = "take_row"
    taker: str
    cards: int
    reason: str
    row: list[str] | None = None
    to_penalty_pile: bool | None = None
    hand_counts: dict[str, int] | None = None


class Removed(Ruling):
    kind: ClassVar[str] = "removed"
    colour: str
    square: Square
