"""Card artwork from npm and PyPI packages: React bundles written out as SVG files, one
folder unpacked from an archive, each card's picture found by its code."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import numpy as np
import pytest

from referee.cards import STANDARD_DECK
from synth.artwork import FILE_DECKS, installed_decks, load_card, opaque_card, rasterise_deck
from synth.decks import SPLITS

ROOT = Path(__file__).resolve().parents[2]
CONVERTER = ROOT / "scripts" / "react-svg-cards.mjs"
UNPACK = ROOT / "scripts" / "unpack-folder.py"
CODES = [*(str(c) for c in STANDARD_DECK), "JK", "back"]

BUNDLE = """import _extends from '@babel/runtime/helpers/extends';
import * as React from 'react';

const SvgS10 = _ref => {
  let {
    title,
    titleId,
    ...props
  } = _ref;
  return /*#__PURE__*/React.createElement("svg", _extends({
    xmlns: "http://www.w3.org/2000/svg",
    xmlnsXlink: "http://www.w3.org/1999/xlink",
    className: "S-10_svg__card",
    viewBox: "-120 -168 240 336",
    width: 240,
    height: 336,
    "aria-labelledby": titleId
  }, props), title ? /*#__PURE__*/React.createElement("title", {
    id: titleId
  }, title) : null, /*#__PURE__*/React.createElement("rect", {
    width: 239,
    height: 335,
    x: -119.5,
    y: -167.5,
    fill: "#fff",
    strokeWidth: 2,
    stroke: "#000"
  }), /*#__PURE__*/React.createElement("text", {
    x: 0,
    y: 0
  }, "10 & <"));
};

