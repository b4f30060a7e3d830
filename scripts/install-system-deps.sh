#!/usr/bin/env bash
# System packages the renderer (card artwork, fonts, table textures) needs. Idempotent:
# installs only what is missing. Needs root (or sudo) and Debian's package archive.
set -euo pipefail
PACKAGES=(
  gnome-cards-data        # aisleriot's card decks (SVG)
  kdegames-card-data-kf5  # KDE's card decks (SVG)
  inkscape                # card bounding boxes and page rasterising (synth/artwork.py)
  librsvg2-bin            # rsvg-convert: rasterise SVG artwork
  fonts-symbola           # piecepack suit glyphs
  fonts-dejavu-core       # labels
  mate-backgrounds        # wood and cloth photos for table surfaces
  gnome-backgrounds
  gimp-data               # texture patterns
  # typefaces of the procedural deck designs (synth/procedural.py picks from fc-list, so
  # this set is what the shipped model was trained with)
  fonts-urw-base35 fonts-liberation2 fonts-freefont-ttf fonts-texgyre fonts-roboto-unhinted
  fonts-lato fonts-open-sans fonts-linuxlibertine fonts-ebgaramond fonts-cantarell
  fonts-comic-neue fonts-dejavu-extra fonts-noto-core fonts-oflb-asana-math
  fonts-crosextra-carlito fonts-crosextra-caladea fonts-inconsolata fonts-play
  fonts-adf-accanthis fonts-adf-gillius fonts-adf-universalis
  chromium                # headless browser for the dashboard's end-to-end test
)
missing=()
for package in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$package")
done
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing system packages: ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Card artwork from npm and PyPI packages, unpacked under $TABLETOP_ART_DIR (npm/NAME@VERSION,
# pypi/NAME==VERSION), where the renderer finds it (synth/artwork.py, FILE_DECKS). Pinned
# versions; each skipped when already there, or (with a warning) when npm, node or pip
# cannot fetch it, since only the renderer needs it.
ART_DIR="${TABLETOP_ART_DIR:-/usr/local/share/tabletop-referee}"
NPM_DECKS=(  # package@version, and the React bundle to write out as SVG files (or -)
  "@letele/playing-cards@0.1.0 dist/index.esm.js"  # Adrian Kennard's me.uk deck, CC0
  "react-casino@0.2.6 -"                            # a Bicycle-style deck, PNG
  "@younestouati/playing-cards-standard-deck@3.0.0 -"  # Chris Aguilar's, LGPL-3.0, SVG
)
PYPI_DECKS=(  # name==version, and the folder of card pictures in it
  "blackjack-gui==1.8.1 blackjack_gui/images"  # Byron Knoll's (public domain)
  "PyPokerGUI==0.0.7 pypokergui/server/static/images"
  "arcade==3.3.3 arcade/resources/assets/images/cards"  # Kenney's (CC0)
)
HERE="$(cd "$(dirname "$0")" && pwd)"
for entry in "${NPM_DECKS[@]}"; do
  read -r spec bundle <<<"$entry"
  dest="$ART_DIR/npm/${spec//\//__}"
  [ -f "$dest/.complete" ] && continue
  if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
    echo "warning: npm or node missing, card artwork $spec not installed" >&2
    continue
  fi
  echo "installing card artwork $spec (npm)" >&2
  work="$(mktemp -d)"
  if (cd "$work" && npm pack --silent "$spec" >/dev/null); then
    $SUDO mkdir -p "$dest"
    $SUDO tar xzf "$work"/*.tgz -C "$dest" --strip-components=1
    if [ "$bundle" != "-" ]; then
      $SUDO node "$HERE/react-svg-cards.mjs" "$dest/$bundle" "$dest/svg" >/dev/null
    fi
    $SUDO touch "$dest/.complete"
  else
    echo "warning: npm could not fetch $spec" >&2
  fi
  rm -rf "$work"
done
for entry in "${PYPI_DECKS[@]}"; do
  read -r spec folder <<<"$entry"
  dest="$ART_DIR/pypi/$spec"
  [ -f "$dest/.complete" ] && continue
  echo "installing card artwork $spec (PyPI)" >&2
  work="$(mktemp -d)"
  if python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$work" "$spec" \
      >/dev/null 2>&1; then
    $SUDO python3 "$HERE/unpack-folder.py" "$work"/* "$folder" "$dest"
    $SUDO touch "$dest/.complete"
  else
    echo "warning: pip could not fetch $spec" >&2
  fi
  rm -rf "$work"
done
