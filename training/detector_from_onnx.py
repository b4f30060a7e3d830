"""Make the card detector's training checkpoint again from the committed ONNX file.

    python -m training.detector_from_onnx --images /tmp/cards30/detect-obb/images/train \\
        --out /tmp/card_detector_v6.pt

The repository commits ``models/card_detector.onnx`` but not its ultralytics checkpoint
(6.4 MB, needed only to train on), so the detector could be trained further only on the
machine that made it. This rebuilds a checkpoint that computes what the ONNX file computes.

The export fused every convolution with its batch normalisation (``W' = W * g / s``,
``b' = beta - g * mu / s``); the factors cannot be told apart again, and need not be. Each
``Conv`` module gets the fused weights, and its batch normalisation is set to add the fused
bias and otherwise pass its input on. A normalisation left as ``x + b'`` would be the
identity only in evaluation: in training it divides by the batch's own spread, which would
change the network at the first step. So its statistics are measured: the mean ``m`` and
spread ``s`` of each fused convolution's output over ``--count`` training images, and the
normalisation becomes ``(x - m) / s * s + m + b'``, the same function in evaluation and
nearly the same on a training batch. The script checks the rebuilt model against the ONNX
file on those images and prints the largest difference of the outputs.

Training-only: needs torch, ultralytics and onnx (the ``train`` extra).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import onnx
from onnx import numpy_helper

MODELS = Path(__file__).resolve().parents[1] / "models"


def onnx_weights(path: Path) -> dict[str, np.ndarray[Any, Any]]:
    """The model's float weights by name (float16 ones under their float32 names)."""
    weights = {}
    for init in onnx.load(str(path)).graph.initializer:
        array = numpy_helper.to_array(init)
        if not np.issubdtype(array.dtype, np.floating):
            continue
        name = init.name.removesuffix("_fp16")
        weights[name] = array.astype(np.float32)
    return weights


def letterboxed(path: Path, imgsz: int) -> np.ndarray[Any, Any]:
    """One image as the detector sees it: RGB, letterboxed to imgsz, 3 x imgsz x imgsz, 0-1
    (grey 114 padding, centred, as ultralytics and ``referee/detection/learned.py`` pad)."""
    image = cv2.imread(str(path))
    if image is None:
        raise SystemExit(f"error: cannot read {path}")
    height, width = image.shape[:2]
    scale = min(imgsz / height, imgsz / width)
    new_w, new_h = round(width * scale), round(height * scale)
    resized = cv2.resize(image, (new_w, new_h), interpolation=cv2.INTER_LINEAR)
    canvas = np.full((imgsz, imgsz, 3), 114, np.uint8)
    top, left = (imgsz - new_h) // 2, (imgsz - new_w) // 2
    canvas[top:top + new_h, left:left + new_w] = resized
    return canvas[:, :, ::-1].transpose(2, 0, 1).astype(np.float32) / 255.0


