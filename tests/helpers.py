"""Small builders for readable observation sequences, and a way to adjudicate them."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from referee.adjudication import adjudicate_lines

CARD_W, CARD_H = 63.0, 88.0
#: A sentence ending inside a message: the contract asks for one plain sentence.
_SECOND_SENTENCE = re.compile(r"[.!?]\s+\S")


def one_sentence(message: str) -> bool:
    return bool(message.strip()) and not _SECOND_SENTENCE.search(message)


def adjudicate(
    game: str,
    observations: Iterable[Mapping[str, Any]],
    players: list[str] | None = None,
    settings: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Rulings (as JSON dicts) for observations; ``t`` is filled in 1, 2, 3... when absent."""
    lines = []
    for n, observation in enumerate(observations, start=1):
        lines.append(json.dumps({"t": float(n), **observation}))
    rulings = adjudicate_lines(lines, game=game, players=players, settings=dict(settings or {}))
    out = [r.to_json() for r in rulings]
    for ruling in out:  # every test of the rules checks the contract's "one plain sentence"
        assert one_sentence(ruling["message"]), ruling["message"]
    return out


def card(code: str, x: float, y: float, player: str | None = None, *,
         w: float = CARD_W, h: float = CARD_H) -> dict[str, Any]:
    """An axis-aligned card placed with its lower-left corner at (x, y) mm."""
    observation: dict[str, Any] = {
        "type": "card_placed", "card": code,
        "corners": [[x, y], [x + w, y], [x + w, y + h], [x, y + h]],
    }
    if player:
        observation["player"] = player
    return observation


def played(code: str, player: str | None = None) -> dict[str, Any]:
    """A card played to a trick or row (position irrelevant to the game)."""
    observation: dict[str, Any] = {"type": "card_placed", "card": code}
    if player:
        observation["player"] = player
    return observation


def declare(what: str, player: str | None = None, value: Any = None) -> dict[str, Any]:
    observation: dict[str, Any] = {"type": "declare", "what": what}
    if player:
        observation["player"] = player
    if value is not None:
        observation["value"] = value
    return observation


def of_kind(rulings: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [r for r in rulings if r["kind"] == kind]


def last(rulings: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = of_kind(rulings, kind)
    assert found, f"no {kind!r} ruling in {[r['kind'] for r in rulings]}"
    return found[-1]
