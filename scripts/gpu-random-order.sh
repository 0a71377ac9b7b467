#!/usr/bin/env bash
# The whole test suite on the GPU machine, in a random order, several times in a row:
#   scripts/gpu-random-order.sh [RUNS] [FIRST_RUN]     (after scripts/gpu-suite.sh made the venv)
#   HRR_PYTEST_ARGS="-n 8" scripts/gpu-random-order.sh  # spread over 8 processes (pytest-xdist,
#                                                        # from .device_wheels), the same seed in each
# Each run draws its own seed (printed; `pytest --shuffle SEED` repeats that order) and
# writes run-<i>.log and junit-<i>.xml under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/out/gpu}"
mkdir -p "$OUT"
VPY="${HRR_GPU_VENV:-/tmp/hrr-gpu-venv}/bin/python"
runs="${1:-3}"
first="${2:-1}"
rc=0
for ((i = first; i < first + runs; i++)); do
  seed=$(( (RANDOM << 15) | RANDOM ))
  # shellcheck disable=SC2086 - HRR_PYTEST_ARGS is a list of words
  "$VPY" -m pytest tests -p no:cacheprovider -q -rfEs --shuffle "$seed" ${HRR_PYTEST_ARGS:-} \
      --junitxml="$OUT/junit-$i.xml" > "$OUT/run-$i.log" 2>&1
  r=$?
  echo "run $i: --shuffle $seed: exit $r: $(tail -n 1 "$OUT/run-$i.log")"
  [ "$r" -eq 0 ] || rc=$r
done
exit "$rc"
