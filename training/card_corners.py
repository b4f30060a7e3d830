"""Train the corner model: a card's four corners from a patch cut round an outline that
may have them a few mm off (``referee.detection.corners``).

    python -m training.card_corners data --out /tmp/corners1 --scenes 2400 --seed 1
    python -m training.card_corners data --out /tmp/corners2 --scenes 2400 --seed 2
    python -m training.card_corners train --data /tmp/corners1 /tmp/corners2 --epochs 16

The second run (``models/card_corners_2.*``, a member of the first) is made the same way
with ``data ... --boxed-share 0.4`` and ``train ... --name card_corners_2``: that share of
its outlines start from the card's smallest rectangle, as the detector's box does. A coarse
model (session 52, measured and not kept, models/README.md) was rendered with ``data ...
--px-per-mm 0.5 --side-mm 40``: the same pixels cut at half a pixel a mm, so with more table
round the card, and one side of the outline moved up to 40 mm.

``data`` renders random scenes of the training decks (``synth.random_scenes``, 1280 x 720,
as the benchmarks see them) and, for each card at least ``MIN_VISIBLE`` visible whose
corners all lie in the picture, cuts ``crops.corner_patch`` round its true outline moved
as the detector's boxes and their tightening leave it (``astray``: the whole outline
shifted, turned and scaled a little, and now and then one side moved onto something a
few mm away), ``PER_CARD`` times. The target is the true corners in the patch. Shards of
``.npz`` (patches uint8, targets float32) go to ``--out``; a tenth of the scenes to
``val/`` (and the last shard when there are fewer than ten), and how they were made to
``render.json``.

``train`` fits a small convolutional network (plain torch: ultralytics has no task for
four points of one object in a crop) with a smooth L1 loss on the corners' offsets from
where the outline put them (in patch pixels), exports ``models/card_corners.onnx`` (float16
weights) and writes ``models/card_corners.json``. With ``--flip`` the training patches are
turned left to right and upside down at random, their corners with them (``flipped``;
measured in session 34 and not shipped, models/README.md).
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from referee.detection.crops import (
    CARD_W_MM,
    CORNER_PATCH_PX,
    corner_patch,
    order_corners,
    patch_corners,
)

MODELS = Path(__file__).resolve().parents[1] / "models"
IMAGE_SIZE = (1280, 720)
MIN_VISIBLE = 0.3
PER_CARD = 2
SHARD_SCENES = 100
#: The scales (pixels a mm of the card) patches may be cut at: at 1 the 96 x 128 patch shows
#: 16.5 and 20 mm of table round the card, and more pixels a mm would leave less room for a
#: side the outline has off; under 0.1 a card is a few pixels.
MIN_SCALE, MAX_SCALE = 0.1, 1.0
#: How far (mm) one side of a training outline may be moved at most: under a card's width.
MAX_SIDE_MM = 60.0


def boxed(corners: np.ndarray) -> np.ndarray:
    """The smallest rotated rectangle round a card's outline (4 x 2 pixels), as an oriented
    box, its corners in ``order_corners``' order round the card."""
    rect = cv2.boxPoints(cv2.minAreaRect(np.asarray(corners, np.float32)))
    return order_corners(np.asarray(rect, np.float64))


