#!/usr/bin/env bash
# Run the test suite: creates .venv (if missing) with hrr and its test extra installed.
# Extra arguments go to pytest (e.g. scripts/test.sh -m gpu).
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/venv.sh || exit 1
.venv/bin/python -m pytest "$@"
rc=$?
# pytest exits 5 when it collected no test (e.g. `-m gpu` on a machine without a GPU).
if [ "$rc" -eq 5 ]; then
  echo "no tests collected"
  rc=0
fi
exit "$rc"
