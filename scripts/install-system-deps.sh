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
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "installing system packages: ${missing[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
