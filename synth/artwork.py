"""Real playing-card artwork from Debian, npm and PyPI packages, rasterised once and cached.

A Debian deck (aisleriot, KDE) is one SVG holding every card as an element. Inkscape gives
each element's bounding box; the page is rendered once and the cards are cropped from it,
which works for decks whose cards are built from shared symbols (element-only export does
not). An npm or PyPI deck is a folder of one picture per card (``scripts/install-system-deps.sh``
unpacks it), an SVG rendered by rsvg-convert or a PNG.
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
#: Where scripts/install-system-deps.sh unpacks card artwork from npm and PyPI packages.
ART_DIR: Final = Path(os.environ.get("TABLETOP_ART_DIR", "/usr/local/share/tabletop-referee"))


@dataclass(frozen=True)
class FileNaming:
    """How a package that ships one picture (SVG or PNG) per card names its files:
    ``pattern`` with ``{rank}`` and ``{suit}`` from ``ranks`` (A, 2-10, J, Q, K) and
    ``suits`` (C, D, H, S); ``special`` names files by code (joker, back, or cards the
    package draws twice, such as a picture court beside a plain one)."""

    folder: str  # under ART_DIR: the package's folder (npm/NAME@VERSION), then the cards'
    pattern: str
    ranks: tuple[str, ...]
    suits: tuple[str, str, str, str]
    special: tuple[tuple[str, str], ...] = ()

    @property
    def package(self) -> str:
        """The package's folder under ART_DIR (where the installer's ``.complete`` lies)."""
        return "/".join(Path(self.folder).parts[:2])

    def file(self, code: str) -> str:
        named = dict(self.special)
        if code in named:
            return named[code]
        if code in ("JK", "back"):
            return ""  # the package has none
        card = Card.parse(code)
        assert card.suit is not None
        return self.pattern.format(rank=self.ranks[card.rank - 1],
                                   suit=self.suits["CDHS".index(card.suit)])


_LETTERS: Final = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K")
_NUMBERS: Final = tuple(str(r) for r in range(1, 14))

#: Decks shipped one file per card by npm and PyPI packages (installed by
#: scripts/install-system-deps.sh under ART_DIR/npm and ART_DIR/pypi).
FILE_DECKS: Final[dict[str, FileNaming]] = {
    # Adrian Kennard's me.uk deck (CC0), React components written out as SVG files
    "npm:letele": FileNaming(
        "npm/@letele__playing-cards@0.1.0/svg", "{suit}{rank}.svg",
        ("a", *_NUMBERS[1:10], "j", "q", "k"), ("C", "D", "H", "S"),
        (("JK", "J1.svg"), ("back", "B1.svg"))),
    # A Bicycle-style deck (the package is MIT; it does not say where the pictures are from);
    # bridge-sized pictures (691 x 1056), stretched to a poker card like every design
    "npm:react-casino": FileNaming(
        "npm/react-casino@0.2.6/dist/assets/png/cards", "{rank}{suit}.png", _LETTERS,
        ("C", "D", "H", "S"), (("back", "BACK.png"),)),
    # Chris Aguilar's Vectorized Playing Cards 1.3 (LGPL-3.0), hand-optimised
    "npm:aguilar": FileNaming(
        "npm/@younestouati__playing-cards-standard-deck@3.0.0/cards", "{rank}{suit}.svg",
        _NUMBERS, ("c", "d", "h", "s"), (("JK", "joker.svg"), ("back", "back.svg"))),
    # Byron Knoll's Vector Playing Cards (public domain), with its picture courts and ornate
    # ace of spades (the files ending in 2)
    "pypi:knoll": FileNaming(
        "pypi/blackjack-gui==1.8.1/blackjack_gui/images", "{rank}_of_{suit}.png",
        ("ace", *_NUMBERS[1:10], "jack", "queen", "king"),
        ("clubs", "diamonds", "hearts", "spades"),
        (("JK", "red_joker.png"), ("back", "back.png"), ("AS", "ace_of_spades2.png"),
         *((f"{r}{s}", f"{word}_of_{suit}2.png")
           for r, word in (("J", "jack"), ("Q", "queen"), ("K", "king"))
           for s, suit in (("C", "clubs"), ("D", "diamonds"), ("H", "hearts"),
                           ("S", "spades"))))),
    # PyPokerGUI's deck (MIT; its own court pictures)
    "pypi:pypokergui": FileNaming(
        "pypi/PyPokerGUI==0.0.7/pypokergui/server/static/images", "card_{suit}{rank}.png",
        _LETTERS, ("C", "D", "H", "S")),
    # Kenney's flat deck (CC0) in the arcade game library: 140 x 190 pictures
    "pypi:kenney": FileNaming(
        "pypi/arcade==3.3.3/arcade/resources/assets/images/cards", "card{suit}{rank}.png",
        ("A", *_NUMBERS[1:10], "J", "Q", "K"), ("Clubs", "Diamonds", "Hearts", "Spades"),
        (("JK", "cardJoker.png"), ("back", "cardBack_blue2.png"))),
}
_RANK_WORDS: Final = {1: "1", 11: "jack", 12: "queen", 13: "king"}
_SUIT_WORDS: Final = {"C": "club", "D": "diamond", "H": "heart", "S": "spade"}

Image = npt.NDArray[np.uint8]


class ArtworkError(RuntimeError):
    """Card artwork that is missing or cannot be rasterised."""


@dataclass(frozen=True)
class DeckSource:
    """One deck design: ``name`` like ``aisleriot:anglo_poker`` or ``kde:svg-standard``."""

    name: str
    svg: Path  # the deck's SVG, or the folder of a deck of one file per card
    style: str  # "aisleriot" (heart_king), "kde" (king_heart) or "files"
    files: FileNaming | None = None

    def element_id(self, code: str) -> str:
        if self.files is not None:
            return self.files.file(code)
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
    for name, naming in FILE_DECKS.items():
        folder = ART_DIR / naming.folder
        if (ART_DIR / naming.package / ".complete").exists() and folder.is_dir():
            decks[name] = DeckSource(name, folder, "files", naming)
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
    if deck.files is not None:  # a new pinned version is rasterised afresh
        folder = folder.with_name(f"{folder.name}__{Path(deck.files.package).name}")
    paths = {code: folder / f"{code}.png" for code in wanted}
    done = folder / ".complete"  # some decks lack a joker or a back: don't retry those
    if done.exists() or all(p.exists() for p in paths.values()):
        return {code: path for code, path in paths.items() if path.exists()}
    folder.mkdir(parents=True, exist_ok=True)
    if deck.files is not None:
        _rasterise_files(deck, deck.files, wanted, paths)
    else:
        _rasterise_sheet(deck, wanted, paths)
    if codes is None:
        done.touch()
    return {code: path for code, path in paths.items() if path.exists()}


def _card_size() -> tuple[int, int]:
    return round(CARD_W_MM * ART_PX_PER_MM), round(CARD_H_MM * ART_PX_PER_MM)


def _rasterise_files(deck: DeckSource, naming: FileNaming, wanted: list[str],
                     paths: dict[str, Path]) -> None:
    """One picture per card (SVG rendered by rsvg-convert, or PNG), cut to its opaque part
    and scaled to the card size. A code the package has no picture for (a joker, a back)
    is left out; a picture named but missing or unreadable is an error."""
    width, height = _card_size()
    rsvg = shutil.which("rsvg-convert")
    with tempfile.TemporaryDirectory() as tmp:
        for code in wanted:
            name = naming.file(code)
            if not name:
                continue
            source = deck.svg / name
            if not source.is_file():
                raise ArtworkError(f"{deck.name}: {source} is missing: "
                                   "run scripts/install-system-deps.sh")
            if source.suffix == ".svg":
                if rsvg is None:
                    raise ArtworkError("rsvg-convert is not installed: "
                                       "run scripts/install-system-deps.sh")
                rendered = Path(tmp) / "card.png"
                done = subprocess.run([rsvg, "-w", str(2 * width), "-o", str(rendered),
                                       str(source)], capture_output=True, check=False)
                if done.returncode != 0:
                    raise ArtworkError(f"{deck.name}: rsvg-convert cannot render {name}")
                source = rendered
            picture = cv2.imread(str(source), cv2.IMREAD_UNCHANGED)
            if picture is None or picture.ndim != 3:
                raise ArtworkError(f"{deck.name}: cannot read {name}")
            if picture.shape[2] == 3:
                picture = cv2.cvtColor(picture, cv2.COLOR_BGR2BGRA)
            ys, xs = np.nonzero(picture[..., 3] > 16)  # not the faint antialiased fringe
            if ys.size == 0:
                raise ArtworkError(f"{deck.name}: {name} is fully transparent")
            picture = picture[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
            card = cv2.resize(picture, (width, height), interpolation=cv2.INTER_AREA)
            cv2.imwrite(str(paths[code]), card)


def _rasterise_sheet(deck: DeckSource, wanted: list[str], paths: dict[str, Path]) -> None:
    """One SVG holding every card: the page rendered once, each card's box cropped."""
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
            card = cv2.resize(crop, _card_size(), interpolation=cv2.INTER_AREA)
            cv2.imwrite(str(paths[code]), card)


