"""A hip-python program that uses hipBLAS as hip-python's examples do (``from hip import
hip, hipblas``): saxpy with alpha on the host, then with alpha in device memory."""
import ctypes
import sys

import numpy as np
from hip import hip, hipblas


def ok(result):
    assert int(result[0]) == 0, result
    return result[1] if len(result) == 2 else None


n = 33
x, y = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
dx, dy, dalpha = (ok(hip.hipMalloc(n * 4)), ok(hip.hipMalloc(n * 4)), ok(hip.hipMalloc(4)))
ok(hip.hipMemcpy(dx, x, n * 4, hip.hipMemcpyKind.hipMemcpyHostToDevice))
ok(hip.hipMemcpy(dy, y, n * 4, hip.hipMemcpyKind.hipMemcpyHostToDevice))
ok(hip.hipMemcpy(dalpha, np.array([0.5], np.float32), 4, hip.hipMemcpyKind.hipMemcpyHostToDevice))
stream = ok(hip.hipStreamCreate())
handle = ok(hipblas.hipblasCreate())
ok(hipblas.hipblasSetStream(handle, stream))
alpha = ctypes.c_float(2.0)
ok(hipblas.hipblasSaxpy(handle, n, ctypes.addressof(alpha), dx, 1, dy, -1))
ok(hipblas.hipblasSetPointerMode(handle, hipblas.hipblasPointerMode_t.HIPBLAS_POINTER_MODE_DEVICE))
ok(hipblas.hipblasSaxpy(handle, (n + 1) // 2, dalpha, dx, 2, dy, 2))
ok(hip.hipStreamSynchronize(stream))
out = np.zeros(n, np.float32)
ok(hip.hipMemcpy(out, dy, n * 4, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
want = 1 + 2 * x[::-1]
want[::2] += 0.5 * x[::2]
assert np.array_equal(out, want), (out, want)
ok(hipblas.hipblasDestroy(handle))
print("hipblas: ok")
sys.exit(0)
