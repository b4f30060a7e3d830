#!/usr/bin/env bash
# The whole test suite with its static checks. README and .ci/run both use this script.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-system-deps.sh  # card artwork, fonts, textures (Debian packages)
python3 -m pip install --quiet --disable-pip-version-check -e '.[test,synth]'
python3 -m ruff check referee tests bench synth
python3 -m mypy referee
python3 -m pytest "$@"
