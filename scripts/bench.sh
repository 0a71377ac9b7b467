#!/usr/bin/env bash
# The benchmark (issue 11): figures measured side by side in one run, written to
# bench/results.json. `bash scripts/bench.sh --quick` takes a few minutes on 2 cores;
# `--backend cuda` adds the two GPU ratios. Extra arguments go to bench/bench.py.
# Makes .venv (or reuses it) as scripts/test.sh does; never the system python3, which
# lacks hrr's dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/venv.sh || { echo "bench: could not make .venv with hrr installed (scripts/venv.sh)" >&2; exit 1; }
exec .venv/bin/python bench/bench.py "$@"
