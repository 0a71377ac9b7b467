"""An app that calls every memory and module/launch row of issue 10 (cat-memory) at least
once, with results the replay checks byte for byte."""
from __future__ import annotations

import ctypes

import numpy as np
from graph_api_app import KERNELS

# the graph app's fill_u32/add_u32, with a device global for hipModuleGetGlobal
KERNEL_SOURCE = b"__device__ unsigned int hrr_table[16];\n" + KERNELS


def ok(result):
    assert int(result[0]) == 0, result
    return None if len(result) == 1 else result[1] if len(result) == 2 else result[1:]


def _module(hip, hiprtc, tmp_dir):
    err, prog = hiprtc.hiprtcCreateProgram(KERNEL_SOURCE, b"k.cu", 0, [], [])
    assert int(err) == 0
    assert int(hiprtc.hiprtcCompileProgram(prog, 0, [])[0]) == 0
    code = bytearray(hiprtc.hiprtcGetCodeSize(prog)[1])
    hiprtc.hiprtcGetCode(prog, code)
    hiprtc.hiprtcDestroyProgram(prog)
    path = f"{tmp_dir}/kernels.co"
    with open(path, "wb") as f:
        f.write(bytes(code))
    return bytes(code), path


def exercise(hip, hiprtc, backend, tmp_dir, host_writes: bool = True) -> dict:
    """Returns the host results the app computed. ``host_writes``: the host fills managed
    memory at its address (replay needs the pinned-snapshot plugin), else with a copy."""
    H2D = hip.hipMemcpyKind.hipMemcpyHostToDevice
    D2H = hip.hipMemcpyKind.hipMemcpyDeviceToHost
    D2D = hip.hipMemcpyKind.hipMemcpyDeviceToDevice
    out: dict = {}
    s = ok(hip.hipStreamCreate())
    n = 64
    d = ok(hip.hipMalloc(n * 4))
    # memsets of each width, synchronous and on a stream
    ok(hip.hipMemsetD8(d, 0x11, 16))
    ok(hip.hipMemsetD16(int(d) + 16, 0x2233, 8))
    ok(hip.hipMemsetD32(int(d) + 32, 0x44556677, 8))
    ok(hip.hipMemsetD8Async(int(d) + 64, 0x88, 16, s))
    ok(hip.hipMemsetD16Async(int(d) + 80, 0x99AA, 8, s))
    ok(hip.hipMemsetD32Async(int(d) + 96, 0xBBCCDDEE, 8, s))
    ok(hip.hipStreamSynchronize(s))
    a = np.zeros(n, np.uint32)
    ok(hip.hipMemcpyDtoH(a, d, n * 4))
    out["memsets"] = a.copy()
    # pitched memory, 2D memsets and copies (host rows narrower than their pitch)
    width, height = 24, 5
    pd, pitch = ok(hip.hipMallocPitch(width, height))
    pd2, pitch2 = ok(hip.hipMemAllocPitch(width, height, 4))
    assert pitch >= width and pitch2 >= width
    ok(hip.hipMemset2D(pd, pitch, 0x5A, width, height))
    ok(hip.hipMemsetD2D8(pd2, pitch2, 0x01, width, height))
    ok(hip.hipMemsetD2D16(pd2, pitch2, 0x0203, width // 2, 2))
    ok(hip.hipMemsetD2D32(pd2, pitch2, 0x04050607, width // 4, 1))
    ok(hip.hipMemset2DAsync(pd, pitch, 0x6B, width // 2, height, s))
    host_pitch = 40
    src = (np.arange(host_pitch * height, dtype=np.uint32) % 251).astype(np.uint8)
    ok(hip.hipMemcpy2D(pd, pitch, src, host_pitch, width, height, H2D))
    ok(hip.hipMemcpy2DAsync(pd2, pitch2, pd, pitch, width // 2, height, D2D, s))
    dst = np.full(host_pitch * height, 0xEE, np.uint8)   # the gaps are never written
    ok(hip.hipMemcpy2D(dst, host_pitch, pd2, pitch2, width, height, D2H))
    out["copy2d"] = dst.copy()
    dst2 = np.zeros(32 * height, np.uint8)
    ok(hip.hipMemcpy2DAsync(dst2, 32, pd, pitch, width, height, D2H, s))
    ok(hip.hipStreamSynchronize(s))
    out["copy2d_async"] = dst2.copy()
    # stream copies and peer copies (device 0 to itself)
    b = np.arange(n, dtype=np.uint32) * 7
    ok(hip.hipMemcpyWithStream(d, b, n * 4, H2D, s))
    d2 = ok(hip.hipExtMallocWithFlags(n * 4, 0))
    ok(hip.hipMemcpyPeer(d2, 0, d, 0, n * 4))
    ok(hip.hipMemcpyPeerAsync(d, 0, d2, 0, 32, s))
    c = np.zeros(n, np.uint32)
    ok(hip.hipMemcpyWithStream(c, d2, n * 4, D2H, s))
    out["with_stream"] = c.copy()
    # managed memory: the host writes it at its address, a kernel reads it
    m = ok(hip.hipMallocManaged(n * 4, hip.hipMemAttachGlobal))
    managed = np.frombuffer((ctypes.c_uint8 * (n * 4)).from_address(int(m)), dtype=np.uint32)
    if host_writes:
        managed[:] = np.arange(n, dtype=np.uint32) + 1000
    else:
        ok(hip.hipMemcpy(m, np.arange(n, dtype=np.uint32) + 1000, n * 4, H2D))
    ok(hip.hipMemAdvise(m, n * 4, hip.hipMemoryAdvise.hipMemAdviseSetReadMostly, 0))
    ok(hip.hipMemPrefetchAsync(m, n * 4, 0, s))
    answer = (ctypes.c_int32 * 2)()
    ok(hip.hipMemRangeGetAttribute(answer, 4, hip.hipMemRangeAttribute.hipMemRangeAttributeReadMostly, m, n * 4))
    word = ctypes.c_uint64(0)
    ok(hip.hipPointerGetAttribute(ctypes.addressof(word), hip.hipPointer_attribute.HIP_POINTER_ATTRIBUTE_RANGE_SIZE, d))
    hip.hipMemGetAddressRange(int(d) + 8)
    hip.hipMemPtrGetInfo(d)
    ph = ok(hip.hipMemAllocHost(64))
    hip.hipHostGetFlags(ph)
    # modules, attributes and occupancy
    code, path = _module(hip, hiprtc, tmp_dir)
    mod = ok(hip.hipModuleLoadDataEx(code, 0, None))[0]
    mod2 = ok(hip.hipModuleLoad(path.encode()))
    assert ok(hip.hipModuleGetFunctionCount(mod)) >= 1
    # the sim's built-in library declares no globals (NotFound); NVRTC's module has it
    assert int(hip.hipModuleGetGlobal(mod, b"hrr_table")[0]) in (0, int(hip.hipError_t.hipErrorNotFound))
    add = ok(hip.hipModuleGetFunction(mod, b"add_u32"))
    fill = ok(hip.hipModuleGetFunction(mod2, b"fill_u32"))
    ok(hip.hipFuncGetAttributes(add))
    ok(hip.hipFuncGetAttribute(hip.hipFunction_attribute.HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, add))
    ok(hip.hipFuncSetAttribute(add, hip.hipFuncAttribute.hipFuncAttributeMaxDynamicSharedMemorySize, 1024))
    ok(hip.hipFuncSetCacheConfig(add, hip.hipFuncCache_t.hipFuncCachePreferNone))
    ok(hip.hipFuncSetSharedMemConfig(add, hip.hipSharedMemConfig.hipSharedMemBankSizeDefault))
    ok(hip.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(add, 64, 0))
    ok(hip.hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(add, 64, 0, 0))
    ok(hip.hipModuleOccupancyMaxPotentialBlockSize(add, 0, 0))
    ok(hip.hipModuleOccupancyMaxPotentialBlockSizeWithFlags(add, 0, 256, 0))
    ok(hip.hipOccupancyMaxPotentialBlockSize(add, 0, 0))
    ok(hip.hipOccupancyMaxActiveBlocksPerMultiprocessor(add, 128, 0))
    # launches: the ext launch between two events, the cooperative ones; d = managed + d2
    e1, e2 = ok(hip.hipEventCreate()), ok(hip.hipEventCreate())
    vals = (ctypes.c_void_p(int(d)), ctypes.c_void_p(int(m)), ctypes.c_void_p(int(d2)), ctypes.c_uint32(n))
    ok(hip.hipExtLaunchKernel(add, hip.dim3(x=1), hip.dim3(x=64), [ctypes.addressof(v) for v in vals], 0, s,
                              e1, e2, 0))
    ok(hip.hipEventSynchronize(e2))
    fvals = (ctypes.c_void_p(int(d2)), ctypes.c_uint32(9), ctypes.c_uint32(n // 2))
    ok(hip.hipModuleLaunchCooperativeKernel(fill, 1, 1, 1, 32, 1, 1, 0, s, [ctypes.addressof(v) for v in fvals]))
    vals2 = (ctypes.c_void_p(int(d2)), ctypes.c_void_p(int(d2)), ctypes.c_void_p(int(d)), ctypes.c_uint32(n))
    ok(hip.hipLaunchCooperativeKernel(add, hip.dim3(x=1), hip.dim3(x=64), [ctypes.addressof(v) for v in vals2], 0, s))
    ok(hip.hipStreamSynchronize(s))
    r1, r2 = np.zeros(n, np.uint32), np.zeros(n, np.uint32)
    ok(hip.hipMemcpyDtoH(r1, d, n * 4))
    ok(hip.hipMemcpyDtoH(r2, d2, n * 4))
    out["launches"] = (r1.copy(), r2.copy())
    for call in (hip.hipModuleUnload(mod), hip.hipModuleUnload(mod2), hip.hipFree(m), hip.hipFree(d),
                 hip.hipFree(d2), hip.hipFree(pd), hip.hipFree(pd2), hip.hipHostFree(ph),
                 hip.hipEventDestroy(e1), hip.hipEventDestroy(e2), hip.hipStreamDestroy(s)):
        assert int(call[0]) == 0, call
    return out
