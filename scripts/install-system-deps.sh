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
  mate-backgrounds        # wood and cloth photos for table surfaces; photos printed matter shows
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
# pypi/NAME==VERSION), where the renderer finds it (synth/artwork.py, FILE_DECKS; these decks
# are training designs, so the renderer cannot export without them). Pinned versions, each
# marked .complete once whole and skipped from then on; one that cannot be fetched or
# unpacked is named, the others are still installed, and the script fails at the end.
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
ART_SUDO=""  # root only where the artwork folder needs it
mkdir -p "$ART_DIR" 2>/dev/null || true
[ -w "$ART_DIR" ] || ART_SUDO="$SUDO"
failed=()
# fetch_npm SPEC BUNDLE WORK and fetch_pypi SPEC FOLDER WORK unpack into WORK/unpacked as
# the calling user; install_art moves that into place.
fetch_npm() {
  command -v npm >/dev/null && command -v node >/dev/null || return 1
  (cd "$3" && npm pack --silent "$1" >/dev/null) || return 1
  mkdir -p "$3/unpacked"
  tar xzf "$3"/*.tgz -C "$3/unpacked" --strip-components=1 --no-same-owner || return 1
  if [ "$2" != "-" ]; then
    node "$HERE/react-svg-cards.mjs" "$3/unpacked/$2" "$3/unpacked/svg" >/dev/null || return 1
  fi
}
fetch_pypi() {
  python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$3/dl" "$1" \
    >/dev/null 2>&1 || return 1
  python3 "$HERE/unpack-folder.py" "$3"/dl/* "$2" "$3/unpacked" || return 1
}
install_art() {  # KIND SPEC ARG DEST
  [ -f "$4/.complete" ] && return 0
  echo "installing card artwork $2 ($1)" >&2
  local work
  work="$(mktemp -d)"
  if "fetch_$1" "$2" "$3" "$work" \
      && $ART_SUDO rm -rf "$4" && $ART_SUDO mkdir -p "$(dirname "$4")" \
      && $ART_SUDO cp -r "$work/unpacked" "$4" && $ART_SUDO touch "$4/.complete"; then
    rm -rf "$work"
  else
    rm -rf "$work"
    echo "error: card artwork $2 ($1) could not be installed" >&2
    failed+=("$2")
  fi
}
for entry in "${NPM_DECKS[@]}"; do
  read -r spec bundle <<<"$entry"
  install_art npm "$spec" "$bundle" "$ART_DIR/npm/${spec//\//__}"
done
for entry in "${PYPI_DECKS[@]}"; do
  read -r spec folder <<<"$entry"
  install_art pypi "$spec" "$folder" "$ART_DIR/pypi/$spec"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "error: card artwork not installed: ${failed[*]} (needs the npm and PyPI registries," \
       "Node.js and npm); the renderer (synth/) cannot export training scenes without it" >&2
  exit 1
fi
