#!/usr/bin/env bash
# Run hrr's GPU test suite on a machine with an NVIDIA GPU (the device machine).
#
#   scripts/gpu-suite.sh          # the cuda backend's GPU tests (pytest -m gpu tests/backends/cuda)
#   scripts/gpu-suite.sh all      # ... then the whole test suite
#   HRR_PYTEST_ARGS="--shuffle random" scripts/gpu-suite.sh all   # in a random order (seed printed)
#
# Makes a venv with --system-site-packages (the image's cuda-bindings, numpy, pytest, ...),
# installs hrr into it from .device_wheels/ (wheels for what the image lacks: hip-python,
# click, rich; fetch them with the pip download command in docs/cuda-backend.md, "Testing
# on the device machine"), and writes junit XML and logs under $OUT (default: out/gpu).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/out/gpu}"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
VENV="${HRR_GPU_VENV:-/tmp/hrr-gpu-venv}"
export PYTHONUNBUFFERED=1

{
  echo "== machine"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | head -5
  "$PY" --version
  echo "== venv"
  "$PY" -m venv --system-site-packages "$VENV" || exit 3
  VPY="$VENV/bin/python"
  # When python3 is itself a venv (the image's /opt/torch/.venv), --system-site-packages
  # reaches only the base interpreter: link the parent's site-packages in with a .pth.
  "$PY" -c "import site, sys; print('\n'.join(site.getsitepackages()))" \
      > "$("$VPY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/_hrr_parent_site.pth"
  if ! "$VPY" -m pip install -q --no-index --find-links .device_wheels --no-build-isolation -e . ; then
    echo "plain install failed; installing the wheels and hrr with --no-deps"
    "$VPY" -m pip install -q --no-index --no-deps .device_wheels/*.whl
    "$VPY" -m pip install -q --no-index --no-deps --no-build-isolation -e . || exit 3
  fi
  # the test helpers the image lacks: -n (pytest-xdist, for gpu-random-order.sh), hypothesis's
  # property tests, per-test timeouts; each only where its wheel is in .device_wheels
  for extra in pytest-xdist hypothesis pytest-timeout; do
    "$VPY" -m pip install -q --no-index --find-links .device_wheels "$extra" > /dev/null 2>&1 \
        || echo "$extra: not in .device_wheels (the tests that need it skip or run without it)"
  done
  # hrr's own bytecode, compiled once as a regular (not editable) install does: where the
  # image sets PYTHONDONTWRITEBYTECODE, every process hrr starts would compile it again
  "$VPY" -m compileall -q hrr plugins > /dev/null || echo "compileall failed (hrr then compiles in each process)"
  "$VPY" - <<'PYEOF'
import importlib.metadata as md
for d in ("cuda-bindings", "cuda-pathfinder", "nvidia-cuda-nvrtc", "hip-python", "numpy", "pytest", "hrr"):
    try:
        print(f"{d} {md.version(d)}")
    except md.PackageNotFoundError:
        print(f"{d} -")
from hrr.backends.cuda._runtime import gpu_unavailable_reason
print("gpu:", gpu_unavailable_reason() or "available")
PYEOF
} 2>&1 | tee "$OUT/setup.log"
VPY="$VENV/bin/python"

TIMEOUT_OPT=()
"$VPY" -c "import pytest_timeout" 2>/dev/null && TIMEOUT_OPT=(--timeout=120)

echo "== pytest -m gpu tests/backends/cuda" | tee "$OUT/gpu-tests.log"
"$VPY" -m pytest -m gpu tests/backends/cuda -p no:cacheprovider -rA -q "${TIMEOUT_OPT[@]}" \
    --junitxml="$OUT/junit-gpu.xml" 2>&1 | tee -a "$OUT/gpu-tests.log"
rc=${PIPESTATUS[0]}

if [ "${1:-}" = "all" ]; then
  echo "== pytest tests (whole suite)" | tee "$OUT/all-tests.log"
  # shellcheck disable=SC2086 - HRR_PYTEST_ARGS is a list of words
  timeout "${HRR_SUITE_TIMEOUT:-240}" "$VPY" -m pytest tests -p no:cacheprovider -q -rfEs "${TIMEOUT_OPT[@]}" ${HRR_PYTEST_ARGS:-} \
      --junitxml="$OUT/junit-all.xml" 2>&1 | tee -a "$OUT/all-tests.log"
  rc_all=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] && rc=$rc_all
fi
if [ "${1:-}" = "all" ]; then
  echo "== demo on the cuda backend: capture examples/serving_step.py, replay --strict" | tee "$OUT/demo-cuda.log"
  rm -rf /tmp/hrr-demo-cuda
  PATH="$VENV/bin:$PATH" hrr capture -o /tmp/hrr-demo-cuda --backend cuda --content -- python examples/serving_step.py 2>&1 | tee -a "$OUT/demo-cuda.log"
  PATH="$VENV/bin:$PATH" hrr replay /tmp/hrr-demo-cuda --strict 2>&1 | tee -a "$OUT/demo-cuda.log"
  echo "== benchmark (cuda)" | tee "$OUT/bench-cuda.log"
  timeout "${HRR_BENCH_TIMEOUT:-300}" "$VPY" bench/bench.py --backend cuda ${HRR_BENCH_MODE:---quick} \
      --out "$OUT/results-cuda.json" 2>&1 | tee -a "$OUT/bench-cuda.log"
fi
exit "$rc"