def astray(corners: np.ndarray, rng: np.random.Generator,
           boxed_share: float = 0.0, side_mm: float = 10.0) -> np.ndarray:
    """A card's true outline (4 x 2 pixels) as a tightened detector box may give it; moved
    from its smallest rectangle (``boxed``), as the box itself is, ``boxed_share`` of the
    time (with 0, no number is drawn for it: the first corner model's data); two times in
    five one side moved up to ``side_mm`` either way.

    A card seen in perspective is no rectangle: on held-out frames a third of the fully
    visible cards have their smallest rectangle at IoU under 0.9 with them, and the first
    model, trained on outlines moved from the card's own, leaves such corners off (session
    50, models/README.md)."""
    start = boxed_share > 0 and rng.random() < boxed_share
    pts = boxed(corners) if start else order_corners(corners)
    px_per_mm = float(np.linalg.norm(pts[1] - pts[0])) / CARD_W_MM
    centre = pts.mean(axis=0)
    angle = np.radians(rng.normal(0.0, 1.5))
    turn = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    scale = 1.0 + rng.normal(0.0, 0.025)
    shift = rng.normal(0.0, 1.5, size=2) * px_per_mm
    out = (pts - centre) @ turn.T * scale + centre + shift
    out += rng.normal(0.0, 0.6, size=(4, 2)) * px_per_mm
    # now and then one side caught on an edge a few mm off (a print line, the next card)
    if rng.random() < 0.4:
        side = int(rng.integers(4))
        a, b = out[side], out[(side + 1) % 4]
        direction = (b - a) / max(float(np.linalg.norm(b - a)), 1e-9)
        normal = np.array([-direction[1], direction[0]])
        move = rng.uniform(-side_mm, side_mm) * px_per_mm
        out[side] += move * normal
        out[(side + 1) % 4] += move * normal
    return np.asarray(out, np.float64)


def target_in_patch(truth: np.ndarray, warp: np.ndarray,
                    px_per_mm: float = 1.0) -> np.ndarray:
    """The true corners in the patch (``warp``: image onto patch, cut at ``px_per_mm``), in
    the order of the patch's own corners (``crops.patch_corners``: each true corner with the
    one it lies nearest, the order round the card kept)."""
    points = cv2.perspectiveTransform(order_corners(truth).reshape(1, 4, 2), warp)[0]
    reference = patch_corners(px_per_mm)
    shifts = [np.roll(points, k, axis=0) for k in range(4)]
    return np.asarray(min(shifts, key=lambda p: float(np.linalg.norm(p - reference,
                                                                     axis=1).sum())),
                      np.float32)


def _render_shard(job: tuple[Path, int, int, str, float, float, float]) -> int:
    from synth.random_scenes import random_scene

    path, seed, scenes, split, boxed_share, px_per_mm, side_mm = job
    rng = np.random.default_rng(seed)
    patches: list[np.ndarray] = []
    targets: list[np.ndarray] = []
    for _ in range(scenes):
        renderer, scene, _deck = random_scene(rng, split, image_size=IMAGE_SIZE)  # type: ignore[arg-type]
        image, truth = renderer.render(scene)
        # (as a webcam's frames come: compressed)
        quality = int(rng.integers(70, 96))
        image = cv2.imdecode(cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])[1],
                             cv2.IMREAD_COLOR)
        width, height = IMAGE_SIZE
        for obj in truth.objects:
            corners = np.asarray(obj.corners_px, np.float64)
            if obj.kind != "card" or obj.visible_fraction < MIN_VISIBLE or not (
                    (corners >= 0).all() and (corners[:, 0] < width).all()
                    and (corners[:, 1] < height).all()):
                continue
            for _ in range(PER_CARD):
                patch, warp = corner_patch(image, astray(corners, rng, boxed_share, side_mm),
                                           px_per_mm)
                patches.append(patch)
                targets.append(target_in_patch(corners, warp, px_per_mm))
    np.savez_compressed(path, patches=np.asarray(patches, np.uint8).reshape(
        -1, CORNER_PATCH_PX[1], CORNER_PATCH_PX[0], 3), targets=np.asarray(
        targets, np.float32).reshape(-1, 4, 2))
    return len(patches)


