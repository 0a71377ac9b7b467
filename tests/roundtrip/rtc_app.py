"""An app that calls every hiprtc function, as hip-python's linking example does: two
programs compiled with ``-fgpu-rdc`` (a kernel calling a device function the other
defines), linked, loaded and launched; the result copied back (a device effect replay
checks). It runs unchanged on the sim (fill_u32 is a built-in kernel) and on cuda."""
from __future__ import annotations

import ctypes
import os
import tempfile

import numpy as np

KERNEL = b"""
__device__ unsigned int pick(unsigned int v);  // defined by the other program
extern "C" __global__ void fill_u32(unsigned int* dst, unsigned int value, unsigned int n) {
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        dst[i] = pick(value);
}
"""
DEVICE_FN = b"""
__device__ unsigned int pick(unsigned int v) {
    if (v == 0xdeadbeef) printf("tid %d\\n", (int) threadIdx.x);  // printf works (never taken here)
    return v;
}
"""
N = 64


def ok(result):
    assert int(result[0]) == 0, result
    return result[1] if len(result) == 2 else result[1:]


def compile_rdc(hiprtc, source: bytes, name: bytes, arch) -> tuple:
    prog = ok(hiprtc.hiprtcCreateProgram(source, name, 0, [], []))
    cflags = [b"--offload-arch=" + (arch if isinstance(arch, bytes) else arch.encode()), b"-fgpu-rdc", "-O3"]
    err = hiprtc.hiprtcCompileProgram(prog, len(cflags), cflags)[0]
    log = bytearray(ok(hiprtc.hiprtcGetProgramLogSize(prog)))
    ok(hiprtc.hiprtcGetProgramLog(prog, log) + (None,))
    assert int(err) == 0, log.decode(errors="replace")
    bitcode = bytearray(ok(hiprtc.hiprtcGetBitcodeSize(prog)))
    ok(hiprtc.hiprtcGetBitcode(prog, bitcode) + (None,))
    return prog, bitcode, bytes(log)


def exercise_rtc(hip, hiprtc) -> dict:
    """Every hiprtc call; returns what the program computed and saw."""
    out: dict = {}
    major, minor = ok(hiprtc.hiprtcVersion())
    out["version"] = (major, minor)
    out["error_string"] = str(ok(hiprtc.hiprtcGetErrorString(hiprtc.hiprtcResult.HIPRTC_ERROR_LINKING)))
    arch = ok(hip.hipGetDeviceProperties(0)).gcnArchName
    # a whole program with a name expression
    plain = ok(hiprtc.hiprtcCreateProgram(KERNEL.replace(b"pick(value)", b"value"), b"plain.cu", 0, [], []))
    ok(hiprtc.hiprtcAddNameExpression(plain, b"fill_u32") + (None,))
    assert int(hiprtc.hiprtcCompileProgram(plain, 1, [b"-std=c++17"])[0]) == 0
    out["lowered"] = str(ok(hiprtc.hiprtcGetLoweredName(plain, b"fill_u32")))
    code = bytearray(ok(hiprtc.hiprtcGetCodeSize(plain)))
    ok(hiprtc.hiprtcGetCode(plain, code) + (None,))
    ok(hiprtc.hiprtcDestroyProgram(plain.createRef()) + (None,))
    # two relocatable programs, linked as hip-python's example links them
    kernel, kernel_bc, out["log"] = compile_rdc(hiprtc, KERNEL, b"kernel", arch)
    device_fn, device_bc, _ = compile_rdc(hiprtc, DEVICE_FN, b"device_fn", arch)
    kind = hiprtc.hiprtcJITInputType.HIPRTC_JIT_INPUT_LLVM_BITCODE
    state = ok(hiprtc.hiprtcLinkCreate(0, None, None))
    ok(hiprtc.hiprtcLinkAddData(state, kind, kernel_bc, len(kernel_bc), b"kernel", 0, None, None) + (None,))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "device_fn.o")
        with open(path, "wb") as f:
            f.write(device_bc)
        ok(hiprtc.hiprtcLinkAddFile(state, kind, path.encode(), 0, None, None) + (None,))
        image, size = ok(hiprtc.hiprtcLinkComplete(state))
    assert size == len(bytes(image))
    module = ok(hip.hipModuleLoadData(image))
    ok(hiprtc.hiprtcLinkDestroy(state) + (None,))
    for prog in (kernel, device_fn):
        ok(hiprtc.hiprtcDestroyProgram(prog.createRef()) + (None,))
    fill = ok(hip.hipModuleGetFunction(module, b"fill_u32"))
    d = ok(hip.hipMalloc(N * 4))
    ok(hip.hipModuleLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, None, None,
                                 (d, ctypes.c_uint32(7), ctypes.c_uint32(N))) + (None,))
    res = np.zeros(N, np.uint32)
    ok(hip.hipMemcpy(res, d, N * 4, hip.hipMemcpyKind.hipMemcpyDeviceToHost) + (None,))
    out["filled"] = res
    ok(hip.hipFree(d) + (None,))
    ok(hip.hipModuleUnload(module) + (None,))
    return out
