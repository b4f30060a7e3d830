"""Benchmark: where `referee detect`'s time goes, stage by stage, on rendered 1280 x 720 frames.

    python bench/stages.py --split test --scenes 40

Renders the frames ``bench/detect_scenes.py`` renders (the same seed gives the same scenes),
stores each as JPEG, runs ``detect`` once on the first to open the models, then times every
frame end to end (decoding the JPEG included) and, inside it, each stage ``STAGES`` names:
wall-clock milliseconds a frame and the CPU milliseconds the whole process spent meanwhile
(every thread's; onnxruntime's threads wait busy for a while after a run, so some of the
network's CPU time falls to the stage after it). Stages nest (``CardDetector.find`` holds
the network's passes, the shape finder, tightening and decoding), so their times add up to
more than a frame's; a function several stages call (``identify_many``, ``_outlined``) is
timed over all its calls (the calls a frame say how many). Where OpenVINO runs the network,
its passes only start in ``start`` and are waited for in ``_waited``. scipy's optimiser,
which ``card_plane.ends_plane`` imports on its first call (once a process), is imported
before the frames are timed, and that import's time printed apart (else, 0.6-0.9 s, it
counted as 15-20 ms a frame of 40 against that stage). Prints a table, then the same
figures as one JSON line. Times vary by a tenth between runs on a shared machine:
compare two versions in turn, the same hour.
"""

from __future__ import annotations

import argparse
import importlib
import json
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import cv2
import finders
import numpy as np

from referee.detection import cards, detect, learned
from synth.random_scenes import random_scene

SIZE = (1280, 720)

#: The stages timed: (where the function lives, its name there, what the table calls it).
#: A function ``detect`` calls by name is timed in ``detect``'s namespace.
STAGES: tuple[tuple[Any, str, str], ...] = (
    (learned.CardDetector, "find", "outlines: detector and shape finder (find)"),
    (learned, "start", "  the network's passes (start)"),
    (learned, "_waited", "  the network's passes waited for (_waited)"),
    (detect, "find_cards", "  the shape finder (find_cards)"),
    (learned, "tighten", "  boxes moved onto edges (tighten)"),
    (learned, "decode", "  the network's output decoded (decode)"),
    (cards.CardIdentifier, "identify_many", "corners read (identify_many)"),
    (detect, "_second_look", "faint boxes looked at again (_second_look)"),
    (cards.CardVerifier, "not_card", "the verifier (not_card)"),
    (detect, "_seen_backs", "backs outlined by their colours (_seen_backs)"),
    (detect, "_outlined", "kept outlines polished, corner model (_outlined)"),
    (detect, "_under", "cards under others (_under)"),
    (detect, "stacking", "which card lies on which (stacking)"),
    (cards.CardIdentifier, "confirm", "faces and end bands read (confirm)"),
    (detect, "_plane_of_cards", "the cards seen whole: a plane (_plane_of_cards)"),
    (detect, "_near_planes", "  or one near each (_near_planes)"),
    (detect, "_ends_planes", "  or the cards' ends (_ends_planes)"),
    (detect, "card_shaped", "outlines made a card's shape (card_shaped)"),
)


