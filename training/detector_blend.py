"""Blend two card detector checkpoints weight by weight, and export the blend as the product
runs a detector.

    python -m training.detector_blend /tmp/s46/card_detector_v6.pt /tmp/s47/det47.pt 0.3 \\
        --out /tmp/s48/soup47_30

Every floating-point tensor of the blend (weights, biases, the batch normalisations'
running statistics) is ``(1 - alpha) * A + alpha * B``; the rest is B's. When B was trained
on from A, the blend often keeps what B learned and what A knew that B's training wore away
(weight-space ensembles, WiSE-FT). Writes ``OUT.pt`` (the ultralytics checkpoint),
``OUT.onnx`` (float16 weights, as ``training.card_detector`` writes them) and ``OUT.json``
(the detector's metadata, naming the blend). Measured in models/README.md (sessions 46, 48).

Training-only: needs torch and ultralytics (the ``train`` extra).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from training.card_detector import MODELS


def blended(a: dict[str, Any], b: dict[str, Any], alpha: float) -> dict[str, Any]:
    """State dicts ``a`` and ``b`` (the same keys and shapes) blended: ``(1 - alpha) * a +
    alpha * b`` for floating-point tensors (in float32, whatever they were), ``b``'s for
    the rest (counters)."""
    if a.keys() != b.keys() or any(a[key].shape != b[key].shape for key in b):
        raise ValueError("the two checkpoints are not the same network")
    return {key: a[key].float() * (1 - alpha) + b[key].float() * alpha
            if b[key].is_floating_point() else b[key] for key in b}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path, help="the first checkpoint (.pt), weighed 1 - alpha")
    parser.add_argument("b", type=Path, help="the second checkpoint (.pt), weighed alpha")
    parser.add_argument("alpha", type=float)
    parser.add_argument("--out", type=Path, required=True, help="OUT.pt, OUT.onnx, OUT.json")
    parser.add_argument("--imgsz", type=int, default=480)
    args = parser.parse_args()
    if not 0.0 <= args.alpha <= 1.0:
        raise SystemExit("alpha is a share: 0 (all A) to 1 (all B)")
    os.environ.setdefault("YOLO_OFFLINE", "1")
    import torch
    from ultralytics import YOLO  # training-only dependency

    from training.detector_shapes import ship

    first = torch.load(args.a, weights_only=False, map_location="cpu")
    second = torch.load(args.b, weights_only=False, map_location="cpu")
    mixed = blended(first["model"].float().state_dict(), second["model"].float().state_dict(),
                    args.alpha)
    model = second["model"].float()
    model.load_state_dict(mixed)
    # no EMA: ultralytics would load a checkpoint's averaged weights instead of the blend
    out = {**second, "model": model.half(), "ema": None}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    checkpoint = args.out.with_suffix(".pt")
    torch.save(out, checkpoint)
    onnx = Path(YOLO(str(checkpoint)).export(format="onnx", imgsz=args.imgsz, simplify=True))
    ship(onnx, args.out.with_suffix(".onnx"))  # as the shipped detector is stored and run
    shipped = json.loads((MODELS / "card_detector.json").read_text())
    meta = {**{key: shipped[key] for key in ("task", "classes", "input")}, "imgsz": args.imgsz,
            "blend": {"a": str(args.a), "b": str(args.b), "alpha": args.alpha}}
    args.out.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"wrote {args.out.with_suffix('.onnx')}")


if __name__ == "__main__":
    main()
