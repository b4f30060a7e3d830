"""The models a detection benchmark runs, chosen on its command line (shared by
bench/real_photos.py and bench/detect_scenes.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from referee.detection.cards import DEFAULT_MODEL, DEFAULT_VERIFIER, CardIdentifier, CardVerifier
from referee.detection.corners import DEFAULT_CORNER_MODEL, CornerModel
from referee.detection.learned import DEFAULT_DETECTOR, CardDetector
from referee.detection.onnx_model import DETECTOR_RUNTIMES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--identity", type=Path, default=DEFAULT_MODEL,
                        help="the card identity model (ONNX) to measure")
    parser.add_argument("--finder", default="both", choices=["shapes", "learned", "both"],
                        help="outlines from the shape finder, the learned detector, or both")
    parser.add_argument("--detector", type=Path, default=DEFAULT_DETECTOR)
    parser.add_argument("--runtime", choices=DETECTOR_RUNTIMES, default=None,
                        help="what runs the detector (default: REFEREE_DETECTOR_RUNTIME, or "
                             "auto: OpenVINO in bfloat16 where the CPU computes it)")
    parser.add_argument("--verifier", default=str(DEFAULT_VERIFIER),
                        help="the card verifier (ONNX), or 'none' to run without one")
    parser.add_argument("--corners", default=str(DEFAULT_CORNER_MODEL),
                        help="the corner model (ONNX) that reads the kept outlines' corners "
                             "again, or 'none'")
    parser.add_argument("--no-refine", action="store_true",
                        help="keep the detector's boxes as they are (no snap to card edges)")


def models(args: argparse.Namespace) -> tuple[CardIdentifier, CardDetector | None, bool]:
    """The identifier, the detector (None: shape finder alone), and whether the shape
    finder runs too: what ``referee.detection.detect.detect`` takes."""
    detector = None if args.finder == "shapes" else CardDetector(
        args.detector, refine=not args.no_refine, runtime=args.runtime)
    return CardIdentifier(args.identity), detector, args.finder != "learned"


def runtime(detector: CardDetector | None) -> str | None:
    """What ran the detector, for the benchmark's figures (None: no detector)."""
    return None if detector is None else detector.runtime


def verifier(args: argparse.Namespace) -> CardVerifier | None:
    """The card verifier ``detect`` runs (None for ``--verifier none``)."""
    path = _optional(args.verifier, "--verifier")
    return None if path is None else CardVerifier(path)


def corner_model(args: argparse.Namespace) -> CornerModel | None:
    """The corner model ``detect`` runs (None for ``--corners none``)."""
    path = _optional(args.corners, "--corners")
    return None if path is None else CornerModel(path)


def _optional(value: str, option: str) -> Path | None:
    """The model file an option names, or None for ``none`` (a clear exit when missing)."""
    if value == "none":
        return None
    path = Path(value)
    if not path.exists():
        raise SystemExit(f"{option} {path}: no such file (or say none)")
    return path
