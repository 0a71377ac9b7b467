#!/usr/bin/env bash
# Make .venv (if missing) and install hrr editable with its test extra (pytest, ruff, mypy).
# Used by scripts/test.sh and .ci/run.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv || exit 1
fi
.venv/bin/python -m pip install --disable-pip-version-check -q -e '.[test,cuda]' || exit 1
