#!/usr/bin/env bash
# The benchmark (issue 11): figures measured side by side in one run, written to
# bench/results.json. `bash scripts/bench.sh --quick` takes a few minutes on 2 cores;
# `--backend cuda` adds the two GPU ratios. Extra arguments go to bench/bench.py.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
[ -x "$PY" ] || PY=python3
exec "$PY" bench/bench.py "$@"
