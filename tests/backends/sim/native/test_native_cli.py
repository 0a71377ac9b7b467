"""A hip-python program with its own hiprtc kernel under ``hrr run``, ``hrr capture`` and
``hrr replay --strict`` on the sim, as a user runs it: one recorded process (hrr's own
compiler and kernel worker are never recorded), its kernel's printf on stdout."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hrr.backends.sim.native import toolchain

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "cli"))
from cli_helpers import describe, hrr  # noqa: E402

pytestmark = pytest.mark.skipif(toolchain.find_toolchain() is None, reason="no C++ compiler for the sim")

APP = r'''
import ctypes
import numpy as np
from hip import hip, hiprtc

SOURCE = b"""
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) printf("saxpy on %d elements\\n", n);
  if (i < n) y[i] = a * x[i] + y[i];
}
"""

def ok(r):
    assert int(r[0]) == 0, r
    return r[1] if len(r) == 2 else None

prog = ok(hiprtc.hiprtcCreateProgram(SOURCE, b"saxpy.hip", 0, [], []))
assert int(hiprtc.hiprtcCompileProgram(prog, 2, [b"--offload-arch=gfx942", b"-O3"])[0]) == 0
code = bytearray(ok(hiprtc.hiprtcGetCodeSize(prog)))
hiprtc.hiprtcGetCode(prog, code)
fn = ok(hip.hipModuleGetFunction(ok(hip.hipModuleLoadData(code)), b"saxpy"))
x, y = np.arange(1000, dtype=np.float32), np.ones(1000, dtype=np.float32)
dx, dy = ok(hip.hipMalloc(4000)), ok(hip.hipMalloc(4000))
hip.hipMemcpy(dx, x, 4000, hip.hipMemcpyKind.hipMemcpyHostToDevice)
hip.hipMemcpy(dy, y, 4000, hip.hipMemcpyKind.hipMemcpyHostToDevice)
ok(hip.hipModuleLaunchKernel(fn, 8, 1, 1, 128, 1, 1, 0, None, None, (ctypes.c_float(2.0), dx, dy, ctypes.c_int(1000))))
hip.hipMemcpy(y, dy, 4000, hip.hipMemcpyKind.hipMemcpyDeviceToHost)
assert (y == 2 * x + 1).all()
print("ok")
'''


def test_run_capture_and_strict_replay_of_a_program_with_its_own_kernel(tmp_path):
    app = tmp_path / "app.py"
    app.write_text(APP)
    ran = hrr("run", "--backend", "sim", "--", "python", app, timeout=300, check=0)
    assert ran.stdout.splitlines() == ["saxpy on 1000 elements", "ok"], describe(ran)
    archive = tmp_path / "a.hrr"
    hrr("capture", "--content", "-o", archive, "--", "python", app, timeout=300, check=0)
    assert len(list(archive.glob("pid-*"))) == 1, sorted(p.name for p in archive.iterdir())
    replayed = hrr("replay", "--strict", archive, timeout=300, check=0)
    assert "saxpy on 1000 elements" in replayed.stdout and "Device-to-host checks: 1 passed" in replayed.stdout, \
        describe(replayed)
