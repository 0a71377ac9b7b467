#!/usr/bin/env bash
# Mutation fuzzing of hrr's archive reader, `hrr info` and `hrr replay` over real archives
# captured on the sim: `bash scripts/fuzz.sh [N] [--seed S] [--jobs J]` (default N=1000).
# Prints the count, the time and every finding (each with the command that rebuilds its
# archive); exits 1 if anything was found. CI runs a bounded amount (tests/fuzz/test_fuzz_ci.py).
set -uo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv && .venv/bin/python -m pip install --disable-pip-version-check -q -e '.[test]' || exit 1
fi
n="${1:-1000}"
shift || true
exec .venv/bin/python tests/fuzz/mutate.py "$n" "$@"
