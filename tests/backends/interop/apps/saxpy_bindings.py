"""A cuda-python program (``cuda.bindings``, the cuda-bindings 12/13 layout): saxpy compiled
with nvrtc, loaded and launched through the driver API, memory moved through the runtime
API, on two streams ordered by an event. Under hip-python 10.x's interop layer every call is
a HIP call. Prints one line per check; exits non-zero on a wrong result."""
import sys

import numpy as np
from cuda.bindings import driver, nvrtc, runtime

SAXPY = """\
extern "C" __global__
void saxpy(float a, const float *x, const float *y, float *out, size_t n)
{
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    for (; i < n; i += (size_t)blockDim.x * gridDim.x)
        out[i] = a * x[i] + y[i];
}
"""


def check(result):
    """cuda-python's idiom: the first item is the error, the rest the outputs."""
    err, *outs = result
    if int(err) != 0:
        raise RuntimeError(f"CUDA error {err!r}")
    return outs[0] if len(outs) == 1 else (outs or None)


check(driver.cuInit(0))
device = check(driver.cuDeviceGet(0))
context = check(driver.cuDevicePrimaryCtxRetain(device))
check(driver.cuCtxSetCurrent(context))

# nvrtc: compile CUDA C (HIP C++ under the interop) to the image cuModuleLoadData takes
prog = check(nvrtc.nvrtcCreateProgram(SAXPY.encode(), b"saxpy.cu", 0, [], []))
opts = [b"--fmad=false"]
check(nvrtc.nvrtcCompileProgram(prog, len(opts), opts))
size = check(nvrtc.nvrtcGetPTXSize(prog))
ptx = b" " * size
check(nvrtc.nvrtcGetPTX(prog, ptx))
ptx = np.frombuffer(ptx, dtype=np.uint8)   # cuda-python's examples use np.char.array, deprecated in numpy 2.5
module = check(driver.cuModuleLoadData(ptx.ctypes.data))
kernel = check(driver.cuModuleGetFunction(module, b"saxpy"))

n = 4096
nbytes = n * np.dtype(np.float32).itemsize
a = np.array([2.0], dtype=np.float32)
hx = np.arange(n, dtype=np.float32)
hy = np.full(n, 0.5, dtype=np.float32)
hout = np.zeros(n, dtype=np.float32)

dx = check(driver.cuMemAlloc(nbytes))
dy = check(driver.cuMemAlloc(nbytes))
dout = check(runtime.cudaMalloc(nbytes))
copy_stream = check(driver.cuStreamCreate(0))
stream = check(runtime.cudaStreamCreate())
uploaded = check(runtime.cudaEventCreate())
start = check(driver.cuEventCreate(0))
stop = check(driver.cuEventCreate(0))

# uploads on one stream, the kernel on another, ordered by an event
check(driver.cuMemcpyHtoDAsync(dx, hx.ctypes.data, nbytes, copy_stream))
check(runtime.cudaMemcpyAsync(dy, hy, nbytes, runtime.cudaMemcpyKind.cudaMemcpyHostToDevice, copy_stream))
check(runtime.cudaMemsetAsync(dout, 0xFF, nbytes, copy_stream))
check(runtime.cudaEventRecord(uploaded, copy_stream))
check(runtime.cudaStreamWaitEvent(stream, uploaded, 0))

# kernelParams as cuda-python passes them: an array of the arguments' addresses
arg_x = np.array([int(dx)], dtype=np.uint64)
arg_y = np.array([int(dy)], dtype=np.uint64)
arg_out = np.array([int(dout)], dtype=np.uint64)
arg_n = np.array([n], dtype=np.uint64)
args = [a, arg_x, arg_y, arg_out, arg_n]
params = np.array([arg.ctypes.data for arg in args], dtype=np.uint64)
check(driver.cuEventRecord(start, stream))
check(driver.cuLaunchKernel(kernel, 8, 1, 1, 128, 1, 1, 0, stream, params.ctypes.data, 0))
check(driver.cuEventRecord(stop, stream))

check(driver.cuMemcpyDtoHAsync(hout.ctypes.data, dout, nbytes, stream))
check(driver.cuStreamSynchronize(stream))
check(driver.cuEventSynchronize(stop))
elapsed = check(driver.cuEventElapsedTime(start, stop))
expected = a[0] * hx + hy
ok = np.array_equal(hout, expected)
print(f"saxpy over {n} floats: {'ok' if ok else 'WRONG'} ({elapsed >= 0 and 'timed'})")

# the synchronous runtime path: overwrite y on the device and read it back
hy2 = np.empty(n, dtype=np.float32)
check(runtime.cudaMemset(dy, 0, nbytes))
check(runtime.cudaMemcpy(hy2, dy, nbytes, runtime.cudaMemcpyKind.cudaMemcpyDeviceToHost))
ok2 = not hy2.any()
print(f"memset and copy back: {'ok' if ok2 else 'WRONG'}")

for event in (uploaded, start, stop):
    check(runtime.cudaEventDestroy(event))
check(driver.cuStreamDestroy(copy_stream))
check(runtime.cudaStreamDestroy(stream))
for ptr in (dx, dy):
    check(driver.cuMemFree(ptr))
check(runtime.cudaFree(dout))
check(driver.cuModuleUnload(module))
check(nvrtc.nvrtcDestroyProgram(prog))
check(driver.cuDevicePrimaryCtxRelease(device))
sys.exit(0 if ok and ok2 else 1)
