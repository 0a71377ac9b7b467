"""An app that calls every catalogued HIP API at least once (hipLaunchHostFunc aside:
it is application host code, which no archive can replay)."""
from __future__ import annotations

import ctypes

import numpy as np

from device_api_app import exercise_device
from hrrtest import libraries_of
from mathlib_app import exercise_libraries
from rtc_app import exercise_rtc

KERNEL_SOURCE = b"""
extern "C" __global__ void fill_u32(unsigned int* dst, unsigned int value, unsigned int n) {}
extern "C" __global__ void add_u32(unsigned int* dst, const unsigned int* a, const unsigned int* b, unsigned int n) {}
extern "C" __global__ void sum_u32(unsigned int* dst, const unsigned int* src, unsigned int n) {}
"""


def ok(result):
    assert int(result[0]) == 0, result
    return result[1] if len(result) == 2 else result[1:]


def exercise(hip, hiprtc, backend) -> dict:
    """Returns the host results the app computed (for comparison with replay)."""
    H2D = hip.hipMemcpyKind.hipMemcpyHostToDevice
    D2H = hip.hipMemcpyKind.hipMemcpyDeviceToHost
    D2D = hip.hipMemcpyKind.hipMemcpyDeviceToDevice
    DEF = hip.hipMemcpyKind.hipMemcpyDefault
    ok(hip.hipInit(0) + (None,))
    assert ok(hip.hipGetDeviceCount()) >= 1
    ok(hip.hipGetDevice())
    ok(hip.hipSetDevice(0) + (None,))
    ok(hip.hipGetDeviceProperties(0))
    hip.hipGetErrorName(hip.hipError_t.hipErrorInvalidValue)
    hip.hipGetErrorString(hip.hipError_t.hipErrorInvalidValue)
    hip.hipMemGetInfo()
    exercise_device(hip)   # the device section's rows (issue 10)
    n = 64
    nbytes = n * 4
    d = ok(hip.hipMalloc(nbytes))
    d2 = ok(hip.hipMalloc(nbytes))
    hip.hipPointerGetAttributes(d)
    s = ok(hip.hipStreamCreate())
    s2 = ok(hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking))
    e1 = ok(hip.hipEventCreate())
    e2 = ok(hip.hipEventCreateWithFlags(0))
    src = np.arange(n, dtype=np.uint32) * 3 + 1
    out = {}
    assert hip.hipMemset(d, 1, nbytes)[0] == 0
    assert hip.hipMemsetAsync(d2, 2, nbytes, s)[0] == 0
    assert hip.hipMemcpy(d, src, nbytes, H2D)[0] == 0
    assert hip.hipMemcpyAsync(d2, src[::-1].copy(), nbytes, H2D, s)[0] == 0
    assert hip.hipMemcpyHtoD(d, src, nbytes)[0] == 0
    assert hip.hipMemcpyHtoDAsync(d2, src + 5, nbytes, s)[0] == 0
    assert hip.hipMemcpyDtoD(d, d2, nbytes)[0] == 0
    assert hip.hipMemcpyDtoDAsync(d2, d, nbytes, s)[0] == 0
    a = np.zeros(n, np.uint32)
    assert hip.hipMemcpyDtoH(a, d, nbytes)[0] == 0
    out["dtoh"] = a.copy()
    b = np.zeros(n, np.uint32)
    assert hip.hipMemcpyDtoHAsync(b, d2, nbytes, s)[0] == 0
    assert hip.hipEventRecord(e1, s)[0] == 0
    assert hip.hipStreamWaitEvent(s2, e1, 0)[0] == 0
    assert hip.hipEventRecord(e2, s)[0] == 0
    assert hip.hipStreamSynchronize(s)[0] == 0
    out["dtoh_async"] = b.copy()
    assert hip.hipEventSynchronize(e2)[0] == 0
    hip.hipEventQuery(e2)
    hip.hipEventElapsedTime(e1, e2)
    hip.hipStreamQuery(s)
    # pinned host memory
    p1 = ok(hip.hipHostMalloc(nbytes, hip.hipHostMallocMapped))
    p2 = ok(hip.hipMallocHost(nbytes))
    p3 = ok(hip.hipHostAlloc(nbytes, 0))
    reg = np.zeros(n, np.uint32) + 9
    assert hip.hipHostRegister(reg, nbytes, hip.hipHostRegisterMapped)[0] == 0
    ok(hip.hipHostGetDevicePointer(p1, 0))
    pin = np.frombuffer((ctypes.c_uint8 * nbytes).from_address(int(p1)), dtype=np.uint32)
    pin[:] = np.arange(n, dtype=np.uint32) + 100
    assert hip.hipMemcpy(d, p1, nbytes, DEF)[0] == 0            # pinned source
    assert hip.hipMemcpy(p2, d, nbytes, D2H)[0] == 0            # pinned destination
    out["pinned_dst"] = np.frombuffer((ctypes.c_uint8 * nbytes).from_address(int(p2)), dtype=np.uint32).copy()
    assert hip.hipMemcpy(d2, reg, nbytes, H2D)[0] == 0          # registered source
    assert hip.hipMemcpyAsync(p3, d2, nbytes, D2D if False else D2H, s)[0] == 0
    assert hip.hipStreamWriteValue32(s, int(p1), 77, 0)[0] == 0
    assert hip.hipStreamWaitValue32(s, int(p1), 77, hip.hipStreamWaitValueEq, 0xFFFFFFFF)[0] == 0
    assert hip.hipDeviceSynchronize()[0] == 0
    out["pinned_async"] = np.frombuffer((ctypes.c_uint8 * nbytes).from_address(int(p3)), dtype=np.uint32).copy()
    am = ok(hip.hipMallocAsync(nbytes, s))
    assert hip.hipMemsetAsync(am, 3, nbytes, s)[0] == 0
    assert hip.hipFreeAsync(am, s)[0] == 0
    # modules and launches (code object compiled with hiprtc, as an app would)
    err, prog = hiprtc.hiprtcCreateProgram(KERNEL_SOURCE, b"k.cu", 0, [], [])
    assert int(err) == 0
    assert int(hiprtc.hiprtcCompileProgram(prog, 0, [])[0]) == 0
    size = hiprtc.hiprtcGetCodeSize(prog)[1]
    code = bytearray(size)
    hiprtc.hiprtcGetCode(prog, code)
    hiprtc.hiprtcDestroyProgram(prog)
    out["rtc"] = exercise_rtc(hip, hiprtc)   # the rest of hiprtc, the link API included
    out["libraries"] = exercise_libraries(hip, libraries_of(backend))   # hipBLAS, ...
    mod = ok(hip.hipModuleLoadData(bytes(code)))
    fill = ok(hip.hipModuleGetFunction(mod, b"fill_u32"))
    add = ok(hip.hipModuleGetFunction(mod, b"add_u32"))
    total = ok(hip.hipModuleGetFunction(mod, b"sum_u32"))
    dp, v, cnt = ctypes.c_void_p(int(d)), ctypes.c_uint32(5), ctypes.c_uint32(n)
    assert hip.hipModuleLaunchKernel(fill, 2, 1, 1, 32, 1, 1, 0, s,
                                     [ctypes.addressof(dp), ctypes.addressof(v), ctypes.addressof(cnt)], None)[0] == 0
    args = [ctypes.addressof(x) for x in (ctypes.c_void_p(int(d2)), ctypes.c_void_p(int(d)),
                                           ctypes.c_void_p(int(d2)), ctypes.c_uint32(n))]
    keep = args  # noqa: F841 - the ctypes values must outlive the launch call
    a_args = (ctypes.c_void_p(int(d2)), ctypes.c_void_p(int(d)), ctypes.c_void_p(int(d2)), ctypes.c_uint32(n))
    assert hip.hipLaunchKernel(add, hip.dim3(x=1), hip.dim3(x=64), [ctypes.addressof(x) for x in a_args], 0, s)[0] == 0
    # stream capture and graphs
    assert hip.hipStreamBeginCapture(s, hip.hipStreamCaptureMode.hipStreamCaptureModeGlobal)[0] == 0
    hip.hipStreamIsCapturing(s)
    hip.hipStreamGetCaptureInfo(s)
    hip.hipThreadExchangeStreamCaptureMode()
    assert hip.hipModuleLaunchKernel(total, 1, 1, 1, 64, 1, 1, 0, s, None,
                                     (d, d2, ctypes.c_uint32(n)))[0] == 0
    graph = ok(hip.hipStreamEndCapture(s))
    ge = hip.hipGraphInstantiate(graph, 0)
    assert int(ge[0]) == 0
    ge2 = ok(hip.hipGraphInstantiateWithFlags(graph, 0))
    for _ in range(2):
        assert hip.hipGraphLaunch(ge[1], s)[0] == 0
    assert hip.hipGraphLaunch(ge2, s2)[0] == 0
    res = np.zeros(n, np.uint32)
    assert hip.hipMemcpyAsync(res, d, nbytes, D2H, s2)[0] == 0
    assert hip.hipStreamSynchronize(s2)[0] == 0
    out["graph_sum"] = res.copy()
    hip.hipGetLastError()
    hip.hipPeekAtLastError()
    # an error the GPU gives, recorded and expected again at replay
    assert hip.hipFree(d2)[0] == 0
    assert hip.hipFree(d2)[0] == hip.hipError_t.hipErrorInvalidValue
    for call in (hip.hipGraphExecDestroy(ge[1]), hip.hipGraphExecDestroy(ge2), hip.hipGraphDestroy(graph),
                 hip.hipModuleUnload(mod), hip.hipHostUnregister(reg), hip.hipHostFree(p1),
                 hip.hipFreeHost(p2), hip.hipHostFree(p3), hip.hipFree(d), hip.hipEventDestroy(e1),
                 hip.hipEventDestroy(e2), hip.hipStreamDestroy(s), hip.hipStreamDestroy(s2)):
        assert int(call[0]) == 0, call
    # a reset takes what is still allocated with it; the device works on afterwards
    left_dev = ok(hip.hipMalloc(64))
    left_pinned = ok(hip.hipHostMalloc(64, 0))
    assert left_dev and left_pinned
    ok(hip.hipDeviceReset() + (None,))
    d3 = ok(hip.hipMalloc(16))
    src = np.arange(4, dtype=np.uint32) + 7
    ok(hip.hipMemcpy(d3, src, 16, H2D) + (None,))
    back = np.zeros(4, np.uint32)
    ok(hip.hipMemcpy(back, d3, 16, D2H) + (None,))
    assert (back == src).all()
    ok(hip.hipFree(d3) + (None,))
    out.update(_memory_module_rows(hip, hiprtc, backend))
    from pool_app import exercise_pools   # stream-ordered allocation, memory pools, CU masks
    pools = exercise_pools(hip, errors=getattr(backend, "NAME", "") == "sim")
    out.update({f"pool_{k}": v for k, v in pools.items()})
    from graph_api_app import exercise as exercise_graph_rows   # streams, events, graphs (issue 10)
    out.update(exercise_graph_rows(hip, hiprtc))
    return out


def _memory_module_rows(hip, hiprtc, backend) -> dict:
    """The memory and module/launch rows of issue 10 (tests/roundtrip/memory_module_app.py)."""
    import tempfile

    from memory_module_app import exercise as exercise_memory
    with tempfile.TemporaryDirectory() as work:
        return {f"memory_{k}": v for k, v in exercise_memory(hip, hiprtc, backend, work, host_writes=False).items()}
