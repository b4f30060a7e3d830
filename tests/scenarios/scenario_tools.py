"""Small helpers shared by the scenario tests: a timeline of observations and ruling finders.

Rulings may carry kinds and fields the tests do not know about, so rulings are always
looked up by kind (and player / time), never by position in the output.
"""

from __future__ import annotations

from collections.abc import Iterable


class Timeline:
    """Collects observations and stamps them with increasing `t` (seconds)."""

    def __init__(self, start: float = 1.0, step: float = 1.0) -> None:
        self.obs: list[dict] = []
        self._t = start
        self._step = step

    def add(self, obs: dict) -> float:
        stamped = {"t": self._t, **obs}
        self.obs.append(stamped)
        t = self._t
        self._t = round(self._t + self._step, 6)
        return t

    @property
    def now(self) -> float:
        """The t the next observation will get."""
        return self._t


def of_kind(
    rulings: Iterable[dict],
    kind: str | tuple[str, ...],
    player: str | None = None,
    since: float | None = None,
    until: float | None = None,
) -> list[dict]:
    kinds = (kind,) if isinstance(kind, str) else kind
    out = []
    for r in rulings:
        if r.get("kind") not in kinds:
            continue
        if player is not None and r.get("player") != player:
            continue
        t = r.get("t", 0)
        if since is not None and t < since:
            continue
        if until is not None and t >= until:
            continue
        out.append(r)
    return out


def first_at_or_after(
    rulings: Iterable[dict],
    t: float,
    kind: str | tuple[str, ...],
    player: str | None = None,
) -> dict:
    found = of_kind(rulings, kind, player=player, since=t)
    assert found, f"no {kind} ruling (player={player}) at or after t={t}; rulings:\n" + dump(
        rulings
    )
    return found[0]


def verdict(rulings: list[dict], t: float) -> dict:
    """The legal/illegal ruling that answers the observation made at time t."""
    return first_at_or_after(rulings, t, ("legal", "illegal"))


def assert_legal(ruling: dict) -> None:
    assert ruling["kind"] == "legal", f"expected legal, got {ruling}"


def assert_illegal(ruling: dict, rule: str | None = None) -> None:
    assert ruling["kind"] == "illegal", f"expected illegal, got {ruling}"
    assert isinstance(ruling.get("rule"), str) and ruling["rule"], (
        f"an illegal ruling must carry a non-empty `rule`: {ruling}"
    )
    if rule is not None:
        assert ruling["rule"] == rule, f"expected rule {rule!r}, got {ruling}"


def dump(rulings: Iterable[dict]) -> str:
    import json

    return "\n".join(json.dumps(r) for r in rulings)


def card_codes(cards: object) -> list[str]:
    """Card codes out of a `cards` field whose exact shape the contract leaves open.

    Accepts a list of codes, a {player: code} mapping, or a list of {"card": code, ...}.
    """
    if isinstance(cards, dict):
        return [str(v) for v in cards.values()]
    out = []
    for item in cards or []:
        if isinstance(item, dict):
            out.append(str(item.get("card")))
        elif isinstance(item, (list, tuple)):
            # e.g. [player, card]
            out.append(str(item[-1]))
        else:
            out.append(str(item))
    return out