def rebuild(onnx_path: Path, images: list[Path], imgsz: int) -> tuple[Any, float]:
    """The ultralytics OBB model holding the ONNX file's weights; and the largest absolute
    difference between its outputs and onnxruntime's on ``images``."""
    import onnxruntime as ort
    import torch
    from ultralytics.nn.modules.conv import Conv
    from ultralytics.nn.tasks import OBBModel

    weights = onnx_weights(onnx_path)
    model = OBBModel("yolov8n-obb.yaml", nc=1, verbose=False)  # type: ignore[no-untyped-call]
    model.eval()
    used = set()
    convs: dict[str, Any] = {}
    with torch.no_grad():
        for name, module in model.named_modules():
            if isinstance(module, Conv):
                weight, bias = weights[f"{name}.conv.weight"], weights[f"{name}.conv.bias"]
                module.conv.weight.copy_(torch.from_numpy(weight))
                bn: Any = module.bn
                bn.running_mean.zero_()
                bn.running_var.fill_(1.0 - bn.eps)
                bn.weight.fill_(1.0)
                bn.bias.copy_(torch.from_numpy(bias))
                used.update({f"{name}.conv.weight", f"{name}.conv.bias"})
                convs[name] = module
            elif isinstance(module, torch.nn.Conv2d) and f"{name}.weight" in weights \
                    and name.removesuffix(".conv") not in convs:  # not a Conv's own
                module.weight.copy_(torch.from_numpy(weights[f"{name}.weight"]))
                if module.bias is not None:
                    module.bias.copy_(torch.from_numpy(weights[f"{name}.bias"]))
                    used.add(f"{name}.bias")
                used.add(f"{name}.weight")
    missing = sorted(name for name in weights if name.endswith((".weight", ".bias"))
                     and name.startswith("model.") and name not in used)
    if missing:
        raise SystemExit(f"error: ONNX weights with no place in the model: {missing[:5]}")

    batch = torch.from_numpy(np.stack([letterboxed(path, imgsz) for path in images]))
    # Each fused convolution's output statistics, per channel, with the model as it is
    # (every normalisation an identity plus bias, so these are the ONNX file's activations).
    sums: dict[str, list[Any]] = {}

    def hook(name: str) -> Any:
        def record(module: Any, inputs: Any, output: Any) -> None:
            x = output.double()
            sums.setdefault(name, []).append(
                (x.sum((0, 2, 3)), (x * x).sum((0, 2, 3)), x.numel() / x.shape[1]))
        return record

    handles = [module.conv.register_forward_hook(hook(name)) for name, module in convs.items()]
    with torch.no_grad():
        for start in range(0, len(batch), 8):
            model(batch[start:start + 8])
    for handle in handles:
        handle.remove()
    with torch.no_grad():
        for name, module in convs.items():
            total = sum(n for _, _, n in sums[name])
            mean = sum(s for s, _, _ in sums[name]) / total
            var = (sum(q for _, q, _ in sums[name]) / total - mean * mean).clamp(min=1e-6)
            bn = module.bn
            bn.running_mean.copy_(mean.float())
            bn.running_var.copy_((var - bn.eps).clamp(min=1e-8).float())
            bn.weight.copy_(torch.sqrt(bn.running_var + bn.eps))
            bn.bias.add_(mean.float())

    from referee.detection.learned import grid

    session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    names = [port.name for port in session.get_inputs()]
    # (a network that takes any size is fed the grid of its cells: training/detector_shapes.py)
    cells = dict(zip(names[1:], grid(imgsz, imgsz), strict=True)) if len(names) == 3 else {}
    worst = 0.0
    with torch.no_grad():
        for start in range(0, len(batch), 8):
            part = batch[start:start + 8]
            ours = model(part)
            ours = (ours[0] if isinstance(ours, (list, tuple)) else ours).numpy()
            for i in range(len(part)):
                theirs = session.run(None, {names[0]: part[i:i + 1].numpy(), **cells})[0]
                worst = max(worst, float(np.abs(ours[i:i + 1] - theirs).max()))
    return model, worst


def save(model: Any, out: Path, imgsz: int, source: Path) -> None:
    """Write ``model`` as an ultralytics checkpoint that ``YOLO(out)`` and ``--init`` load."""
    from copy import deepcopy

    import torch
    from ultralytics import __version__

    model.names = {0: "card"}
    model.args = {"task": "obb", "imgsz": imgsz}
    checkpoint = {
        "date": datetime.datetime.now().isoformat(), "version": __version__,
        "epoch": -1, "best_fitness": None, "model": deepcopy(model).half(), "ema": None,
        "updates": None, "optimizer": None, "train_args": {"task": "obb", "imgsz": imgsz},
        "train_metrics": {}, "train_results": {}, "rebuilt_from": str(source),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(checkpoint, out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--onnx", type=Path, default=MODELS / "card_detector.onnx")
    parser.add_argument("--images", type=Path, required=True,
                        help="a folder of training images to measure the statistics on")
    parser.add_argument("--count", type=int, default=256)
    parser.add_argument("--out", type=Path, required=True, help="the checkpoint to write (.pt)")
    args = parser.parse_args()
    os.environ.setdefault("YOLO_OFFLINE", "1")
    meta = json.loads(args.onnx.with_suffix(".json").read_text())
    imgsz = int(meta["imgsz"])
    images = sorted(args.images.glob("*.jpg"))[: args.count]
    if not images:
        raise SystemExit(f"error: no .jpg images in {args.images}")
    model, worst = rebuild(args.onnx, images, imgsz)
    save(model, args.out, imgsz, args.onnx)
    print(json.dumps({"out": str(args.out), "images": len(images),
                      "max_abs_difference_to_onnx": round(worst, 5)}))


if __name__ == "__main__":
    main()
