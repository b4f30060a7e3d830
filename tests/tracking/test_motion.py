import numpy as np

from referee.tracking.motion import STILL_FRAMES, MotionGate, StableDetector


def _frame(blob_at: int | None = None) -> np.ndarray:
    image = np.full((180, 320, 3), 90, np.uint8)
    if blob_at is not None:
        image[60:120, blob_at:blob_at + 60] = 230
    return image


def test_a_still_table_becomes_stable_once() -> None:
    gate, detector = MotionGate(), StableDetector()
    runs = [detector.update(i, i / 15, gate.update(_frame())) for i in range(12)]
    found = [r for r in runs if r is not None]
    assert len(found) == 1 and found[0].start_index == 0
    assert runs.index(found[0]) == STILL_FRAMES - 1


def test_movement_resets_and_the_state_after_it_starts_at_the_first_still_frame() -> None:
    gate, detector = MotionGate(), StableDetector()
    frames = [_frame()] * 5 + [_frame(x) for x in (100, 140, 180)] + [_frame(180)] * 8
    runs = [detector.update(i, i / 15, gate.update(f)) for i, f in enumerate(frames)]
    starts = [r.start_index for r in runs if r is not None]
    assert starts == [0, 8]


def test_compression_flicker_is_not_motion() -> None:
    gate = MotionGate()
    rng = np.random.default_rng(0)
    gate.update(_frame())
    noisy = np.clip(_frame().astype(int) + rng.integers(-12, 13, (180, 320, 3)), 0, 255)
    assert not gate.update(noisy.astype(np.uint8)).moving


def test_stillness_is_measured_in_seconds_whatever_the_frame_rate() -> None:
    for fps, frames_needed in ((15, 4), (30, 8)):
        gate, detector = MotionGate(), StableDetector()
        runs = [detector.update(i, i / fps, gate.update(_frame())) for i in range(20)]
        assert [i for i, r in enumerate(runs) if r is not None] == [frames_needed - 1], fps
