"""Writing the marker sheets: a PNG per sheet (with its DPI) and one PDF of all pages."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image as PILImage

from referee.calibration.errors import CalibrationError
from referee.calibration.model import write_atomically
from referee.calibration.sheet import DEFAULT_DESIGN, Paper, SheetDesign, render_page


def write_marker_sheets(out_dir: Path, paper: Paper, sheets: int, dpi: int = 300,
                        design: SheetDesign = DEFAULT_DESIGN) -> list[Path]:
    if sheets > design.max_sheets:
        raise CalibrationError(f"at most {design.max_sheets} sheets")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CalibrationError(f"cannot create {out_dir}: {error.strerror}") from None
    pages = [PILImage.fromarray(render_page(design, i, paper, dpi, sheets).image, mode="L")
             for i in range(sheets)]
    written = []
    pdf = io.BytesIO()
    pages[0].save(pdf, format="PDF", resolution=float(dpi), save_all=True,
                  append_images=pages[1:])
    pdf_path = out_dir / f"markers-{paper}.pdf"
    write_atomically(pdf_path, pdf.getvalue())
    written.append(pdf_path)
    for i, page in enumerate(pages):
        png = io.BytesIO()
        page.save(png, format="PNG", dpi=(dpi, dpi))
        path = out_dir / f"markers-{paper}-{i + 1}.png"
        write_atomically(path, png.getvalue())
        written.append(path)
    return written
