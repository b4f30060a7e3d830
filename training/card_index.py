"""Train the card-index classifier with ultralytics, export ONNX, and write its metadata.

    python -m synth.export --out /tmp/cards --count 4000 --seed 1
    YOLO_OFFLINE=1 python -m training.card_index --data /tmp/cards/classify --epochs 12

With ``--faces`` it trains the whole-face classifier instead (``models/card_face.*``) on the
``faces/`` folders of exports (``python -m synth.export ... --faces-only`` makes many); with
``--verifier`` the card verifier (``models/card_verifier.*``: ``card`` / ``not_card`` faces,
``python -m training.card_verifier_data`` makes them); with ``--suits`` the suit model
(``models/card_suit.*``: a card's end bands, ``crops.band_crops``, read into ``C D H S`` and
``none``) on the ``suits/`` folders of faces-only exports.

The model is trained from scratch (no pretrained weights exist here) on index corners
(``crops.INDEX_MM``, scaled to 64 x 64) warped by ``referee.detection.crops`` from
rendered scenes of the training decks; the validation decks measure it. Outputs:
``models/card_index.onnx`` (what the referee runs, with onnxruntime; weights stored as
float16), ``models/card_index.json`` (classes, input size, index cut, how it was made) and
``models/card_index.pt`` (the ultralytics checkpoint).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path

from referee.detection.crops import CARD_W_MM, SUIT_BAND_MM

MODELS = Path(__file__).resolve().parents[1] / "models"


#: Labels the whole-face model has no class for: an ordinary export's ``faces/`` also holds
#: ``other`` patches of table and clutter (faces-only exports do not), and a set with one
#: class more would make ultralytics start the model's last layer afresh (session 19).
NOT_FACES = frozenset({"other"})


def merged(sources: list[Path], out: Path, skip: frozenset[str] = frozenset()) -> Path:
    """One classification set (``train``/``val``/class folders) holding every source's crops
    but those labelled in ``skip``, hard-linked (no copies) under names prefixed by the
    source's position. A set merged earlier in ``out`` (from other sources, perhaps) is
    replaced."""
    shutil.rmtree(out, ignore_errors=True)
    for number, source in enumerate(sources):
        for crop in sorted(source.glob("*/*/*.png")):
            split, label = crop.parent.parent.name, crop.parent.name
            if label in skip:
                continue
            target = out / split / label / f"{number}_{crop.name}"
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                os.link(crop, target)
    return out


def index_mm(sources: list[Path]) -> list[float]:
    """The index cut (mm) every source export was made with (export.json beside classify/;
    exports from before it was recorded cut 26 mm squares). Mixed sizes are refused."""
    from referee.detection.crops import LEGACY_INDEX_MM

    sizes = set()
    for source in sources:
        record = source.parent / "export.json"
        made = json.loads(record.read_text()) if record.exists() else {}
        sizes.add(tuple(made.get("index_mm", LEGACY_INDEX_MM)))
    if len(sizes) != 1:
        raise SystemExit(f"exports cut index corners of different sizes: {sorted(sizes)}")
    return [float(v) for v in sizes.pop()]


def train(data: Path, crop_mm: list[float] | None, epochs: int, imgsz: int, batch: int,
          out: Path, init: Path | None = None, name: str = "card_index",
          crop: str = "whole face, 63 x 88 mm squeezed") -> dict[str, object]:
    """Train, export and write ``models/NAME.{onnx,pt,json}``; ``crop_mm`` is the index cut
    (None: the model reads ``crop``, a whole face or a card's end bands)."""
    os.environ.setdefault("YOLO_OFFLINE", "1")
    from ultralytics import YOLO  # training-only dependency

    from training import use_every_core

    use_every_core()

    started = time.perf_counter()
    # The architecture alone (trained from scratch), or our own earlier weights to go on from.
    model = YOLO(str(init) if init else "yolov8n-cls.yaml")
    results = model.train(
        data=str(data), epochs=epochs, imgsz=imgsz, batch=batch, device="cpu", workers=2,
        pretrained=init is not None, project=str(out), name=name, exist_ok=True,
        plots=False, amp=False,
        # A mirrored index is not a card; a mirrored band shows the same suit, printed in
        # the other corner as some designs print it.
        fliplr=0.5 if name == "card_suit" else 0.0,
        scale=0.1,  # crops are already framed on the index: keep 90-100% of them
        erasing=0.1, hsv_h=0.02, hsv_s=0.5, hsv_v=0.4, patience=50, verbose=False,
    )
    seconds = time.perf_counter() - started
    best = Path(results.save_dir) / "weights" / "best.pt"
    trained = YOLO(str(best))
    onnx_path = Path(trained.export(format="onnx", imgsz=imgsz, dynamic=True, simplify=True))
    MODELS.mkdir(exist_ok=True)
    # Weights stored as float16 (3.1 MB instead of 5.8), float32 arithmetic: the 8-bit
    # convolutions shipped up to session 14 were smaller but slower (training/onnx_weights.py).
    from training.onnx_weights import convert

    convert(onnx_path, MODELS / f"{name}.onnx")
    shutil.copy(best, MODELS / f"{name}.pt")
    names = trained.names
    meta = {
        "classes": [names[i] for i in range(len(names))],
        "imgsz": imgsz,
        **({"index_mm": crop_mm} if crop_mm else {"crop": crop}),
        "input": "RGB, N x 3 x H x W, values 0-1",
        "output": "class probabilities",
        "trained_on": str(data),
        "epochs": epochs,
        "continued_from": str(init) if init else None,
        "batch": batch,
        "train_seconds": round(seconds),
        "top1_val": float(results.top1) if hasattr(results, "top1") else None,
    }
    (MODELS / f"{name}.json").write_text(json.dumps(meta, indent=1) + "\n")
    return meta


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, nargs="+",
                        help="one or more exports' classify/ (or with --faces, faces/) folders;"
                        " several are merged")
    parser.add_argument("--faces", action="store_true",
                        help="train the whole-face model (models/card_face.*)")
    parser.add_argument("--verifier", action="store_true",
                        help="train the card verifier (models/card_verifier.*) on faces that "
                        "training.card_verifier_data sorted into card / not_card")
    parser.add_argument("--suits", action="store_true",
                        help="train the suit model (models/card_suit.*) on faces-only exports' "
                        "suits/ folders")
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--imgsz", type=int, default=64)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--out", type=Path, default=Path("/tmp/card_index_runs"))
    parser.add_argument("--init", type=Path, help="go on from these weights (.pt)")
    args = parser.parse_args()
    whole = args.faces or args.verifier or args.suits
    crop_mm = None if whole else index_mm(args.data)
    skip = NOT_FACES if args.faces else frozenset()
    if len(args.data) == 1 and not any((args.data[0] / split / label).is_dir()
                                       for split in ("train", "val") for label in skip):
        data = args.data[0]
    else:
        data = merged(args.data, args.out / "merged-data", skip)
    name = ("card_verifier" if args.verifier else "card_face" if args.faces
            else "card_suit" if args.suits else "card_index")
    crop = (f"both end bands, {SUIT_BAND_MM:g} x {CARD_W_MM:g} mm squeezed" if args.suits
            else "whole face, 63 x 88 mm squeezed")
    print(json.dumps(train(data, crop_mm, args.epochs, args.imgsz, args.batch, args.out,
                           args.init, name, crop)))


if __name__ == "__main__":
    main()
