"""Shared bits of the small hip-python apps the CLI tests run under `hrr capture`.

They use only hip-python's API (``from hip import hip``) plus the sim's built-in code
object, so they run on the sim backend with no compiler.
"""
import ctypes

import numpy as np
from hip import hip

from hrr.backends.sim import builtin_code_object

H2D = hip.hipMemcpyKind.hipMemcpyHostToDevice
D2H = hip.hipMemcpyKind.hipMemcpyDeviceToHost


def check(result):
    err, *outs = result
    if err != 0:
        raise RuntimeError(f"{err!r}")
    return outs[0] if len(outs) == 1 else outs


def load_add():
    module = check(hip.hipModuleLoadData(builtin_code_object()))
    return module, check(hip.hipModuleGetFunction(module, b"add_u32"))


def add_step(fn, n, seed, stream=None):
    """a + b on the device, copied back and checked; returns the host result."""
    a = np.arange(n, dtype=np.uint32) + np.uint32(seed)
    b = np.full(n, seed * 3, dtype=np.uint32)
    da, db, dc = (check(hip.hipMalloc(n * 4)) for _ in range(3))
    check(hip.hipMemcpy(da, a, n * 4, H2D))
    check(hip.hipMemcpy(db, b, n * 4, H2D))
    args = [ctypes.c_void_p(int(dc)), ctypes.c_void_p(int(da)), ctypes.c_void_p(int(db)), ctypes.c_uint32(n)]
    check(hip.hipModuleLaunchKernel(fn, 2, 1, 1, 64, 1, 1, 0, stream,
                                    [ctypes.addressof(x) for x in args], None))
    out = np.zeros(n, np.uint32)
    if stream is None:
        check(hip.hipMemcpy(out, dc, n * 4, D2H))
    else:
        check(hip.hipMemcpyAsync(out, dc, n * 4, D2H, stream))
        check(hip.hipStreamSynchronize(stream))
    assert (out == a + b).all(), "wrong result"
    for d in (da, db, dc):
        check(hip.hipFree(d))
    return out
