"""Which deck designs train the models, which validate them, and which are held out.

Held-out designs never enter a training set: accuracy on them is the honest figure for a
deck the referee has never seen. Whole design families stay on one side of the split.
"""

from __future__ import annotations

from typing import Final, Literal

Split = Literal["train", "val", "test"]

SPLITS: Final[dict[str, Split]] = {
    # held out (test only): a classic US-style deck, German-style and cartoon faces
    "kde:svg-standard": "test",
    "aisleriot:berlin": "test",
    "aisleriot:rheinland": "test",
    "aisleriot:tango_nuevo": "test",
    "kde:svg-penguins": "test",
    # validation
    "aisleriot:tango": "val",
    "aisleriot:simplistic": "val",
    "kde:svg-jolly-royal": "val",
    "aisleriot:neoclassical_4_color": "val",
    # training
    "aisleriot:ancient_french": "train",
    "aisleriot:anglo": "train",
    "aisleriot:anglo_modern": "train",
    "aisleriot:anglo_modern_4_color": "train",
    "aisleriot:anglo_poker": "train",
    "aisleriot:atlasnye": "train",
    "aisleriot:atlasnye_skat": "train",
    "aisleriot:bellot": "train",
    "aisleriot:dondorf": "train",
    "aisleriot:gnomangelo": "train",
    "aisleriot:guyenne-classic": "train",
    "aisleriot:lattmann": "train",
    "aisleriot:neoclassical": "train",
    "aisleriot:orell": "train",
    "aisleriot:ornamental": "train",
    "aisleriot:paris": "train",
    "aisleriot:plastic": "train",
    "aisleriot:tarocco": "train",
    "aisleriot:tigullio": "train",
    "kde:svg-ancient-egyptians": "train",
    "kde:svg-dondorf": "train",
    "kde:svg-gm-paris": "train",
    "kde:svg-konqi-modern": "train",
    "kde:svg-nicu-ornamental": "train",
    "kde:svg-xskat-french": "train",
    # one picture per card, from npm and PyPI packages (scripts/install-system-deps.sh;
    # synth/artwork.py FILE_DECKS), since session 18
    "npm:letele": "train",
    "npm:react-casino": "train",
    "npm:aguilar": "train",
    "pypi:knoll": "train",
    "pypi:pypokergui": "train",
    "pypi:kenney": "train",
}

#: Installed but not used, and why.
EXCLUDED: Final[dict[str, str]] = {
    "aisleriot:anglo_bitmap": "bitmap copy of anglo",
    "aisleriot:gnomangelo_bitmap": "bitmap copy of gnomangelo",
    "aisleriot:swiss-xvii": "Swiss suits (acorns, shields), not a French-suited deck",
    "aisleriot:slavic_costumes": "Cyrillic indices",
    "aisleriot:Атласные": "Cyrillic indices",
    "kde:svg-future": "abstract artwork without rank and suit indices",
    "kde:svg-nicu-white": "near copy of svg-nicu-ornamental",
    "kde:svg-tigullio-international": "cards are not separate SVG elements",
    "kde:svg-xskat-german": "German suits",
    # The referee reads the top-left and bottom-right corners (crops.index_crops); these
    # three put the rank top right and the suit bottom left, so their crops show bare pips.
    "kde:svg-oxygen": "rank top right, suit bottom left: no index where the referee reads",
    "kde:svg-oxygen-air": "rank top right, suit bottom left",
    "kde:svg-oxygen-white": "rank top right, suit bottom left",
}


#: Procedural designs (synth/procedural.py) that train alongside the packaged ones: many more
#: index typefaces, sizes, layouts and court letters than the packages have.
PROCEDURAL_TRAIN: Final = 96
SPLITS.update({f"proc:{i:02d}": "train" for i in range(PROCEDURAL_TRAIN)})


def decks_for(split: Split) -> list[str]:
    return [name for name, side in SPLITS.items() if side == split]
