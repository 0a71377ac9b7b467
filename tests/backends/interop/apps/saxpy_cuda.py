"""A cuda-python program in the older layout (``from cuda import cuda, cudart, nvrtc``,
cuda-python 11/12): saxpy compiled with nvrtc and launched through the driver API with
ctypes-built kernelParams, its input in pinned host memory (cudaMallocHost), streams and
events through the runtime API. Under hip-python 7.x's interop layer every call is a HIP
call. Prints one line per check; exits non-zero on a wrong result."""
import ctypes
import sys

import numpy as np
from cuda import cuda, cudart, nvrtc

SAXPY = b"""\
extern "C" __global__
void saxpy(float a, const float *x, const float *y, float *out, unsigned int n)
{
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        out[i] = a * x[i] + y[i];
}
"""


def check(result):
    """cuda-python's idiom: the first item is the error, the rest the outputs."""
    err, *outs = result
    if err.value if hasattr(err, "value") else int(err):
        raise RuntimeError(f"CUDA error {err!r}")
    return outs[0] if len(outs) == 1 else (outs or None)


check(cuda.cuInit(0))
device = check(cuda.cuDeviceGet(0))
sms = check(cudart.cudaDeviceGetAttribute(cudart.cudaDeviceAttr.cudaDevAttrMultiProcessorCount, 0))
context = check(cuda.cuDevicePrimaryCtxRetain(device))
check(cuda.cuCtxSetCurrent(context))

prog = check(nvrtc.nvrtcCreateProgram(SAXPY, b"saxpy.cu", 0, [], []))
opts = [b"--fmad=false"]
check(nvrtc.nvrtcCompileProgram(prog, len(opts), opts))
size = check(nvrtc.nvrtcGetPTXSize(prog))
ptx = b" " * size
check(nvrtc.nvrtcGetPTX(prog, ptx))
ptx = np.frombuffer(ptx, dtype=np.uint8)   # cuda-python's examples use np.char.array, deprecated in numpy 2.5
module = check(cuda.cuModuleLoadData(ptx.ctypes.data))
kernel = check(cuda.cuModuleGetFunction(module, b"saxpy"))

n = 3000
nbytes = n * 4
# x lives in pinned host memory, filled through its address
pinned = check(cudart.cudaMallocHost(nbytes, cudart.cudaHostAllocDefault))
hx = np.ctypeslib.as_array((ctypes.c_float * n).from_address(int(pinned)))
hx[:] = np.linspace(-1.0, 1.0, n, dtype=np.float32)
hy = np.arange(n, dtype=np.float32)
hout = np.empty(n, dtype=np.float32)

dy = check(cudart.cudaMalloc(nbytes))
dout = check(cuda.cuMemAlloc(nbytes))
stream = check(cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking))
start = check(cudart.cudaEventCreate())
stop = check(cudart.cudaEventCreateWithFlags(cudart.cudaEventDefault))

check(cudart.cudaMemcpyAsync(dy, hy, nbytes, cudart.cudaMemcpyKind.cudaMemcpyHostToDevice, stream))
check(cuda.cuMemsetD32Async(dout, 0x7FC00000, n, stream))   # NaN everywhere the kernel misses

# kernelParams as a ctypes array of the arguments' addresses; the kernel reads x straight
# from pinned host memory, as a GPU does
a = ctypes.c_float(-3.0)
ptrs = [ctypes.c_void_p(int(p)) for p in (pinned, dy, dout)]
count = ctypes.c_uint(n)
values = [a, *ptrs, count]
params = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
blocks = max(1, int(sms))


def saxpy_round(label):
    """Launch, copy the result back, check it against numpy."""
    check(cudart.cudaEventRecord(start, stream))
    check(cuda.cuLaunchKernel(kernel, blocks, 1, 1, 64, 1, 1, 0, stream, ctypes.addressof(params), 0))
    check(cudart.cudaEventRecord(stop, stream))
    check(cudart.cudaMemcpyAsync(hout, dout, nbytes, cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost, stream))
    check(cudart.cudaStreamSynchronize(stream))
    elapsed = check(cudart.cudaEventElapsedTime(start, stop))
    good = np.array_equal(hout, np.float32(-3.0) * hx + hy)
    print(f"saxpy over {n} floats, {label}: {'ok' if good else 'WRONG'} (elapsed {'>= 0' if elapsed >= 0 else '< 0'})")
    return good


ok = saxpy_round("first x")
hx *= 2     # the host rewrites the pinned input: the next launch must see the new values
ok = saxpy_round("x doubled") and ok

# device to device, then back through the synchronous driver call
check(cuda.cuMemcpyDtoD(dy, dout, nbytes))
back = np.empty(n, dtype=np.float32)
check(cuda.cuMemcpyDtoH(back.ctypes.data, dy, nbytes))
ok2 = np.array_equal(back, hout)
print(f"device-to-device copy: {'ok' if ok2 else 'WRONG'}")

check(cudart.cudaEventDestroy(start))
check(cudart.cudaEventDestroy(stop))
check(cudart.cudaStreamDestroy(stream))
check(cudart.cudaFree(dy))
check(cuda.cuMemFree(dout))
check(cudart.cudaFreeHost(pinned))
check(cuda.cuModuleUnload(module))
check(nvrtc.nvrtcDestroyProgram(prog))
check(cuda.cuDevicePrimaryCtxRelease(device))
sys.exit(0 if ok and ok2 else 1)
