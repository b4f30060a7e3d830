"""Render a scripted game as a clip: video, ground-truth observations, the rulings
`referee adjudicate` gives for them, the calibration the clip needs, and per-second object
ground truth.

    python -m synth.footage.make --game slapstick --seed 3 --out /tmp/clips/slapstick-3

``--card-mm 57x89`` plays a card game with cards of that size (a bridge deck), and its
calibration names them, as ``referee calibrate --card-size`` would.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, Final

import cv2
import imageio_ffmpeg
import numpy as np
from tqdm import tqdm

from referee.adjudication import adjudicate_lines
from referee.calibration.model import (
    BoardRecord,
    Calibration,
    LineRecord,
    matrix3,
    save_calibration,
)
from referee.cards import CARD_MM, card_size
from synth import effects
from synth.camera import Camera, random_camera
from synth.decks import Split, decks_for
from synth.footage import board_games, card_games
from synth.footage.card_games import Script
from synth.scene import Renderer

#: Each game's script: (rng, deck, *, fps) -> Script (the card games' also take card_mm).
SCRIPTS: dict[str, Callable[..., Script]] = {
    "shove-piggy-shove": card_games.shove_piggy_shove,
    "push-out-the-pig": card_games.push_out_the_pig,
    "slapstick": card_games.slapstick,
    "shove-piecepack": board_games.shove_piecepack,
    "shove": board_games.shove_grid,
}
CARD_GAMES: Final = frozenset({"shove-piggy-shove", "push-out-the-pig", "slapstick"})


def calibration_of(camera: Camera, script: Script, boards: list[dict[str, Any]],
                   card_mm: tuple[float, float] = CARD_MM) -> Calibration:
    """The calibration a perfect `referee calibrate` would write for this clip (told the
    cards' size, ``card_mm``)."""
    board = None
    for drawn in boards:
        lines = tuple(
            LineRecord(index=int(k), y_start=float(ends[0][1]), y_end=float(ends[1][1]),
                       x_end=float(ends[1][0]), residual_mm=0.0)
            for k, ends in drawn.get("lines_mm", {}).items())
        board = BoardRecord(kind=drawn["board"], pose_in_table=(0.0, 0.0, 0.0),
                            pitch_mm=float(drawn["pitch_mm"]),
                            tiles_per_side=drawn.get("tiles_per_side"), lines=lines,
                            residual_mm=0.0)
    return Calibration(
        game=script.game, frame=script.frame, image_size=camera.image_size,
        image_to_table=matrix3(camera.image_to_table), camera_matrix=matrix3(camera.camera_matrix),
        dist_coeffs=tuple(float(v) for v in camera.dist_coeffs), error_mm=0.0, board=board,
        source="synthetic ground truth", card_mm=card_mm,
    )


def make_clip(game: str, seed: int, out: Path, *, split: Split = "val",
              size: tuple[int, int] = (960, 540), fps: float = 15.0, crf: int = 28,
              max_tilt_deg: float = 30.0, progress: bool = True,
              card_mm: tuple[float, float] | None = None) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    decks = decks_for(split)
    deck = decks[int(rng.integers(len(decks)))]
    if card_mm is not None and game not in CARD_GAMES:
        raise ValueError(f"{game} is played without cards: it takes no card size")
    script = SCRIPTS[game](rng, deck, fps=fps, **({} if card_mm is None else
                                                  {"card_mm": card_mm}))
    camera = random_camera(rng, target=script.target, view_mm=script.view_mm, image_size=size,
                           max_tilt_deg=max_tilt_deg)
    photometry = effects.Photometry.random(rng)
    # A webcam's video: no long exposures, and its own noise reduction before encoding.
    photometry = effects.Photometry(**{**asdict(photometry), "motion_blur_px": 0,
                                       "blur_sigma": min(photometry.blur_sigma, 0.8),
                                       "noise_sigma": min(photometry.noise_sigma, 2.5),
                                       "jpeg_quality": 100})
    renderer = Renderer(camera, rng, photometry, boards=script.boards)
    out.mkdir(parents=True, exist_ok=True)
    setup = {"t": 0.0, "type": "setup", "game": game, "players": script.players,
             "settings": script.settings}
    observations = [setup, *script.clip.observations]
    _write_jsonl(out / "observations.jsonl", observations)
    _write_jsonl(out / "manual.jsonl", [o for o in observations if o["type"] == "declare"])
    rulings = [r.to_json() for r in adjudicate_lines(
        (json.dumps(o) for o in observations), game=None, players=None, settings={})]
    _write_jsonl(out / "rulings.jsonl", rulings)
    truths: list[dict[str, Any]] = []
    frames = script.clip.frames
    writer = imageio_ffmpeg.write_frames(
        str(out / "video.mp4"), size, fps=fps, codec="libx264", quality=None,
        output_params=["-crf", str(crf), "-preset", "medium", "-pix_fmt", "yuv420p"],
        macro_block_size=1)
    writer.send(None)
    step = max(1, round(fps))
    for index, scene in enumerate(tqdm(frames, desc=f"{game} seed {seed}", unit="frame",
                                       disable=not progress, file=sys.stderr)):
        image, truth = renderer.render(scene)
        writer.send(np.ascontiguousarray(cv2.cvtColor(image, cv2.COLOR_BGR2RGB)))
        if index % step == 0:
            truths.append({"frame": index, "t": round(index / fps, 3),
                           "objects": [asdict(o) for o in truth.objects],
                           "hands_px": truth.hands_px})
    writer.close()
    save_calibration(calibration_of(camera, script, renderer.board_truth,
                                    card_mm or CARD_MM), out / "calibration.json")
    _write_jsonl(out / "truth.jsonl", truths)
    summary = {"game": game, "seed": seed, "deck": deck, "frames": len(frames),
               "seconds": round(len(frames) / fps, 2), "observations": len(observations) - 1,
               "rulings": len(rulings), "size": list(size), "fps": fps,
               "card_mm": list(card_mm or CARD_MM) if game in CARD_GAMES else None}
    (out / "clip.json").write_text(json.dumps(summary, indent=1))
    return summary


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", required=True, choices=sorted(SCRIPTS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--split", default="val", choices=["train", "val", "test"])
    parser.add_argument("--width", type=int, default=960)
    parser.add_argument("--height", type=int, default=540)
    parser.add_argument("--fps", type=float, default=15.0,
                        help="frames per second (webcams film at 15 to 30)")
    parser.add_argument("--card-mm", type=card_size,
                        help="the cards' width and length, WxL mm (default 63x88)")
    args = parser.parse_args(argv)
    if args.card_mm is not None and args.game not in CARD_GAMES:
        parser.error(f"{args.game} is played without cards: --card-mm is for card games")
    summary = make_clip(args.game, args.seed, args.out, split=args.split,
                        size=(args.width, args.height), fps=args.fps, card_mm=args.card_mm)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
