"""A hip-python program with its own HIP C++ kernels (integer and floating point), written to
be captured on an NVIDIA GPU (``hrr capture --content --backend cuda``) and replayed on the
sim: ``tests/backends/sim/native/h200/`` holds such an archive, made on an H200."""
import ctypes

import numpy as np
from hip import hip, hiprtc

SOURCE = b"""
#include <hip/hip_runtime.h>
struct Params { float scale; unsigned n; };

extern "C" __global__ void histogram(unsigned* bins, const unsigned char* data, unsigned n) {
  __shared__ unsigned local[64];
  for (unsigned i = threadIdx.x; i < 64; i += blockDim.x) local[i] = 0;
  __syncthreads();
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&local[data[i] & 63], 1u);
  __syncthreads();
  for (unsigned i = threadIdx.x; i < 64; i += blockDim.x) atomicAdd(&bins[i], local[i]);
}

extern "C" __global__ void scaled_sqrt(float* out, const float* in, Params p) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.n) out[i] = p.scale * sqrtf(in[i]);
}
"""


class Params(ctypes.Structure):
    _fields_ = [("scale", ctypes.c_float), ("n", ctypes.c_uint32)]


def ok(result):
    err = result[0]
    if int(err) != 0:
        raise RuntimeError(str(err))
    return result[1] if len(result) == 2 else result[1:]


prog = ok(hiprtc.hiprtcCreateProgram(SOURCE, b"gpu_to_cpu.hip", 0, [], []))
if int(hiprtc.hiprtcCompileProgram(prog, 2, [b"--offload-arch=gfx90a", b"-O3"])[0]) != 0:
    log = bytearray(ok(hiprtc.hiprtcGetProgramLogSize(prog)))
    hiprtc.hiprtcGetProgramLog(prog, log)
    raise RuntimeError(log.decode())
code = bytearray(ok(hiprtc.hiprtcGetCodeSize(prog)))
ok(hiprtc.hiprtcGetCode(prog, code))
module = ok(hip.hipModuleLoadData(code))
histogram = ok(hip.hipModuleGetFunction(module, b"histogram"))
scaled_sqrt = ok(hip.hipModuleGetFunction(module, b"scaled_sqrt"))

data = (np.arange(100_000, dtype=np.uint64) * 2654435761 % 251).astype(np.uint8)
d_data, d_bins = ok(hip.hipMalloc(data.nbytes)), ok(hip.hipMalloc(256))
ok(hip.hipMemcpy(d_data, data, data.nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice))
ok(hip.hipMemset(d_bins, 0, 256))
ok(hip.hipModuleLaunchKernel(histogram, 16, 1, 1, 256, 1, 1, 0, None, None,
                             (d_bins, d_data, ctypes.c_uint32(data.size))))
bins = np.zeros(64, np.uint32)
ok(hip.hipMemcpy(bins, d_bins, 256, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
assert (bins == np.bincount(data & 63, minlength=64)).all(), "histogram"

x = np.linspace(0, 100, 4096, dtype=np.float32)
d_x, d_y = ok(hip.hipMalloc(x.nbytes)), ok(hip.hipMalloc(x.nbytes))
ok(hip.hipMemcpy(d_x, x, x.nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice))
p = Params(1.5, x.size)
y_ptr, x_ptr = ctypes.c_void_p(int(d_y)), ctypes.c_void_p(int(d_x))
args = (ctypes.c_void_p * 3)(ctypes.addressof(y_ptr), ctypes.addressof(x_ptr), ctypes.addressof(p))
ok(hip.hipModuleLaunchKernel(scaled_sqrt, 16, 1, 1, 256, 1, 1, 0, None, args, None))
y = np.zeros_like(x)
ok(hip.hipMemcpy(y, d_y, y.nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
assert np.allclose(y, 1.5 * np.sqrt(x), rtol=1e-6), "scaled_sqrt"
for d in (d_data, d_bins, d_x, d_y):
    ok(hip.hipFree(d))
ok(hip.hipModuleUnload(module))
print("ok")
