"""A hip-python app for the CLI test: a kernel reads pinned memory the host changes."""
import ctypes

import numpy as np
from hip import hip

from hrr.backends.sim import builtin_code_object  # the sim's kernel library image

N = 1024
err, mod = hip.hipModuleLoadData(builtin_code_object())
err, sum_u32 = hip.hipModuleGetFunction(mod, b"sum_u32")
err, p = hip.hipHostMalloc(N * 4, 0)
view = np.ctypeslib.as_array((ctypes.c_uint32 * N).from_address(int(p)))
err, d = hip.hipMalloc(4)
out = np.zeros(1, np.uint32)
for step in range(3):
    view[:] = np.arange(N, dtype=np.uint32) * (step + 1)
    assert hip.hipModuleLaunchKernel(sum_u32, 1, 1, 1, 64, 1, 1, 0, None, None,
                                     (d, p, ctypes.c_uint32(N)))[0] == 0
    assert hip.hipMemcpy(out, d, 4, hip.hipMemcpyKind.hipMemcpyDeviceToHost)[0] == 0
    assert int(out[0]) == int(view.sum(dtype=np.uint64) % (1 << 32))
print("ok")