#: A picture whose opaque card lies this many pixels or more inside it on some side (a
#: drawn drop shadow, faint alpha, around the card: kde jolly-royal, ancient-egyptians) is
#: cut to the card, so the rendered card and its true outline are the paper's.
SHADOW_MIN_PX: Final = 2
#: Alpha above which a pixel is the card, not its shadow (shadows stay under 60).
OPAQUE_ALPHA: Final = 128


def opaque_card(image: Image) -> Image:
    """The picture cut to its opaque card and scaled back to its size, when a drawn shadow
    lies around the card; otherwise the picture itself."""
    if image.ndim != 3 or image.shape[2] != 4:
        return image
    rows = np.flatnonzero((image[..., 3] > OPAQUE_ALPHA).any(axis=1))
    cols = np.flatnonzero((image[..., 3] > OPAQUE_ALPHA).any(axis=0))
    if rows.size == 0 or cols.size == 0:
        return image
    height, width = image.shape[:2]
    margins = (rows[0], height - 1 - rows[-1], cols[0], width - 1 - cols[-1])
    if max(margins) < SHADOW_MIN_PX:
        return image
    card = image[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]
    return np.asarray(cv2.resize(card, (width, height), interpolation=cv2.INTER_AREA),
                      dtype=np.uint8)


def load_card(path: Path) -> Image:
    image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if image is None:
        raise ArtworkError(f"cannot read card artwork {path}")
    return opaque_card(np.asarray(image, dtype=np.uint8))