def make_data(out: Path, scenes: int, seed: int, workers: int,
              boxed_share: float = 0.0, px_per_mm: float = 1.0, side_mm: float = 10.0) -> None:
    jobs = []
    shards = (scenes + SHARD_SCENES - 1) // SHARD_SCENES
    for shard, start in enumerate(range(0, scenes, SHARD_SCENES)):
        held = shard % 10 == 9 or (shards < 10 and shard == shards - 1 and shards > 1)
        folder = out / ("val" if held else "train")
        folder.mkdir(parents=True, exist_ok=True)
        jobs.append((folder / f"shard{shard:04d}.npz", seed * 100_003 + shard,
                     min(SHARD_SCENES, scenes - start), "train", boxed_share, px_per_mm,
                     side_mm))
    (out / "render.json").parent.mkdir(parents=True, exist_ok=True)
    (out / "render.json").write_text(json.dumps(
        {"scenes": scenes, "seed": seed, "split": "train", "image_size": list(IMAGE_SIZE),
         "per_card": PER_CARD, "min_visible": MIN_VISIBLE, "boxed_share": boxed_share,
         "px_per_mm": px_per_mm, "side_mm": side_mm}) + "\n", encoding="utf-8")
    started = time.time()
    total = 0
    with ProcessPoolExecutor(workers) as pool:
        for done, count in enumerate(pool.map(_render_shard, jobs), 1):
            total += count
            print(f"shard {done}/{len(jobs)}: {total} patches, {time.time() - started:.0f} s",
                  flush=True)


def _load(folders: list[Path], split: str) -> tuple[np.ndarray, np.ndarray]:
    shards = [np.load(p) for folder in folders for p in sorted((folder / split).glob("*.npz"))]
    if not shards:
        raise SystemExit(f"no {split} shards in {', '.join(map(str, folders))}")
    return (np.concatenate([s["patches"] for s in shards]),
            np.concatenate([s["targets"] for s in shards]))


def network() -> Any:
    import torch
    from torch import nn

    def block(cin: int, cout: int) -> nn.Sequential:
        return nn.Sequential(nn.Conv2d(cin, cout, 3, 2, 1, bias=False), nn.BatchNorm2d(cout),
                             nn.ReLU(inplace=True),
                             nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout),
                             nn.ReLU(inplace=True))

    class CornerNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.features = nn.Sequential(block(3, 8), block(8, 16), block(16, 32),
                                          block(32, 64), block(64, 96))
            rows, cols = CORNER_PATCH_PX[1] // 32, CORNER_PATCH_PX[0] // 32
            self.head = nn.Sequential(nn.Flatten(), nn.Linear(96 * rows * cols, 128),
                                      nn.ReLU(inplace=True), nn.Linear(128, 8))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            # N x 3 x H x W BGR 0-255 -> N x 4 x 2 offsets (patch pixels) from patch_corners
            return self.head(self.features(x / 255.0 - 0.5)).view(-1, 4, 2) * 8.0

    return CornerNet()


