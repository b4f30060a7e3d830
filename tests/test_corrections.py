"""A misread card set right: the log is relabelled and the camera pipeline re-adjudicates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import pytest

from referee.adjudication.corrections import relabel_card
from referee.calibration.model import load_calibration
from referee.observations import CardPlaced, CardRemoved, Declare, Observation
from referee.pipeline.events import RulingEvent, StatusEvent
from referee.pipeline.runner import RefereePipeline
from referee.tracking.identity import UnreadableReader

CLIP = Path(__file__).resolve().parents[1] / "sample_footage" / "shove-piggy-shove"
SQUARE = ((0.0, 0.0), (63.0, 0.0), (63.0, 88.0), (0.0, 88.0))


def test_relabel_changes_the_placement_and_its_later_removal_only() -> None:
    log = [
        CardPlaced(t=1, type="card_placed", card="2D", corners=SQUARE),
        CardPlaced(t=2, type="card_placed", card="2D",
                   corners=tuple((x + 300, y) for x, y in SQUARE)),  # type: ignore[arg-type]
        CardRemoved(t=3, type="card_removed", card="2D"),
    ]
    fixed = relabel_card(log, SQUARE, "2D", "3D")
    assert [o.card for o in fixed] == ["3D", "2D", "3D"]  # type: ignore[union-attr]
    assert relabel_card(log, SQUARE, "KS", "3D") == log


def test_camera_pipeline_applies_a_correction_and_rules_on_it() -> None:
    calibration = load_calibration(CLIP / "calibration.json")
    pipeline = RefereePipeline("shove-piggy-shove", calibration, players=["Ann", "Ben"],
                               reader=UnreadableReader(), drift=False)
    video = cv2.VideoCapture(str(CLIP / "video.mp4"))
    placed: list[CardPlaced] = []
    index = 0
    while not placed:
        ok, frame = video.read()
        assert ok, "no card was seen placed in the clip"
        for event in pipeline.process(index, index / 15.0, frame):
            observation = getattr(event, "observation", None)
            if isinstance(observation, CardPlaced):
                placed.append(observation)
        index += 1
    first = placed[0]
    assert first.card == "??" and first.corners is not None  # no model: unread
    events = pipeline.manual(first.model_copy(update={"card": "2D"}))
    assert [e.level for e in events if isinstance(e, StatusEvent)] == ["info"]
    assert [str(c) for c in pipeline.session.state.table] == ["2D"]
    missed = pipeline.manual(CardPlaced(t=first.t, type="card_placed", card="3D",
                                        corners=tuple((x + 900, y) for x, y in SQUARE)))  # type: ignore[arg-type]
    assert [e.level for e in missed if isinstance(e, StatusEvent)] == ["warning"]


def test_a_fault_in_one_ruling_is_reported_and_the_game_goes_on(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calibration = load_calibration(CLIP / "calibration.json")
    pipeline = RefereePipeline("shove-piggy-shove", calibration, players=["Ann", "Ben"],
                               reader=UnreadableReader(), drift=False)
    rules = pipeline.session.rules
    real = rules._apply
    seen: list[Observation] = []

    def flaky(state: Any, observation: Observation) -> Any:
        seen.append(observation)
        if len(seen) == 1:
            state.hands["Ann"] = -99  # a half-done change the game must not keep
            raise ValueError("boom")
        return real(state, observation)

    monkeypatch.setattr(rules, "_apply", flaky)
    pipeline.manual(Declare(t=1, type="declare", what="oink", player="Ann"))
    pipeline.manual(Declare(t=2, type="declare", what="oink", player="Ann"))
    events = pipeline.finish(3.0)
    errors = [e for e in events if isinstance(e, StatusEvent) and e.level == "error"]
    assert len(errors) == 1 and "boom" in errors[0].message
    rulings = [e.ruling for e in events if isinstance(e, RulingEvent)]
    assert [r.rule for r in rulings if r.kind == "illegal"] == ["cannot_oink_now"]
    assert pipeline.session.state.hands == {"Ann": 7, "Ben": 7}
