#!/usr/bin/env bash
# The whole test suite with its static checks. README and .ci/run both use this script.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'
python3 -m ruff check referee tests bench
python3 -m mypy referee
python3 -m pytest "$@"
