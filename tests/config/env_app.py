"""A hip-python app for the environment-variable tests: kernels read two pinned buffers
(512 bytes and 8 KiB) whose bytes the host sets before each launch."""
import ctypes

import numpy as np
from hip import hip

from hrr.backends.sim import builtin_code_object

SIZES = (512, 8192)
err, mod = hip.hipModuleLoadData(builtin_code_object())
err, sum_u32 = hip.hipModuleGetFunction(mod, b"sum_u32")
out = np.zeros(1, np.uint32)
for size in SIZES:
    n = size // 4
    err, p = hip.hipHostMalloc(size, 0)
    assert err == 0
    view = np.ctypeslib.as_array((ctypes.c_uint32 * n).from_address(int(p)))
    err, d = hip.hipMalloc(4)
    for step in range(2):
        view[:] = np.arange(n, dtype=np.uint32) * (step + 7) + size
        assert hip.hipModuleLaunchKernel(sum_u32, 1, 1, 1, 64, 1, 1, 0, None, None,
                                         (d, p, ctypes.c_uint32(n)))[0] == 0
        assert hip.hipMemcpy(out, d, 4, hip.hipMemcpyKind.hipMemcpyDeviceToHost)[0] == 0
        assert int(out[0]) == int(view.sum(dtype=np.uint64) % (1 << 32))
print("ok")
