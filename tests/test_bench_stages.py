"""The stage-timing benchmark's timer: what it times, and that it puts everything back."""

from __future__ import annotations

import inspect
import re
import sys
import types
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import stages


def test_every_stage_named_is_there_to_time() -> None:
    for owner, name, label in stages.STAGES:
        function = owner.__dict__.get(name) if isinstance(owner, type) \
            else getattr(owner, name, None)
        assert callable(function), (owner, name)
        assert label.strip()
    labels = [label for _, _, label in stages.STAGES]
    assert len(set(labels)) == len(labels)


def test_a_module_s_stage_is_one_that_module_calls_by_that_name() -> None:
    # A function is timed where it is looked up: in the module that calls it by its global
    # name (``detect`` calls ``find_cards``, ``learned`` calls ``start``). Wrapped where no
    # one looks it up, a stage would read 0 ms.
    for owner, name, _ in stages.STAGES:
        if not isinstance(owner, type):
            called = rf"(?<!def )(?<![.\w]){re.escape(name)}\("
            assert re.search(called, inspect.getsource(owner)), (owner.__name__, name)


def test_a_stage_that_is_gone_leaves_none_wrapped() -> None:
    module = types.SimpleNamespace(work=lambda x: x + 1)
    original = module.work
    with pytest.raises(SystemExit):
        stages.Timer().wrap(((module, "work", "working"),
                             (types.SimpleNamespace(), "vanished", "gone")))
    assert module.work is original


def test_the_timer_counts_calls_and_time_and_puts_the_functions_back() -> None:
    class Reader:
        def read(self, n: int) -> int:
            return 2 * n

    module = types.SimpleNamespace(work=lambda x: x + 1)
    plan = ((Reader, "read", "reading"), (module, "work", "working"))
    original_read, original_work = Reader.__dict__["read"], module.work
    timer = stages.Timer()
    restore = timer.wrap(plan)
    try:
        assert Reader().read(3) == 6  # a method still binds to its instance
        assert Reader().read(4) == 8
        assert module.work(1) == 2
        with pytest.raises(TypeError):  # an error passes through, the call still counted
            module.work("x")
    finally:
        restore()
    assert Reader.__dict__["read"] is original_read and module.work is original_work
    assert dict(timer.calls) == {"reading": 2, "working": 2}
    assert all(t >= 0 for t in [*timer.wall.values(), *timer.cpu.values()])
    timer.clear()
    assert not timer.calls and not timer.wall and not timer.cpu


def test_a_stage_that_is_gone_is_named_not_a_traceback() -> None:
    with pytest.raises(SystemExit, match="has no vanished to time"):
        stages.Timer().wrap(((types.SimpleNamespace(), "vanished", "gone"),))


def test_figures_are_milliseconds_a_frame_in_stage_order() -> None:
    timer = stages.Timer()
    first, second = (label for _, _, label in stages.STAGES[:2])
    timer.wall[first], timer.cpu[first], timer.calls[first] = 0.5, 0.8, 4
    out = stages.figures(timer, 4, [0.2, 0.3, 0.4, 0.5], [0.4, 0.4, 0.4, 0.4])
    assert out["frames"] == 4
    assert out["frame_ms"] == {"median": 350.0, "mean": 350.0, "cpu_mean": 400.0}
    assert list(out["stages"]) == [label for _, _, label in stages.STAGES]
    assert out["stages"][first] == {"wall_ms": 125.0, "cpu_ms": 200.0, "calls": 1.0}
    assert out["stages"][second] == {"wall_ms": 0.0, "cpu_ms": 0.0, "calls": 0.0}
