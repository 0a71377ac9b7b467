#!/usr/bin/env bash
# The main job, end to end on the sim backend: capture the bundled example app, then
# replay the archive with --strict and print the summary.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install --disable-pip-version-check -q -e .
archive="${1:-out/serving-step.hrr}"
rm -rf "$archive"
mkdir -p "$(dirname "$archive")"
echo "== hrr capture (sim backend, content mode) =="
.venv/bin/hrr capture -o "$archive" --backend sim --content -- python examples/serving_step.py
echo "== hrr info =="
.venv/bin/hrr info "$archive"
echo "== hrr replay --strict =="
.venv/bin/hrr replay "$archive" --strict
