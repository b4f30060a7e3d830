"""Real playing-card artwork from Debian packages, rasterised once and cached.

Each deck is one SVG holding every card as an element. Inkscape gives each element's
bounding box; the page is rendered once and the cards are cropped from it, which works for
decks whose cards are built from shared symbols (element-only export does not).
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from referee.cards import STANDARD_DECK, Card

CARD_W_MM: Final = 63.0
CARD_H_MM: Final = 88.0
#: Pixels per millimetre of the cached card rasters (a card is 252 x 352 px).
ART_PX_PER_MM: Final = 4.0

AISLERIOT_DIR: Final = Path("/usr/share/aisleriot/cards")
KDE_DIR: Final = Path("/usr/share/carddecks")
_RANK_WORDS: Final = {1: "1", 11: "jack", 12: "queen", 13: "king"}
_SUIT_WORDS: Final = {"C": "club", "D": "diamond", "H": "heart", "S": "spade"}

Image = npt.NDArray[np.uint8]


class ArtworkError(RuntimeError):
    """Card artwork that is missing or cannot be rasterised."""


@dataclass(frozen=True)
class DeckSource:
    """One deck design: ``name`` like ``aisleriot:anglo_poker`` or ``kde:svg-standard``."""

    name: str
    svg: Path
    style: str  # "aisleriot" (heart_king) or "kde" (king_heart)

    def element_id(self, code: str) -> str:
        if code == "back":
            return "back"
        if code == "JK":
            return "joker_red" if self.style == "aisleriot" else "red_joker"
        card = Card.parse(code)
        assert card.suit is not None
        rank = _RANK_WORDS.get(card.rank, str(card.rank))
        suit = _SUIT_WORDS[card.suit]
        return f"{suit}_{rank}" if self.style == "aisleriot" else f"{rank}_{suit}"


def installed_decks() -> dict[str, DeckSource]:
    """Every deck design installed on this machine, by name."""
    decks: dict[str, DeckSource] = {}
    for svg in sorted(AISLERIOT_DIR.glob("*.svgz")):
        decks[f"aisleriot:{svg.stem}"] = DeckSource(f"aisleriot:{svg.stem}", svg, "aisleriot")
    for folder in sorted(KDE_DIR.glob("svg-*")):
        for svg in sorted(folder.glob("*.svgz")):
            decks[f"kde:{folder.name}"] = DeckSource(f"kde:{folder.name}", svg, "kde")
    return decks


def cache_dir() -> Path:
    root = os.environ.get("TABLETOP_CACHE") or Path.home() / ".cache" / "tabletop-referee"
    return Path(root) / "cards"


def _inkscape() -> str:
    found = shutil.which("inkscape")
    if found is None:
        raise ArtworkError("inkscape is not installed: run scripts/install-system-deps.sh")
    return found


def _query_boxes(svg: Path) -> dict[str, tuple[float, float, float, float]]:
    done = subprocess.run([_inkscape(), "--query-all", str(svg)], capture_output=True,
                          text=True, check=False)
    boxes: dict[str, tuple[float, float, float, float]] = {}
    for line in done.stdout.splitlines():
        parts = line.split(",")
        if len(parts) == 5:
            try:
                boxes[parts[0]] = (float(parts[1]), float(parts[2]), float(parts[3]),
                                   float(parts[4]))
            except ValueError:
                continue
    return boxes


def rasterise_deck(deck: DeckSource, codes: list[str] | None = None) -> dict[str, Path]:
    """PNG paths (RGBA, 252 x 352 px) for the deck's cards, rendering them if not cached."""
    wanted = codes or [*(str(c) for c in STANDARD_DECK), "JK", "back"]
    folder = cache_dir() / deck.name.replace(":", "__")
    paths = {code: folder / f"{code}.png" for code in wanted}
    done = folder / ".complete"  # some decks lack a joker or a back: don't retry those
    if done.exists() or all(p.exists() for p in paths.values()):
        return {code: path for code, path in paths.items() if path.exists()}
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        svg = Path(tmp) / "deck.svg"
        svg.write_bytes(gzip.decompress(deck.svg.read_bytes()))
        boxes = _query_boxes(svg)
        heights = [boxes[deck.element_id(c)][3] for c in wanted if deck.element_id(c) in boxes]
        if not heights:
            raise ArtworkError(f"{deck.name}: no card elements found")
        scale = CARD_H_MM * ART_PX_PER_MM / float(np.median(heights))
        page = Path(tmp) / "page.png"
        subprocess.run([_inkscape(), str(svg), "--export-type=png", "--export-area-page",
                        f"--export-dpi={96 * scale:.3f}", f"--export-filename={page}"],
                       capture_output=True, check=True)
        sheet = cv2.imread(str(page), cv2.IMREAD_UNCHANGED)
        if sheet is None or sheet.ndim != 3 or sheet.shape[2] != 4:
            raise ArtworkError(f"{deck.name}: inkscape produced no RGBA page")
        for code in wanted:
            box = boxes.get(deck.element_id(code))
            if box is None:
                continue
            x, y, w, h = (round(v * scale) for v in box)
            crop = sheet[max(y, 0):y + h, max(x, 0):x + w]
            if crop.size == 0:
                continue
            size = (round(CARD_W_MM * ART_PX_PER_MM), round(CARD_H_MM * ART_PX_PER_MM))
            card = cv2.resize(crop, size, interpolation=cv2.INTER_AREA)
            cv2.imwrite(str(paths[code]), card)
    if codes is None:
        done.touch()
    return {code: path for code, path in paths.items() if path.exists()}


def load_card(path: Path) -> Image:
    image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if image is None:
        raise ArtworkError(f"cannot read card artwork {path}")
    return np.asarray(image, dtype=np.uint8)
