"""The ``referee calibrate`` command's work: read frames, calibrate the best one, write the
calibration and its preview (each whole, or not at all), and say what was done."""

from __future__ import annotations

from pathlib import Path

import cv2

from referee.calibration.errors import CalibrationError
from referee.calibration.layouts import layout_for_game, load_layout
from referee.calibration.model import (
    card_size_problem,
    load_calibration,
    save_calibration,
    write_atomically,
)
from referee.calibration.pipeline import (
    CalibrationOptions,
    CalibrationResult,
    calibrate_frame,
)
from referee.calibration.sources import read_frames
from referee.cards import CARD_MM


def run_calibration(source: str, out: Path, preview: Path, *, game: str | None = None,
                    layout_file: str | None = None, lens_file: str | None = None,
                    plane_file: str | None = None, max_error_mm: float = 1.0,
                    board_correction: tuple[float, float, float] = (0.0, 0.0, 0.0),
                    max_frames: int = 30, card_mm: tuple[float, float] | None = None) -> str:
    """``card_mm``: the cards' size; by default the ``plane_file``'s, else 63 x 88 mm."""
    problem = card_size_problem(card_mm) if card_mm is not None else None
    if problem:
        raise CalibrationError(f"the card size {problem}")
    if layout_file is not None:
        layout = load_layout(Path(layout_file))
    elif game is not None:
        layout = layout_for_game(game)
    else:
        layout = None
    lens = load_calibration(Path(lens_file)).lens if lens_file else None
    if lens_file and lens is None:
        raise CalibrationError(f"{lens_file} has no lens calibration")
    plane = load_calibration(Path(plane_file)) if plane_file else None
    if card_mm is None:
        card_mm = plane.card_mm if plane is not None else CARD_MM
    options = CalibrationOptions(game=game, layout=layout, lens=lens, plane=plane,
                                 max_error_mm=max_error_mm, board_correction=board_correction,
                                 source=source)
    best: CalibrationResult | None = None
    first_error: CalibrationError | None = None
    for frame in read_frames(source, max_frames):
        try:
            result = calibrate_frame(frame, options)
        except CalibrationError as error:
            first_error = first_error or error
            continue
        if best is None or result.calibration.error_mm < best.calibration.error_mm:
            best = result
    if best is None:
        raise first_error or CalibrationError(f"{source} gave no usable frame")
    calibration = best.calibration.model_copy(update={"card_mm": card_mm})
    ok, png = cv2.imencode(".png", best.preview)
    if not ok:
        raise CalibrationError("could not encode the preview image")
    for path in (out, preview):
        if not path.parent.exists():
            raise CalibrationError(f"folder {path.parent} does not exist")
    # Both files or neither: the preview first, taken back if the calibration cannot be
    # written (a calibration without its preview is still usable; the reverse is not).
    try:
        write_atomically(preview, png.tobytes())
    except OSError as error:
        raise CalibrationError(f"cannot write {preview}: {error.strerror or error}") from None
    try:
        save_calibration(calibration, out)
    except OSError as error:
        preview.unlink(missing_ok=True)
        raise CalibrationError(f"cannot write {out}: {error.strerror or error}") from None
    cal = calibration
    corrected = "lens corrected" if cal.camera_matrix is not None else "no lens correction"
    parts = [f"calibrated {cal.frame} frame: error {cal.error_mm:.2f} mm RMS over "
             f"{cal.corner_count} corners, {corrected}"]
    if cal.board is not None:
        parts.append(f"{cal.board.kind} board found, {len(cal.board.lines)} lines, pitch "
                     f"{cal.board.pitch_mm:.2f} mm, fit {cal.board.residual_mm:.2f} mm")
    if cal.card_mm != CARD_MM:
        parts.append(f"cards {cal.card_mm[0]:g} x {cal.card_mm[1]:g} mm")
    parts += list(best.notes)
    parts.append(f"wrote {out} and {preview}")
    return "; ".join(parts)