def flipped(patches: np.ndarray, targets: np.ndarray,
            rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``patches`` (N x H x W x 3) and their true corners (N x 4 x 2, clockwise from the
    top-left), each turned left to right and each upside down, at random, half the time: a
    card's edges and corners are where they are whatever its print (more designs for the
    same renders). The corners keep their order round the patch."""
    height, width = patches.shape[1:3]
    patches, targets = patches.copy(), targets.copy()
    across = rng.random(len(patches)) < 0.5
    patches[across] = patches[across][:, :, ::-1]
    targets[across, :, 0] = width - 1 - targets[across, :, 0]
    targets[across] = targets[across][:, [1, 0, 3, 2]]
    down = rng.random(len(patches)) < 0.5
    patches[down] = patches[down][:, ::-1]
    targets[down, :, 1] = height - 1 - targets[down, :, 1]
    targets[down] = targets[down][:, [3, 2, 1, 0]]
    return patches, targets


def train(folders: list[Path], epochs: int, batch: int, out_name: str,
          flip: bool = False, seed: int = 0) -> None:
    import torch

    if epochs < 1:
        raise SystemExit("--epochs must be 1 or more")
    torch.set_num_threads(2)
    torch.manual_seed(seed)
    px_per_mm = patch_scale(folders)
    train_x, train_y = _load(folders, "train")
    val_x, val_y = _load(folders, "val")
    reference = patch_corners(px_per_mm).astype(np.float32)
    model = network()
    optimiser = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    steps = epochs * ((len(train_x) + batch - 1) // batch)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=2e-3, total_steps=steps)
    started = time.time()
    rng = np.random.default_rng(seed)
    print(f"{len(train_x)} training patches, {len(val_x)} validation patches", flush=True)
    for epoch in range(epochs):
        model.train()
        order = rng.permutation(len(train_x))
        total = 0.0
        for first in range(0, len(order), batch):
            chosen = order[first:first + batch]
            patches, targets = train_x[chosen], train_y[chosen]
            if flip:
                patches, targets = flipped(patches, targets, rng)
            x = _tensor(patches)
            # brightness and contrast vary with the light and the camera
            x = (x * torch.empty(len(chosen), 1, 1, 1).uniform_(0.7, 1.3)
                 + torch.empty(len(chosen), 1, 1, 1).uniform_(-30, 30)).clamp(0, 255)
            loss = torch.nn.functional.smooth_l1_loss(
                model(x), torch.from_numpy(targets - reference))
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += float(loss) * len(chosen)
        error = evaluate(model, val_x, val_y, px_per_mm)
        print(f"epoch {epoch + 1}/{epochs}: loss {total / len(train_x):.3f}, val corner error "
              f"median {error['median_px']:.2f} px, mean {error['mean_px']:.2f} px, "
              f"{time.time() - started:.0f} s", flush=True)
    export(model, out_name, {
        "trained_on": [_render(folder) for folder in folders], "epochs": epochs, "batch": batch,
        "train_patches": len(train_x), "flip": flip, "seed": seed, "px_per_mm": px_per_mm,
        "train_seconds": round(time.time() - started),
        "val": error})


def patch_scale(folders: list[Path]) -> float:
    """The pixels a mm the patches in ``folders`` were cut at (``data --px-per-mm``; 1 for
    those rendered before it was told); a clear exit when they differ or one is no scale."""
    scales = {}
    for folder in folders:
        meta = _render(folder)
        scale = meta.get("px_per_mm", 1.0) if isinstance(meta, dict) else 1.0
        if not _is_scale(scale):
            raise SystemExit(f"{folder / 'render.json'}: px_per_mm {scale!r} is no scale "
                             f"({MIN_SCALE}-{MAX_SCALE} px a mm)")
        scales[str(folder)] = float(scale)
    if len(set(scales.values())) > 1:
        raise SystemExit("the patches were cut at more than one scale (" + ", ".join(
            f"{folder}: {scale} px a mm" for folder, scale in scales.items())
                         + "): train on one scale")
    return next(iter(scales.values()), 1.0)


def _is_scale(value: Any) -> bool:
    """Whether ``value`` is a scale patches can be cut at (MIN_SCALE-MAX_SCALE px a mm)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and MIN_SCALE <= value <= MAX_SCALE


