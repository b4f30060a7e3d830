"""What the referee sees or is told: the observation JSON lines of the contract.

Coordinates are table millimetres. Parsing is strict about the fields it knows and
ignores fields it does not (recordings may add their own, such as a frame index).
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
)

from referee.cards import BACK_CODE, UNREADABLE_CODE, Card, CardCodeError


def _plain_number(value: object) -> object:
    """A number must be written as one: not ``true`` (which would read as 1) nor ``"1"``."""
    if isinstance(value, bool | str):
        raise ValueError("must be a number")
    return value


Number = Annotated[float, BeforeValidator(_plain_number)]
Finite = Annotated[float, Field(allow_inf_nan=False), BeforeValidator(_plain_number)]
Point = tuple[Number, Number]
Square = tuple[Annotated[int, BeforeValidator(_plain_number)],
               Annotated[int, BeforeValidator(_plain_number)]]


class ObservationError(ValueError):
    """An input line that is not a valid observation."""


class _Observation(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    t: Number = Field(ge=0, allow_inf_nan=False)


def _card_code(value: str) -> str:
    if value in (UNREADABLE_CODE, BACK_CODE):
        return value
    try:
        return str(Card.parse(value))
    except CardCodeError as error:
        raise ValueError(str(error)) from None


class CardPlaced(_Observation):
    type: Literal["card_placed"]
    card: str
    corners: tuple[Point, Point, Point, Point] | None = None
    player: str | None = None

    _check_card = field_validator("card")(_card_code)

    @field_validator("corners")
    @classmethod
    def _finite(cls, corners: tuple[Point, ...] | None) -> tuple[Point, ...] | None:
        if corners is not None and not all(math.isfinite(v) for p in corners for v in p):
            raise ValueError("corners must be finite numbers")
        return corners

    @property
    def parsed(self) -> Card | None:
        """The card, or None when it could not be read (``??``) or lies face down."""
        return _parsed(self.card)


class CardRemoved(_Observation):
    type: Literal["card_removed"]
    card: str
    player: str | None = None

    _check_card = field_validator("card")(_card_code)

    @property
    def parsed(self) -> Card | None:
        return _parsed(self.card)


def _parsed(code: str) -> Card | None:
    return None if code in (UNREADABLE_CODE, BACK_CODE) else Card.parse(code)


def _id_text(value: object) -> object:
    """Coin ids may be given as numbers; they are compared as text."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class CoinStopped(_Observation):
    type: Literal["coin_stopped"]
    id: str
    center: tuple[Finite, Finite]
    #: Measured (mm). A line without one (typed in by hand) is a coin of the game's
    #: ``coin_mm`` setting.
    radius: Number | None = Field(None, gt=0, allow_inf_nan=False)
    #: Who shoved it, when known (rules.md: a play out of turn is ruled illegal).
    player: str | None = None

    _id_text = field_validator("id", mode="before")(_id_text)


class CoinRemoved(_Observation):
    type: Literal["coin_removed"]
    id: str

    _id_text = field_validator("id", mode="before")(_id_text)


class BoardState(_Observation):
    type: Literal["board_state"]
    red: tuple[Square, ...]
    blue: tuple[Square, ...]
    #: Who moved, when known (by name or colour).
    player: str | None = None


class Declare(_Observation):
    type: Literal["declare"]
    player: str | None = None
    what: str
    value: Any = None


class Setup(BaseModel):
    """The optional first line: which game, who plays, and settings."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    type: Literal["setup"]
    game: str | None = None
    players: tuple[str, ...] | None = None
    settings: dict[str, Any] = Field(default_factory=dict)
    t: Number = 0.0


Observation = Annotated[
    CardPlaced | CardRemoved | CoinStopped | CoinRemoved | BoardState | Declare,
    Field(discriminator="type"),
]
_LINE: TypeAdapter[Observation | Setup] = TypeAdapter(
    Annotated[Observation | Setup, Field(discriminator="type")]
)


def parse_line(text: str) -> Observation | Setup:
    """One JSON line -> an observation (or the setup line). Raises ObservationError."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as error:
        raise ObservationError(f"not valid JSON ({error.msg})") from None
    except (ValueError, RecursionError):  # a number of thousands of digits, deep nesting
        raise ObservationError("not valid JSON for an observation (a number too long or "
                               "nesting too deep)") from None
    if not isinstance(raw, dict):
        raise ObservationError("expected a JSON object")
    if "type" not in raw:
        raise ObservationError("missing field 'type'")
    try:
        item: Observation | Setup = _LINE.validate_python(raw)
    except ValidationError as error:
        raise ObservationError(_describe(error)) from None
    except RecursionError:
        raise ObservationError("not valid JSON for an observation (nesting too deep)") \
            from None
    _refuse_misspelt(raw, type(item).model_fields)
    return item


def _refuse_misspelt(raw: dict[str, Any], known: Mapping[str, Any]) -> None:
    """Fields this project does not know are ignored (recordings add their own), but one
    spelt almost like a known field is a typo whose value would be lost silently (a setup
    line's ``setings``): refused."""
    for name in raw:
        if name in known:
            continue
        close = difflib.get_close_matches(str(name), list(known), n=1, cutoff=0.8)
        if close:
            raise ObservationError(f"unknown field {name!r} (did you mean {close[0]!r}?)")


def _describe(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(p) for p in first["loc"] if not str(p).startswith(("function", "tagged")))
    # The discriminated union puts the type tag first in the location: drop it.
    parts = where.split(".")
    if parts and parts[0] in {"card_placed", "card_removed", "coin_stopped", "coin_removed",
                              "board_state", "declare", "setup"}:
        where = ".".join(parts[1:])
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "missing":
        return f"missing field '{where}'"
    if first["type"] == "union_tag_invalid":
        return f"unknown observation type {first['input'].get('type')!r}"
    return f"field '{where}': {message}" if where else message


def dump_observation(observation: Observation) -> dict[str, Any]:
    """JSON-ready dict of an observation, without unset optional fields."""
    data = observation.model_dump(mode="json", exclude_none=True)
    return {"t": data.pop("t"), "type": data.pop("type"), **data}


def read_observation_file(path: Path) -> tuple[Setup | None, tuple[Observation, ...]]:
    """The setup line (if any) and the observations of a JSON-lines file.

    Raises ObservationError with one line naming the file and line number."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise ObservationError(f"cannot read {path}: {error.strerror}") from None
    setup: Setup | None = None
    observations: list[Observation] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = parse_line(line)
        except ObservationError as error:
            raise ObservationError(f"{path}: line {number}: {error}") from None
        if isinstance(item, Setup):
            setup = item
        else:
            observations.append(item)
    return setup, tuple(observations)
