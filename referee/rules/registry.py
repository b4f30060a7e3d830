"""Game name (as on the command line) -> its rules engine."""

from __future__ import annotations

import importlib
from typing import Any, Final

from referee.rules.base import Rules

_ENGINES: Final = {
    "shove-piggy-shove": ("referee.rules.shove_piggy_shove", "ShovePiggyShoveRules"),
    "shove-piecepack": ("referee.rules.shove_piecepack", "ShovePiecepackRules"),
    "push-out-the-pig": ("referee.rules.push_out_the_pig", "PushOutThePigRules"),
    "shove": ("referee.rules.shove_grid", "ShoveGridRules"),
    "slapstick": ("referee.rules.slapstick", "SlapstickRules"),
}
GAMES: Final = tuple(_ENGINES)


class UnknownGameError(ValueError):
    pass


def rules_for(game: str) -> Rules[Any, Any]:
    try:
        module_name, class_name = _ENGINES[game]
    except KeyError:
        raise UnknownGameError(
            f"unknown game {game!r} (choose one of: {', '.join(GAMES)})"
        ) from None
    engine: type[Rules[Any, Any]] = getattr(importlib.import_module(module_name), class_name)
    return engine()
