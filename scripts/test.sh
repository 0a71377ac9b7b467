#!/usr/bin/env bash
# Run the test suite: creates .venv (if missing) with hrr and its test extra installed.
# Extra arguments go to pytest (e.g. scripts/test.sh -m gpu).
set -uo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv || exit 1
fi
.venv/bin/python -m pip install --disable-pip-version-check -q -e '.[test,cuda]' || exit 1
.venv/bin/python -m pytest "$@"
rc=$?
# pytest exits 5 when it collected no test (e.g. `-m gpu` on a machine without a GPU).
if [ "$rc" -eq 5 ]; then
  echo "no tests collected"
  rc=0
fi
exit "$rc"
