"""The dashboard API's request and response bodies."""

from __future__ import annotations

import typing
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from referee.cards import CARD_MM

SettingValue = str | int | float | bool | None
Name = typing.Annotated[str, Field(min_length=1, max_length=40, pattern=r"^[^\x00-\x1f<>&]+$")]


class _Body(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SettingInfo(_Body):
    name: str
    type: Literal["bool", "int", "float", "choice", "text"]
    default: SettingValue
    choices: list[str] = []
    help: str = ""


class GameInfo(_Body):
    name: str
    title: str
    player_counts: list[int]
    default_players: list[str]
    settings: list[SettingInfo]
    declares: list[str]  # the manual inputs the game understands (the dashboard's buttons)


class ClipInfo(_Body):
    id: str
    game: str
    players: list[str]
    has_observations: bool
    has_calibration: bool


class RecordingSummary(_Body):
    id: str
    game: str
    players: list[str]
    started: str
    closed: bool
    frames: int
    rulings: int


class Sources(_Body):
    clips: list[ClipInfo]
    uploads: list[str]
    calibrations: list[str]
    recordings: list[RecordingSummary]
    vision_available: bool


class SourceRef(_Body):
    kind: Literal["clip", "upload", "camera"]
    id: str = Field(min_length=1, max_length=200)


class StartRequest(_Body):
    game: str = Field(max_length=40)
    players: list[Name] | None = Field(default=None, max_length=8)
    settings: dict[str, SettingValue] = Field(default_factory=dict, max_length=40)
    source: SourceRef
    calibration: str | None = Field(default=None, max_length=200,
                                    description="'clip' (the clip's own), a file name in the "
                                                "calibration folder, or none")
    mode: Literal["recorded", "vision"] = "recorded"
    speed: float = Field(default=1.0, ge=0, le=16,
                         description="1 is real time; 0 reads frames as fast as it can")
    record: bool = True


class DeclareRequest(_Body):
    player: Name | None = None
    what: Literal["oink", "chicken_out", "end_turn", "die_roll", "new_round"]
    value: int | None = Field(default=None, ge=-1000, le=1000)


class CorrectRequest(_Body):
    uid: str = Field(min_length=1, max_length=80)
    card: str = Field(min_length=2, max_length=2)


class ReadjudicateRequest(_Body):
    settings: dict[str, SettingValue] = Field(default_factory=dict, max_length=40)


class ManualCalibrationRequest(_Body):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,40}$")
    source: SourceRef
    clicks: list[tuple[float, float]] = Field(min_length=4, max_length=4)
    width_mm: float = Field(gt=0, le=5000)
    depth_mm: float = Field(gt=0, le=5000)
    game: str | None = Field(default=None, max_length=40)
    #: The size of the cards played on the table (width, length, mm).
    card_mm: tuple[float, float] = CARD_MM


class Accepted(_Body):
    ok: bool = True
    message: str = ""


class ChangeOut(_Body):
    i: int
    t: float
    before: dict[str, Any] | None
    after: dict[str, Any] | None


class ReadjudicateResult(_Body):
    settings: dict[str, Any]
    rulings: list[dict[str, Any]]
    changes: list[ChangeOut]


class Uploaded(_Body):
    name: str
    bytes: int
