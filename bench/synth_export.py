"""Benchmark: how long the training-set export takes on this machine.

    python bench/synth_export.py --count 5000 --workers 2

Prints images per second and the time for the whole count; the target is 5,000 images in
under 20 minutes on 2 cores. Output goes to a temporary folder that is deleted afterwards.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from synth.decks import decks_for
from synth.export import export
from synth.scene import deck_paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    started = time.perf_counter()
    for name in decks_for("train") + decks_for("val"):
        deck_paths(name)  # one-off, cached; timed separately
    rasterising = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        totals = export(Path(tmp), args.count, args.seed, workers=args.workers)
        elapsed = time.perf_counter() - started
    print(json.dumps({
        "images": totals["images"], "cards_labelled": totals["cards"],
        "index_crops": totals["crops"], "workers": args.workers,
        "seconds": round(elapsed, 1), "images_per_second": round(totals["images"] / elapsed, 2),
        "minutes_for_5000": round(5000 / (totals["images"] / elapsed) / 60, 1),
        "deck_rasterising_seconds_cached": round(rasterising, 1),
    }))


if __name__ == "__main__":
    main()
