"""A hip-python program that reshapes and slices what hipMalloc returns, as AMD's HPC
training examples and kernel_tuner do: ``configure(typestr="float32", shape=(n,))``, copies
into and out of ``d[16:32]``, a row of a 2-D array, and a kernel launched on a view through
``extra``. Every byte is checked on the host; prints "devicearray: ok"."""
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


n = 64
d = check(hip.hipMalloc(n * 4))
assert d.configure(typestr="float32", shape=(n,)) is d
assert (d.shape, d.itemsize, d.size, d.typestr) == ((n,), 4, n, "float32")
check(hip.hipMemset(d, 0, n * 4))
view = d[16:32]
assert int(view) == int(d) + 16 * 4 and view.shape == (16,) and view.itemsize == 4
src = np.arange(1, 17, dtype=np.float32)
check(hip.hipMemcpy(view, src, view.size * view.itemsize, H2D))
whole = np.empty(n, np.float32)
check(hip.hipMemcpy(whole, d, n * 4, D2H))
assert (whole[16:32] == src).all() and not whole[:16].any() and not whole[32:].any(), whole
part = np.empty(16, np.float32)
check(hip.hipMemcpy(part, d[16:32], 64, D2H))
assert (part == src).all(), part

# a 2-D int32 array: its row 2 (hip-python keeps the axis: shape (6, 1)) written alone
grid = check(hip.hipMalloc(4 * 6 * 4))
grid.configure(typestr="int32", shape=(4, 6))
check(hip.hipMemset(grid, 0xFF, 4 * 6 * 4))
row = grid[2]
assert int(row) == int(grid) + 2 * 6 * 4 and row.size == 6
check(hip.hipMemcpy(row, np.arange(6, dtype=np.int32), row.size * row.itemsize, H2D))
back = np.empty((4, 6), np.int32)
check(hip.hipMemcpy(back, grid, back.nbytes, D2H))
assert (back[2] == np.arange(6)).all() and (back[[0, 1, 3]] == -1).all(), back

# a kernel given a view: fill_u32(dst=u[4:8], 7, 4) through hip-python's extra tuple
u = check(hip.hipMalloc(16 * 4))
u.configure(typestr="uint32", shape=(16,))
check(hip.hipMemset(u, 0, 64))
module = check(hip.hipModuleLoadData(builtin_code_object()))
fill = check(hip.hipModuleGetFunction(module, b"fill_u32"))
check(hip.hipModuleLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, None, None,
                                (u[4:8], ctypes.c_uint32(7), ctypes.c_uint32(4))))
check(hip.hipDeviceSynchronize())
filled = np.empty(16, np.uint32)
check(hip.hipMemcpy(filled, u, 64, D2H))
assert filled.tolist() == [0] * 4 + [7] * 4 + [0] * 8, filled

for ptr in (d, grid, u):
    check(hip.hipFree(ptr))
check(hip.hipModuleUnload(module))
print("devicearray: ok", flush=True)
