"""A hip-python 10 program for the `hip` backend tests: vadd from a committed AMD code
object, one input in pinned host memory. argv: CODE_OBJECT [--uncatalogued].
Prints each call's error name; exits 0 when every call succeeded and c == a + b."""
import ctypes
import sys

import numpy as np
from rocm.bindings import hip

errors = []


def call(name, *args, **kwargs):
    result = getattr(hip, name)(*args, **kwargs)
    print(name, result[0].name)
    errors.append(int(result[0]))
    return result[1] if len(result) == 2 else result[1:]


n = 16
a = np.arange(n, dtype=np.float32)
b = np.full(n, 2.5, dtype=np.float32)
out = np.zeros(n, dtype=np.float32)
call("hipGetDeviceCount")
da = call("hipMalloc", a.nbytes)
dc = call("hipMalloc", a.nbytes)
pinned = call("hipHostMalloc", b.nbytes, 0)
if pinned is not None:   # the kernel reads b straight from pinned host memory
    ctypes.memmove(int(pinned), b.ctypes.data, b.nbytes)
call("hipMemcpy", da, a, a.nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice)
module = call("hipModuleLoadData", open(sys.argv[1], "rb").read())
function = call("hipModuleGetFunction", module, b"vadd")
call("hipModuleLaunchKernel", function, 1, 1, 1, 64, 1, 1, 0, None, None,
     (da, pinned, dc, ctypes.c_int32(n)))
call("hipDeviceSynchronize")
call("hipMemcpy", out, dc, out.nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost)
if "--uncatalogued" in sys.argv:
    call("hipExtGetLastError")
call("hipHostFree", pinned)
call("hipFree", da)
call("hipFree", dc)
print("result", "ok" if (out == a + b).all() else "wrong")
sys.exit(0 if not any(errors) and (out == a + b).all() else 3)
