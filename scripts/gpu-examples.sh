#!/usr/bin/env bash
# hip-python's own examples (7.x programs) under hrr on the cuda backend, on the device
# machine: hrr run, hrr capture --content, hrr replay --strict (scripts/hip-python-examples.py).
#
#   scripts/gpu-examples.sh EXAMPLES_DIR HIP_PYTHON7_TAR [OUT]
#
# EXAMPLES_DIR: a copy of github.com/ROCm/hip-python's examples/ (not redistributed here).
# HIP_PYTHON7_TAR: hip-python 7.x's `hip` package as a .tar.xz (its wheel is over the device
# tool's 64 MiB carry limit; the hip and hiprtc modules are enough):
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#       --platform manylinux_2_28_x86_64 -d w 'hip-python>=7,<8'
#   mkdir t && (cd t && unzip -q ../w/*.whl && rm -f hip/*blas* hip/*sparse* hip/*solver* \
#       hip/*fft* hip/*rand* hip/*rccl* hip/*.pyx hip/*.pxd) && tar cJf hip7.tar.xz -C t hip
# Needs .device_wheels/ (click, rich and their needs; see docs/cuda-backend.md).
set -uo pipefail
cd "$(dirname "$0")/.."
EXAMPLES="$1"; TAR="$2"; OUT="${3:-${OUT:-out/examples}}"
V=/tmp/hrr-examples-venv
python3 -m venv --system-site-packages "$V" || exit 3
python3 -c "import site; print('\n'.join(site.getsitepackages()))" \
    > "$("$V/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/_hrr_parent_site.pth"
"$V/bin/python" -m pip install -q --no-index --no-deps .device_wheels/{click,rich,markdown,mdurl,pygments}*.whl \
  && "$V/bin/python" -m pip install -q --no-index --no-deps --no-build-isolation -e . || exit 3
mkdir -p /tmp/hrr-hip-python7 "$OUT" && tar xJf "$TAR" -C /tmp/hrr-hip-python7 || exit 3
PYTHONPATH=/tmp/hrr-hip-python7 PATH="$V/bin:$PATH" "$V/bin/python" scripts/hip-python-examples.py "$EXAMPLES" \
    --backend cuda --out "$OUT" --python "$V/bin/python" --timeout 90
rc=$?
cat "$OUT/results.md"
exit "$rc"