def _render(folder: Path) -> dict[str, Any] | str:
    """How the patches in ``folder`` were rendered (``data``'s ``render.json``), or the
    folder's name when that is not there."""
    try:
        return dict(json.loads((folder / "render.json").read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):  # (TypeError: JSON that is no object)
        return str(folder)


def _tensor(patches: np.ndarray) -> Any:
    """Patches (N x H x W x 3 uint8) as the network's input (N x 3 x H x W float)."""
    import torch

    return torch.from_numpy(np.ascontiguousarray(patches.transpose(0, 3, 1, 2))).float()


def evaluate(model: Any, x: np.ndarray, y: np.ndarray,
             px_per_mm: float = 1.0) -> dict[str, float]:
    """Distance (patch pixels: mm at 1 px a mm) of the predicted corners from the true ones
    (patches cut at ``px_per_mm``)."""
    import torch

    model.eval()
    reference = patch_corners(px_per_mm).astype(np.float32)
    predicted = []
    with torch.no_grad():
        for first in range(0, len(x), 256):
            predicted.append(model(_tensor(x[first:first + 256])).numpy() + reference)
    error = np.linalg.norm(np.concatenate(predicted) - y, axis=2)
    start = np.linalg.norm(reference[None] - y, axis=2)
    return {"median_px": float(np.median(error)), "mean_px": float(error.mean()),
            "p90_px": float(np.percentile(error, 90)),
            "outline_median_px": float(np.median(start)),
            "outline_p90_px": float(np.percentile(start, 90))}


def export(model: Any, name: str, meta: dict[str, Any]) -> None:
    import torch

    from training.onnx_weights import convert

    model.eval()
    width, height = CORNER_PATCH_PX
    raw = MODELS / f"{name}.fp32.onnx"
    torch.onnx.export(model, (torch.zeros(1, 3, height, width),), str(raw),
                      input_names=["patch"], output_names=["offsets"],
                      dynamic_axes={"patch": {0: "n"}, "offsets": {0: "n"}}, opset_version=17,
                      dynamo=False)
    convert(raw, MODELS / f"{name}.onnx")
    raw.unlink()
    torch.save(model.state_dict(), MODELS / f"{name}.pt")
    meta = {"classes": [], "patch_px": list(CORNER_PATCH_PX),
            "input": "BGR, N x 3 x H x W, values 0-255, crops.corner_patch",
            "output": "N x 4 x 2: corners' offsets (patch pixels) from crops.patch_corners",
            **meta}
    (MODELS / f"{name}.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {MODELS / name}.onnx, .pt, .json", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    data = commands.add_parser("data", help="render patches and their true corners")
    data.add_argument("--out", type=Path, required=True)
    data.add_argument("--scenes", type=int, default=2400)
    data.add_argument("--seed", type=int, default=1)
    data.add_argument("--workers", type=int, default=2)
    data.add_argument("--px-per-mm", type=float, default=1.0,
                      help="pixels a mm of the card the patches are cut at (a coarse model, "
                           "whose patch shows more table round the card: 0.5)")
    data.add_argument("--side-mm", type=float, default=10.0,
                      help="how far (mm, either way) one side of the outline is moved two "
                           "times in five (a coarse model: 40)")
    data.add_argument("--boxed-share", type=float, default=0.0,
                      help="the share of outlines moved from the card's smallest rectangle "
                           "(as an oriented-box detector draws it) rather than from its own "
                           "outline (0-1; the second corner model: 0.4)")
    fit = commands.add_parser("train", help="train, export ONNX, write the metadata")
    fit.add_argument("--data", type=Path, nargs="+", required=True)
    fit.add_argument("--epochs", type=int, default=16)
    fit.add_argument("--batch", type=int, default=64)
    fit.add_argument("--name", default="card_corners")
    fit.add_argument("--flip", action="store_true",
                     help="turn patches left to right and upside down at random")
    fit.add_argument("--seed", type=int, default=0,
                     help="the network's first weights, the order of the patches and their "
                          "brightness, contrast and flips (the first two runs: 0; another run "
                          "on the same patches: another seed)")
    args = parser.parse_args()
    if args.command == "data":
        if not 0.0 <= args.boxed_share <= 1.0:
            parser.error("--boxed-share is a share: 0 to 1")
        if not _is_scale(args.px_per_mm):
            parser.error(f"--px-per-mm is {MIN_SCALE} to {MAX_SCALE}")
        if not 0.0 <= args.side_mm <= MAX_SIDE_MM:  # (a NaN is refused too)
            parser.error(f"--side-mm is 0 to {MAX_SIDE_MM:g}")
        make_data(args.out, args.scenes, args.seed, args.workers, args.boxed_share,
                  args.px_per_mm, args.side_mm)
    else:
        train(args.data, args.epochs, args.batch, args.name, args.flip, args.seed)


if __name__ == "__main__":
    main()
