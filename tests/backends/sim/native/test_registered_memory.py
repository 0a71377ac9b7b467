"""Host memory a program registers itself (hipHostRegister, e.g. a numpy buffer) is
readable and writable by native sim kernels, and an archive of such a program replays byte
for byte (the pinned_snapshot plugin restores the registered bytes before each launch)."""
from __future__ import annotations

import ctypes
import sys
from pathlib import Path

import numpy as np
import pytest

from hrr.backends.sim import hip, hiprtc
from hrr.backends.sim.native import toolchain

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "cli"))
from cli_helpers import describe, hrr  # noqa: E402

pytestmark = pytest.mark.skipif(toolchain.find_toolchain() is None, reason="no C++ compiler for the sim")
OK = hip.hipError_t.hipSuccess

KERNEL = b"""
extern "C" __global__ void bump(unsigned* host, unsigned* dev, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { dev[i] = host[i]; host[i] = host[i] * 2 + 1; }
}
extern "C" __global__ void peek(const unsigned* host, unsigned* dev, int at) { dev[0] = host[at]; }
"""


def ok(result):
    assert int(result[0]) == 0, result
    return result[1] if len(result) == 2 else None


def _kernel(name: bytes = b"bump"):
    prog = ok(hiprtc.hiprtcCreateProgram(KERNEL, b"bump.hip", 0, [], []))
    assert int(hiprtc.hiprtcCompileProgram(prog, 1, [b"--offload-arch=gfx942"])[0]) == 0
    code = bytearray(ok(hiprtc.hiprtcGetCodeSize(prog)))
    hiprtc.hiprtcGetCode(prog, code)
    return ok(hip.hipModuleGetFunction(ok(hip.hipModuleLoadData(bytes(code))), name))


def test_a_kernel_sees_the_registered_bytes_only_not_their_neighbours_on_the_same_page():
    """What a stranger's kernel could otherwise read at replay: replay's heap next to a buffer."""
    peek = _kernel(b"peek")
    big = np.full(1024, 0xDEADBEEF, np.uint32)
    a = big[100:400]
    a[:] = np.arange(300, dtype=np.uint32)
    dev = ok(hip.hipMalloc(4))
    got = np.zeros(1, np.uint32)
    ok(hip.hipHostRegister(a, a.nbytes, 0))
    try:
        for at, want in ((299, 299), (300, 0), (-1, 0)):
            params = (ctypes.c_void_p(a.ctypes.data), dev, ctypes.c_int32(at))
            ok(hip.hipModuleLaunchKernel(peek, 1, 1, 1, 1, 1, 1, 0, None, None, params))
            ok(hip.hipMemcpy(got, dev, 4, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
            assert int(got[0]) == want, (at, hex(int(got[0])))
    finally:
        ok(hip.hipHostUnregister(a))


def test_a_native_kernel_reads_and_writes_a_registered_numpy_array():
    fn = _kernel()
    # the array shares its pages with the rest of the heap: what follows it is not touched
    a = np.arange(1, 301, dtype=np.uint32)
    neighbour = np.frombuffer(ctypes.string_at(a.ctypes.data + a.nbytes, 4), np.uint32)[0]
    dev = ok(hip.hipMalloc(4 * 301))
    ok(hip.hipHostRegister(a, a.nbytes, 0))
    try:
        params = (ctypes.c_void_p(a.ctypes.data), dev, ctypes.c_uint32(300))
        ok(hip.hipModuleLaunchKernel(fn, 3, 1, 1, 128, 1, 1, 0, None, None, params))
        ok(hip.hipDeviceSynchronize())
        assert (a == np.arange(1, 301, dtype=np.uint32) * 2 + 1).all()
        a[:10] = 7                                   # the host writes between launches: seen
        ok(hip.hipModuleLaunchKernel(fn, 3, 1, 1, 128, 1, 1, 0, None, None, params))
        ok(hip.hipDeviceSynchronize())
        assert (a[:10] == 15).all() and a[10] == (11 * 2 + 1) * 2 + 1
        got = np.zeros(300, np.uint32)
        ok(hip.hipMemcpy(got, dev, 1200, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
        assert (got[:10] == 7).all() and got[10] == 23
    finally:
        ok(hip.hipHostUnregister(a))
    assert np.frombuffer(ctypes.string_at(a.ctypes.data + a.nbytes, 4), np.uint32)[0] == neighbour
    # unregistered: the next launch's worker no longer maps it, and the kernel faults
    ok(hip.hipModuleLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, None, None, params))
    assert hip.hipDeviceSynchronize()[0] == hip.hipError_t.hipErrorIllegalAddress
    assert (a[:10] == 15).all()
    hip.hipGetLastError()


APP = r'''
import ctypes
import numpy as np
from hip import hip, hiprtc

SOURCE = b"""
extern "C" __global__ void bump(unsigned* host, unsigned* dev, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { dev[i] = host[i]; host[i] = host[i] * 2 + 1; }
}
"""

def ok(r):
    assert int(r[0]) == 0, r
    return r[1] if len(r) == 2 else None

prog = ok(hiprtc.hiprtcCreateProgram(SOURCE, b"bump.hip", 0, [], []))
assert int(hiprtc.hiprtcCompileProgram(prog, 1, [b"--offload-arch=gfx942"])[0]) == 0
code = bytearray(ok(hiprtc.hiprtcGetCodeSize(prog)))
hiprtc.hiprtcGetCode(prog, code)
fn = ok(hip.hipModuleGetFunction(ok(hip.hipModuleLoadData(code)), b"bump"))
a = np.arange(5000, dtype=np.uint32) * 3
dev = ok(hip.hipMalloc(a.nbytes))
ok(hip.hipHostRegister(a, a.nbytes, 0))
params = (ctypes.c_void_p(a.ctypes.data), dev, ctypes.c_uint32(a.size))
out = np.zeros_like(a)
for step in range(3):
    a[step::7] += 1000 + step          # written by the host only: no HIP call carries it
    ok(hip.hipModuleLaunchKernel(fn, 40, 1, 1, 128, 1, 1, 0, None, None, params))
    ok(hip.hipDeviceSynchronize())
    ok(hip.hipMemcpy(out, dev, a.nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
ok(hip.hipHostUnregister(a))
print("sum", int(a.sum(dtype=np.uint64)), int(out.sum(dtype=np.uint64)))
'''


def test_a_registered_numpy_array_read_by_a_native_kernel_replays_byte_for_byte(tmp_path):
    app = tmp_path / "app.py"
    app.write_text(APP)
    archive = tmp_path / "a.hrr"
    ran = hrr("capture", "--content", "-o", archive, "--", "python", app, timeout=300, check=0)
    want = np.arange(5000, dtype=np.uint64) * 3
    for step in range(3):
        want[step::7] += 1000 + step
        seen = want.copy()
        want = want * 2 + 1
    assert ran.stdout.split() == ["sum", str(int(want.sum())), str(int(seen.sum()))], describe(ran)
    replayed = hrr("replay", "--strict", archive, timeout=300, check=0)
    assert "Device-to-host checks: 3 passed" in replayed.stdout, describe(replayed)
    assert "Pinned host snapshots: 3 restored, 0 refused" in replayed.stdout, describe(replayed)
