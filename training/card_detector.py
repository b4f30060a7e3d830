"""Train the class-agnostic card detector (oriented boxes) with ultralytics; export ONNX.

    python -m synth.export --out /tmp/cards3 --count 5000 --seed 3
    YOLO_OFFLINE=1 python -m training.card_detector --data /tmp/cards3/detect-obb --epochs 12

(models/README.md has the exact commands of the shipped model.)

Trained from scratch (no pretrained weights exist here) on the rendered scenes' whole-card
outlines (covered parts included), so it can give a card's full outline when one end is
under another card. Outputs ``models/card_detector.onnx`` (what the referee runs with
onnxruntime; weights stored as float16), ``models/card_detector.pt`` and
``models/card_detector.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path

MODELS = Path(__file__).resolve().parents[1] / "models"


def data_yaml(folders: list[Path], out: Path) -> Path:
    """The data set to train on: one export's ``data.yaml``, or for several exports a new
    one in ``out`` listing all their training and validation images."""
    if len(folders) == 1:
        return folders[0] / "data.yaml"
    for folder in folders:
        if not (folder / "images" / "train").is_dir():
            raise SystemExit(f"error: {folder} is not an export's detect-obb folder")
    out.mkdir(parents=True, exist_ok=True)
    listed = {split: [str((folder / "images" / split).resolve()) for folder in folders]
              for split in ("train", "val")}
    path = out / "data.yaml"
    path.write_text(json.dumps({**listed, "names": {0: "card"}}, indent=1) + "\n")
    return path


def train(data: list[Path], epochs: int, imgsz: int, batch: int, out: Path,
          init: Path | None = None, fraction: float = 1.0,
          mosaic: float = 1.0, freeze: int = 0) -> dict[str, object]:
    os.environ.setdefault("YOLO_OFFLINE", "1")
    from ultralytics import YOLO  # training-only dependency

    from training import use_every_core

    use_every_core()

    started = time.perf_counter()
    model = YOLO(str(init) if init else "yolov8n-obb.yaml")
    results = model.train(
        data=str(data_yaml(data, out)), epochs=epochs, imgsz=imgsz, batch=batch, device="cpu",
        workers=2, pretrained=init is not None, project=str(out), name="card_detector",
        exist_ok=True, plots=False, amp=False, fraction=fraction, patience=50,
        fliplr=0.5, degrees=0.0, mosaic=mosaic, close_mosaic=2, verbose=False,
        freeze=freeze or None,
    )
    seconds = time.perf_counter() - started
    best = Path(results.save_dir) / "weights" / "best.pt"
    trained = YOLO(str(best))
    onnx_path = Path(trained.export(format="onnx", imgsz=imgsz, simplify=True))
    MODELS.mkdir(exist_ok=True)
    # Weights stored as float16 (6.3 MB instead of 12.4), float32 arithmetic: the 8-bit
    # convolutions shipped up to session 14 were smaller but slower (training/onnx_weights.py).
    # And any height and width, its anchors fed (a 1280 x 720 frame on 480 x 288, not 480 x
    # 480: training/detector_shapes.py).
    from training.detector_shapes import NotAnExportError, ship

    try:
        ship(onnx_path, MODELS / "card_detector.onnx")
    except NotAnExportError as error:  # (nothing written to models/; the run's weights kept)
        raise SystemExit(f"error: the export cannot be shipped ({error}); the trained "
                         f"weights are {best}") from None
    shutil.copy(best, MODELS / "card_detector.pt")
    metrics = getattr(results, "results_dict", {}) or {}
    meta = {
        "task": "obb", "classes": ["card"], "imgsz": imgsz,
        "input": "RGB, 1 x 3 x H x W letterboxed (H, W multiples of 32, the longer imgsz), "
                 "values 0-1; then the anchor points (1 x 2 x N) and strides (1 x N) of that "
                 "input's cells (training.detector_shapes; referee.detection.learned.grid)",
        "trained_on": " ".join(map(str, data)), "epochs": epochs, "fraction": fraction,
        "continued_from": str(init) if init else None, "batch": batch, "mosaic": mosaic,
        "frozen_modules": freeze,
        "train_seconds": round(seconds),
        "val": {k: round(float(v), 4) for k, v in metrics.items()},
    }
    (MODELS / "card_detector.json").write_text(json.dumps(meta, indent=1) + "\n")
    return meta


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, nargs="+", required=True,
                        help="detect-obb folders of one or more exports")
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--imgsz", type=int, default=512)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--fraction", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=Path("/tmp/card_detector_runs"))
    parser.add_argument("--init", type=Path, help="go on from these weights (.pt)")
    parser.add_argument("--mosaic", type=float, default=1.0,
                        help="share of 4-image mosaics (they halve the cards' size)")
    parser.add_argument("--freeze", type=int, default=0,
                        help="keep the first N modules as they are (10: the backbone)")
    args = parser.parse_args()
    print(json.dumps(train(args.data, args.epochs, args.imgsz, args.batch, args.out,
                           args.init, args.fraction, args.mosaic, args.freeze)))


if __name__ == "__main__":
    main()
