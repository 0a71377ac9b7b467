#!/usr/bin/env bash
# The outside hip-python programs (docs/outside-programs.md) on the GPU machine, in one command:
#
#   bash scripts/outside-programs/gpu.sh     # from the repository root, on the device machine,
#                                            # carry: [".device_wheels", ".device_outside"]
#
# .device_outside/ is made here by `python scripts/outside-programs/device-bundle.py` (the
# programs, the wheels of their venvs, the interop programs' sim captures); .device_wheels/ as
# docs/cuda-backend.md says. No package index is used: run.py makes each venv under
# $HRR_OUTSIDE_WORK (/tmp/hrr-outside) with --system-site-packages (the image's cuda-bindings,
# numpy) and pip --no-index from those two folders, then
#   1. every program the sim passes that needs no hip-python-interop: hrr run, hrr capture
#      --content and hrr replay --strict on $HRR_OUTSIDE_BACKEND (cuda);
#   2. the interop programs' archives, captured on the sim: hrr replay --strict on that backend
#      (the interop layer installs cuda.bindings, NVIDIA's package the cuda backend uses).
# Writes $OUT/results.md, $OUT/results.json and $OUT/gpu.log (default OUT: out/outside-gpu).
# Bounded: each step 90 s (150 s at most for a program that asks for more), no program begun
# after $HRR_OUTSIDE_DEADLINE s (270), step 1 killed after $HRR_OUTSIDE_RUN_LIMIT s (360),
# step 2 after 75 s. HRR_OUTSIDE_ONLY=NAME,NAME runs only those programs in step 1 (run.py --only).
#
# The offline dry run on a CPU machine (a Python 3.12 standing in for the image, no network):
#   HRR_OUTSIDE_BACKEND=sim PYTHON=/path/to/python3.12 OUT=/tmp/o bash scripts/outside-programs/gpu.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-$PWD/out/outside-gpu}"
BACKEND="${HRR_OUTSIDE_BACKEND:-cuda}"
PY="${PYTHON:-python3}"
WORK="${HRR_OUTSIDE_WORK:-/tmp/hrr-outside}"
BUNDLE=.device_outside
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1

{
  T0=$SECONDS
  echo "== outside hip-python programs under hrr, backend $BACKEND, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "tree: $(git rev-parse --short HEAD 2>/dev/null || echo '?') (a device copy's git metadata may name an older commit)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -8
  "$PY" - <<'PYEOF'
import importlib.metadata as md
import platform
import sys

print(f"python {platform.python_version()} ({sys.executable}), {platform.platform()}")
names = ("cuda-bindings", "cuda-pathfinder", "nvidia-cuda-nvrtc", "nvidia-cuda-nvrtc-cu12", "numpy", "cupy",
         "cupy-cuda12x", "cupy-cuda13x", "pytest", "pluggy", "msgpack", "xxhash", "attrs", "setuptools", "scipy",
         "pandas", "hip-python")


def version(name: str) -> str:
    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return "-"


print("image packages: " + ", ".join(f"{d} {version(d)}" for d in names))
try:
    from cuda.bindings import driver, nvrtc
    _, major, minor = nvrtc.nvrtcVersion()
    _, version = driver.cuDriverGetVersion()
    print(f"NVRTC {major}.{minor}, CUDA driver API {version // 1000}.{version % 1000 // 10}")
except Exception as exc:  # noqa: BLE001 - say what is missing, go on
    print(f"cuda.bindings: {type(exc).__name__}: {exc}")
PYEOF
  if [ ! -f "$BUNDLE/bundle.json" ] || [ ! -d .device_wheels ]; then
    echo "missing $BUNDLE/bundle.json or .device_wheels/: make them with scripts/outside-programs/device-bundle.py" \
         "and carry both (.device_wheels, .device_outside)"
    exit 3
  fi
  "$PY" -c "import json; b = json.load(open('$BUNDLE/bundle.json')); print('bundle: made at', b['tree']['commit'], \
b['tree']['date'] + ';', len(b['programs']), 'programs,', len(b['wheels']), 'wheels,', len(b['archives']), 'sim captures')"
  # A copy to work in: the programs write beside themselves (logs, metadata), replay beside the archives.
  rm -rf "$WORK" && mkdir -p "$WORK" && cp -r "$BUNDLE/cache" "$BUNDLE/archives" "$WORK/" || exit 3
  COMMON=(--backend "$BACKEND" --cache "$WORK/cache" --venvs "$WORK/venvs" --wheels .device_wheels
          --wheels "$BUNDLE/wheels" --out "$WORK/results")

  echo "== 1. programs the sim passes, no interop: hrr run, capture --content, replay --strict ($BACKEND)"
  timeout -k 10 "${HRR_OUTSIDE_RUN_LIMIT:-360}" "$PY" scripts/outside-programs/run.py "${COMMON[@]}" \
      --sim-pass --no-interop --timeout 90 --timeout-limit 150 --deadline "${HRR_OUTSIDE_DEADLINE:-270}" \
      ${HRR_OUTSIDE_ONLY:+--only "$HRR_OUTSIDE_ONLY"}
  rc=$?
  echo "== 2. the interop programs' sim captures: hrr replay --strict ($BACKEND)"
  timeout -k 10 75 "$PY" scripts/outside-programs/run.py "${COMMON[@]}" --replay-only "$WORK/archives" \
      --timeout-limit 45
  rc2=$?

  cp "$WORK/results/results.md" "$WORK/results/results.json" "$OUT/" 2>/dev/null || echo "no results were written"
  echo "== results"
  cat "$OUT/results.md" 2>/dev/null
  echo "== exit codes: programs $rc, replays $rc2 (124: killed at its limit); $((SECONDS - T0)) s in all"
  [ "$rc" -eq 0 ] && rc=$rc2
  exit "$rc"
} 2>&1 | tee "$OUT/gpu.log"
exit "${PIPESTATUS[0]}"