class Timer:
    """Wall-clock and process CPU seconds spent in each stage wrapped (``wrap``)."""

    def __init__(self) -> None:
        self.wall: defaultdict[str, float] = defaultdict(float)
        self.cpu: defaultdict[str, float] = defaultdict(float)
        self.calls: defaultdict[str, int] = defaultdict(int)

    def timed(self, label: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            wall, cpu = time.perf_counter(), time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.wall[label] += time.perf_counter() - wall
                self.cpu[label] += time.process_time() - cpu
                self.calls[label] += 1
        return run

    def wrap(self, stages: tuple[tuple[Any, str, str], ...] = STAGES) -> Callable[[], None]:
        """Time every stage from now on; returns what puts the functions back."""
        originals = []
        for owner, name, _ in stages:  # (all looked up before any is wrapped)
            original = owner.__dict__.get(name) if isinstance(owner, type) \
                else getattr(owner, name, None)
            if original is None:
                raise SystemExit(f"bench/stages.py: {getattr(owner, '__name__', owner)} has "
                                 f"no {name} to time (rename it in STAGES)")
            originals.append(original)
        for (owner, name, label), original in zip(stages, originals, strict=True):
            setattr(owner, name, self.timed(label, original))

        def restore() -> None:
            for (owner, name, _), original in zip(stages, originals, strict=True):
                setattr(owner, name, original)
        return restore

    def clear(self) -> None:
        self.wall.clear()
        self.cpu.clear()
        self.calls.clear()


def figures(timer: Timer, frames: int, frame_times: list[float], frame_cpu: list[float],
            ) -> dict[str, Any]:
    """The figures printed: a frame's median and mean, and each stage's milliseconds a frame
    (wall, CPU), calls a frame, in ``STAGES`` order (stages never called: 0)."""
    def ms(seconds: float) -> float:
        return round(1000 * seconds / frames, 1)

    return {
        "frames": frames,
        "frame_ms": {"median": round(1000 * float(np.median(frame_times)), 1),
                     "mean": round(1000 * float(np.mean(frame_times)), 1),
                     "cpu_mean": round(1000 * float(np.mean(frame_cpu)), 1)},
        "stages": {label: {"wall_ms": ms(timer.wall[label]), "cpu_ms": ms(timer.cpu[label]),
                           "calls": round(timer.calls[label] / frames, 1)}
                   for _, _, label in STAGES},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="test", choices=["train", "val", "test"])
    parser.add_argument("--scenes", type=int, default=40)
    parser.add_argument("--seed", type=int, default=77)
    finders.add_arguments(parser)
    args = parser.parse_args()
    if args.scenes < 1:
        parser.error("--scenes must be at least 1")
    identifier, detector, shapes_too = finders.models(args)
    verifier = finders.verifier(args)
    corner_model = finders.corner_model(args)
    rng = np.random.default_rng(args.seed)
    jpegs = []
    for _ in range(args.scenes):
        renderer, scene, _deck = random_scene(rng, args.split, image_size=SIZE)
        image, _truth = renderer.render(scene)
        ok, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 90])
        assert ok
        jpegs.append(jpeg)

    def run(jpeg: np.ndarray) -> None:
        detect.detect(cv2.imdecode(jpeg, cv2.IMREAD_COLOR), identifier, detector, shapes_too,
                      verifier, corner_model)

    started = time.perf_counter()
    importlib.import_module("scipy.optimize")
    scipy_ms = round(1000 * (time.perf_counter() - started), 1)
    timer = Timer()
    restore = timer.wrap()
    try:
        run(jpegs[0])  # the models open on first use
        timer.clear()
        frame_times, frame_cpu = [], []
        for jpeg in jpegs:
            wall, cpu = time.perf_counter(), time.process_time()
            run(jpeg)
            frame_times.append(time.perf_counter() - wall)
            frame_cpu.append(time.process_time() - cpu)
    finally:
        restore()
    out = figures(timer, len(jpegs), frame_times, frame_cpu)
    frame = out["frame_ms"]
    print(f"a frame: median {frame['median']} ms, mean {frame['mean']} ms, "
          f"CPU {frame['cpu_mean']} ms ({len(jpegs)} frames, runtime {finders.runtime(detector)})")
    print(f"once a process, not timed above: scipy.optimize imported in {scipy_ms} ms")
    print(f"{'stage':<52} {'ms':>7} {'CPU ms':>7} {'calls':>6}")
    for label, stage in out["stages"].items():
        print(f"{label:<52} {stage['wall_ms']:>7} {stage['cpu_ms']:>7} {stage['calls']:>6}")
    print(json.dumps({"split": args.split, "seed": args.seed,
                      "runtime": finders.runtime(detector), "scipy_import_ms": scipy_ms, **out}))


if __name__ == "__main__":
    main()