export { SvgS10 as S10 };
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
def test_react_bundle_written_as_plain_svg(tmp_path: Path) -> None:
    bundle = tmp_path / "index.esm.js"
    bundle.write_text(BUNDLE)
    done = subprocess.run(["node", str(CONVERTER), str(bundle), str(tmp_path / "svg")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    files = sorted((tmp_path / "svg").iterdir())
    assert [f.name for f in files] == ["S10.svg"]
    root = ET.fromstring(files[0].read_text())
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == f"{ns}svg"
    assert root.get("viewBox") == "-120 -168 240 336"  # camelCase kept where SVG wants it
    assert root.get("class") == "S-10_svg__card"
    text = files[0].read_text()
    assert text.count("xmlns:xlink=") == 1 and "xmlns-xlink" not in text
    assert root.get("aria-labelledby") is None
    rect = root.find(f"{ns}rect")
    assert rect is not None and rect.get("stroke-width") == "2"  # kebab-case elsewhere
    label = root.find(f"{ns}text")
    assert label is not None and label.text == "10 & <"  # escaped on the way out


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
def test_bundle_without_components_is_an_error(tmp_path: Path) -> None:
    bundle = tmp_path / "index.esm.js"
    bundle.write_text("export { };\n")
    done = subprocess.run(["node", str(CONVERTER), str(bundle), str(tmp_path / "svg")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert "no SVG components" in done.stderr


def test_file_names_by_code() -> None:
    named = {deck: {code: FILE_DECKS[deck].file(code) for code in CODES}
             for deck in ("npm:letele", "npm:aguilar", "pypi:knoll", "pypi:kenney")}
    assert [named["npm:letele"][c] for c in ("AS", "KH", "TD", "2C", "JK", "back")] == [
        "Sa.svg", "Hk.svg", "D10.svg", "C2.svg", "J1.svg", "B1.svg"]
    assert [named["npm:aguilar"][c] for c in ("AS", "QD", "TH")] == [
        "1s.svg", "12d.svg", "10h.svg"]
    # the picture courts and the ornate ace, not the plain ones the package also ships
    assert [named["pypi:knoll"][c] for c in ("JC", "KH", "AS", "AH", "9S")] == [
        "jack_of_clubs2.png", "king_of_hearts2.png", "ace_of_spades2.png",
        "ace_of_hearts.png", "9_of_spades.png"]
    assert named["pypi:kenney"]["TC"] == "cardClubs10.png"
    assert FILE_DECKS["npm:react-casino"].file("TS") == "TS.png"
    assert FILE_DECKS["pypi:pypokergui"].file("AH") == "card_HA.png"
    for deck, naming in FILE_DECKS.items():
        present = [f for f in (naming.file(code) for code in CODES) if f]
        assert len(set(present)) == len(present), deck


def test_procedural_designs_cut_courts_from_debian_designs_only() -> None:
    """Whatever else is installed, so that the recipes draw what they drew."""
    from synth.procedural import DEBIAN_DECK_PREFIXES, _court_decks

    courts = _court_decks()
    assert courts and all(d.startswith(DEBIAN_DECK_PREFIXES) for d in courts)
    assert not set(courts) & set(FILE_DECKS)


def test_every_file_deck_in_a_split_is_installed_whole() -> None:
    """scripts/install-system-deps.sh installs them; each has its 52 cards, scaled to the
    card size, and the joker and back its package ships."""
    installed = installed_decks()
    assert set(FILE_DECKS) <= set(SPLITS)
    missing = [name for name in FILE_DECKS if name not in installed]
    if missing:
        pytest.skip(f"not installed (run scripts/install-system-deps.sh): {missing}")
    for name, naming in FILE_DECKS.items():
        paths = rasterise_deck(installed[name])
        expected = [c for c in CODES if naming.file(c)]
        assert sorted(paths) == sorted(expected), name
        for code in ("QH", "7D", "7S", "KC"):
            card = load_card(paths[code])
            assert card.shape == (352, 252, 4)
            assert card[176, 126, 3] == 255  # opaque in the middle
            ink = card[..., :3].reshape(-1, 3).astype(int)
            red = (ink[:, 2] - ink[:, 1] > 100).mean()
            # red ink on hearts and diamonds; on spades and clubs (courts aside) none
            if code[1] in "HD":
                assert red > 0.01, (name, code)
            elif code[0] == "7":
                assert red < 0.001, (name, code)


def _archives(tmp_path: Path) -> list[Path]:
    files = {"pkg/cards/AS.png": b"ace", "pkg/cards/KH.png": b"king",
             "pkg/cards/more/x.png": b"deeper", "pkg/other.py": b"code"}
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    sdist = tmp_path / "pkg-1.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as t:
        for name, data in files.items():
            info = tarfile.TarInfo(f"pkg-1.0/{name}")
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return [wheel, sdist]


def test_one_folder_unpacked_from_a_wheel_or_source_archive(tmp_path: Path) -> None:
    for archive in _archives(tmp_path):
        dest = tmp_path / f"out-{archive.suffix}"
        done = subprocess.run([sys.executable, str(UNPACK), str(archive), "pkg/cards",
                               str(dest)], capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        written = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file())
        assert written == ["pkg/cards/AS.png", "pkg/cards/KH.png"]
        assert (dest / "pkg/cards/KH.png").read_bytes() == b"king"
        done = subprocess.run([sys.executable, str(UNPACK), str(archive), "pkg/none",
                               str(tmp_path / "none")], capture_output=True, text=True,
                              check=False)
        assert done.returncode == 1 and "nothing under pkg/none" in done.stderr


def test_a_drawn_drop_shadow_is_cut_off_the_card() -> None:
    """kde jolly-royal draws a faint shadow 3-9 px wide around its cards: the card the
    renderer draws (and whose outline is the truth) is the opaque paper, scaled back."""
    picture = np.zeros((352, 252, 4), np.uint8)
    picture[..., 3] = 30  # the shadow
    picture[4:344, 9:249] = (200, 200, 200, 255)  # the card, left 9 px, bottom 8 px in
    picture[4:20, 9:30, :3] = 0  # a dark mark in the card's top-left corner
    card = opaque_card(picture)
    assert card.shape == picture.shape
    assert (card[..., 3] > 128).all()
    assert card[2, 2, 0] == 0 and card[-3, -3, 0] == 200  # the mark moved onto the corner
    # a card with no shadow (opaque up to a pixel from its edge) is left as it is
    plain = picture[4:344, 9:249].copy()
    plain[0, :, 3] = 90
    assert opaque_card(plain) is plain
