"""The cuda backend's memory and module/launch bodies of issue 10, checked without a GPU
against test_table_cpu's fake driver: each makes exactly the CUDA call (name, arguments,
order) and converts its outputs."""
from __future__ import annotations

import ctypes

import pytest

from hrr import hiptypes as ht
from hrr.backends.cuda import module_calls, modules
from hrr.hiptypes.kernargs import POINTER, VALUE, KernelLayout, ParamSpec
from test_table_cpu import cuda  # noqa: F401 - the fake-driver fixture

E = ht.hipError_t
S, EV, F, M, P = ht.ihipStream_t(0x51), ht.ihipEvent_t(0x52), ht.ihipModuleSymbol_t(0x55), ht.ihipModule_t(0x56), 0x1000
D2H = ht.hipMemcpyKind.hipMemcpyDeviceToHost

CASES = [
    ("hipMemsetD8", (P, 0x1FF, 8), ("drv", "cuMemsetD8", (P, 0xFF, 8))),
    ("hipMemsetD16", (P, 0x12345, 8), ("drv", "cuMemsetD16", (P, 0x2345, 8))),
    ("hipMemsetD32", (P, -1, 8), ("drv", "cuMemsetD32", (P, 0xFFFFFFFF, 8))),
    ("hipMemsetD8Async", (P, 7, 8, S), ("drv", "cuMemsetD8Async", (P, 7, 8, 0x51))),
    ("hipMemsetD16Async", (P, 7, 8, S), ("drv", "cuMemsetD16Async", (P, 7, 8, 0x51))),
    ("hipMemsetD32Async", (P, 7, 8, None), ("drv", "cuMemsetD32Async", (P, 7, 8, 0))),
    ("hipMemset2D", (P, 512, 3, 100, 4), ("rt", "cudaMemset2D", (P, 512, 3, 100, 4))),
    ("hipMemset2DAsync", (P, 512, 3, 100, 4, S), ("rt", "cudaMemset2DAsync", (P, 512, 3, 100, 4, 0x51))),
    ("hipMemsetD2D8", (P, 512, 0x101, 100, 4), ("drv", "cuMemsetD2D8", (P, 512, 1, 100, 4))),
    ("hipMemsetD2D16", (P, 512, 2, 50, 4), ("drv", "cuMemsetD2D16", (P, 512, 2, 50, 4))),
    ("hipMemsetD2D32", (P, 512, 3, 25, 4), ("drv", "cuMemsetD2D32", (P, 512, 3, 25, 4))),
    ("hipMemcpy2D", (P, 512, P + 8, 128, 100, 4, D2H), ("rt", "cudaMemcpy2D", (P, 512, P + 8, 128, 100, 4, 2))),
    ("hipMemcpy2DAsync", (P, 512, P + 8, 128, 100, 4, ht.hipMemcpyKind.hipMemcpyDeviceToDeviceNoCU, S),
     ("rt", "cudaMemcpy2DAsync", (P, 512, P + 8, 128, 100, 4, 3, 0x51))),
    ("hipMemcpyPeer", (P, 1, P + 8, 0, 64), ("rt", "cudaMemcpyPeer", (P, 1, P + 8, 0, 64))),
    ("hipMemcpyPeerAsync", (P, 1, P + 8, 0, 64, S), ("rt", "cudaMemcpyPeerAsync", (P, 1, P + 8, 0, 64, 0x51))),
    ("hipFuncSetAttribute", (F, 8, 4096), ("drv", "cuFuncSetAttribute", (0x55, 8, 4096))),
    ("hipFuncSetCacheConfig", (F, 2), ("drv", "cuFuncSetCacheConfig", (0x55, 2))),
    ("hipFuncSetSharedMemConfig", (F, 1), ("drv", "cuFuncSetSharedMemConfig", (0x55, 1))),
]


@pytest.mark.parametrize("name,args,expected", CASES, ids=[c[0] for c in CASES])
def test_one_call_rows_make_the_cuda_call(cuda, name, args, expected):  # noqa: F811
    hip, log, _ = cuda
    assert getattr(hip, name)(*args) == (E.hipSuccess,)
    assert log == [expected]


QUERIES = [  # name, args, CUDA call, its arguments, what CUDA returns, the hip result
    ("hipHostGetFlags", (P,), "cudaHostGetFlags", (P,), (0, 3), (E.hipSuccess, 3)),
    ("hipModuleGetFunctionCount", (M,), "cuModuleGetFunctionCount", (0x56,), (0, 4), (E.hipSuccess, 4)),
    ("hipFuncGetAttribute", (0, F), "cuFuncGetAttribute", (0, 0x55), (0, 1024), (E.hipSuccess, 1024)),
    ("hipModuleOccupancyMaxActiveBlocksPerMultiprocessor", (F, 128, 0),
     "cuOccupancyMaxActiveBlocksPerMultiprocessor", (0x55, 128, 0), (0, 16), (E.hipSuccess, 16)),
    ("hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", (F, 128, 0, 1),
     "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", (0x55, 128, 0, 1), (0, 16), (E.hipSuccess, 16)),
    ("hipOccupancyMaxActiveBlocksPerMultiprocessor", (F, 128, 64),
     "cuOccupancyMaxActiveBlocksPerMultiprocessor", (0x55, 128, 64), (1, None), (E.hipErrorInvalidValue, 0)),
    ("hipModuleOccupancyMaxPotentialBlockSize", (F, 0, 256), "cuOccupancyMaxPotentialBlockSize",
     (0x55, None, 0, 256), (0, 264, 256), (E.hipSuccess, 264, 256)),
    ("hipModuleOccupancyMaxPotentialBlockSizeWithFlags", (F, 0, 0, 1), "cuOccupancyMaxPotentialBlockSizeWithFlags",
     (0x55, None, 0, 0, 1), (0, 132, 1024), (E.hipSuccess, 132, 1024)),
    ("hipOccupancyMaxPotentialBlockSize", (F, 16, 0), "cuOccupancyMaxPotentialBlockSize",
     (0x55, None, 16, 0), (1, None, None), (E.hipErrorInvalidValue, None, None)),
    ("hipMallocPitch", (100, 4), "cudaMallocPitch", (100, 4), (0, 0x2000, 512),
     (E.hipSuccess, ht.DeviceArray(0x2000, 2048), 512)),
    ("hipMemAllocPitch", (100, 4, 4), "cuMemAllocPitch", (100, 4, 4), (2, None, None),
     (E.hipErrorOutOfMemory, None, None)),
    ("hipMallocManaged", (64, 1), "cudaMallocManaged", (64, 1), (0, 0x3000),
     (E.hipSuccess, ht.DeviceArray(0x3000, 64))),
    ("hipMemGetAddressRange", (P + 8,), "cuMemGetAddressRange", (P + 8,), (0, P, 64),
     (E.hipSuccess, ht.Pointer(P), 64)),
    ("hipMemPtrGetInfo", (P,), "cuMemGetAddressRange", (P,), (0, P, 64), (E.hipSuccess, 64)),
    ("hipExtMallocWithFlags", (64, 1), "cudaMalloc", (64,), (0, 0x4000), (E.hipSuccess, ht.DeviceArray(0x4000, 64))),
    ("hipModuleGetGlobal", (M, "table"), "cuModuleGetGlobal", (0x56, b"table"), (0, 0x5000, 64),
     (E.hipSuccess, ht.Pointer(0x5000), 64)),
    ("hipModuleGetGlobal", (M, b"nope\0"), "cuModuleGetGlobal", (0x56, b"nope"), (500, None, None),
     (E.hipErrorNotFound, None, None)),
]


@pytest.mark.parametrize("name,args,fn,cu_args,returned,expected", QUERIES, ids=[q[0] for q in QUERIES])
def test_queries_convert_their_outputs(cuda, name, args, fn, cu_args, returned, expected):  # noqa: F811
    hip, log, results = cuda
    results[fn] = returned
    result = getattr(hip, name)(*args)
    assert result == expected and [type(v) for v in result] == [type(v) for v in expected]
    assert [(entry[1], entry[2]) for entry in log] == [(fn, cu_args)]


def test_memcpy_with_stream_waits_for_its_stream(cuda):  # noqa: F811
    hip, log, _ = cuda
    assert hip.hipMemcpyWithStream(P, P + 8, 16, D2H, S) == (E.hipSuccess,)
    assert log == [("rt", "cudaMemcpyAsync", (P, P + 8, 16, 2, 0x51)), ("rt", "cudaStreamSynchronize", (0x51,))]


def test_func_get_attributes_asks_each_attribute(cuda):  # noqa: F811
    hip, log, results = cuda
    results["cuFuncGetAttribute"] = (0, 7)
    err, attrs = hip.hipFuncGetAttributes(F)
    assert err == E.hipSuccess and attrs.maxThreadsPerBlock == 7 and attrs.preferredShmemCarveout == 7
    assert [entry[2] for entry in log] == [(code, 0x55) for code in range(10)]


def test_ext_launch_records_its_events_around_the_launch(cuda, monkeypatch):  # noqa: F811
    hip, log, _ = cuda
    monkeypatch.setitem(modules._layouts, 0x55, KernelLayout((ParamSpec(0, 4, VALUE, "n"),)))
    n = ctypes.c_uint32(5)
    assert hip.hipExtLaunchKernel(F, (1, 1, 1), (32, 1, 1), [ctypes.addressof(n)], 0, S, EV, EV, 0) == (E.hipSuccess,)
    assert [entry[1] for entry in log] == ["cudaEventRecord", "cuLaunchKernel", "cudaEventRecord"]
    assert log[0][2] == (0x52, 0x51)


def test_cooperative_launch_passes_kernel_params_into_one_buffer(cuda, monkeypatch):  # noqa: F811
    hip, log, _ = cuda
    monkeypatch.setitem(modules._layouts, 0x55, KernelLayout((ParamSpec(0, 8, POINTER, "p"),
                                                              ParamSpec(8, 4, VALUE, "n"))))
    seen = []
    real = module_calls.driver

    class Spy:
        def __getattr__(self, fn):
            call = getattr(real(), fn)

            def spy(*args):
                if fn == "cuLaunchCooperativeKernel":  # read the arguments while they live
                    params = (ctypes.c_void_p * 2).from_address(args[-1])
                    seen.append((ctypes.c_uint64.from_address(params[0]).value,
                                 ctypes.c_uint32.from_address(params[1]).value))
                return call(*args)
            return spy
    monkeypatch.setattr(module_calls, "driver", Spy)
    p, n = ctypes.c_void_p(0xABC0), ctypes.c_uint32(9)
    args = [ctypes.addressof(p), ctypes.addressof(n)]
    assert hip.hipModuleLaunchCooperativeKernel(F, 2, 1, 1, 64, 1, 1, 0, S, args) == (E.hipSuccess,)
    assert log[-1][1] == "cuLaunchCooperativeKernel" and log[-1][2][:8] == (0x55, 2, 1, 1, 64, 1, 1, 0)
    assert seen == [(0xABC0, 9)]
    assert hip.hipLaunchCooperativeKernel(ht.ihipModuleSymbol_t(0x99), (1, 1, 1), (1, 1, 1), [], 0, S) == (
        E.hipErrorInvalidDeviceFunction,)


def test_pointer_and_range_attributes_are_written_to_data(cuda):  # noqa: F811
    hip, log, results = cuda
    word, small = ctypes.c_uint64(0), (ctypes.c_int32 * 3)()
    results["cuPointerGetAttribute"] = (0, 0x1234)
    results["CUpointer_attribute"] = 11   # the enum member cuda-bindings takes (the fake: its value)
    assert hip.hipPointerGetAttribute(ctypes.addressof(word), 11, P) == (E.hipSuccess,)
    assert word.value == 0x1234 and log[-1] == ("drv", "cuPointerGetAttribute", (11, P))
    results["cudaMemRangeGetAttribute"] = (0, [0, -2, -2])
    results["cudaMemRangeAttribute"] = "attribute 3"   # cuda-bindings takes its enum member
    assert hip.hipMemRangeGetAttribute(small, 12, 3, P, 64) == (E.hipSuccess,)
    assert log[-2] == ("rt", "cudaMemRangeAttribute", (3,))
    assert list(small) == [0, -2, -2] and log[-1] == ("rt", "cudaMemRangeGetAttribute", (12, "attribute 3", P, 64))
    assert hip.hipMemRangeGetAttribute(small, 4, 100, P, 64) == (E.hipErrorInvalidValue,)
    assert hip.hipPointerGetAttribute(ctypes.addressof(word), 5, P) == (E.hipErrorInvalidValue,)


def test_shared_mem_config_checks_its_value_and_survives_a_driver_without_it(cuda, monkeypatch):  # noqa: F811
    hip, log, results = cuda
    assert hip.hipFuncSetSharedMemConfig(F, 3) == (E.hipErrorInvalidValue,) and log == []

    def missing(*args):
        raise RuntimeError("Function \"cuFuncSetSharedMemConfig\" not found")
    monkeypatch.setattr(type(module_calls.driver()), "cuFuncSetSharedMemConfig", missing, raising=False)
    assert hip.hipFuncSetSharedMemConfig(F, 1) == (E.hipSuccess,)


def test_launch_kernargs_makes_the_launch_hip_would_and_keeps_the_last_error(cuda, monkeypatch):  # noqa: F811
    """Replay's launch runner goes around the hip surface (hrr.backends.cuda.launch_kernargs):
    the same cuLaunchKernel as hipModuleLaunchKernel with the bytes as a packed extra, the
    same error and last error; a function it does not know goes through hip, which says so."""
    from hrr.backends import cuda as backend
    from hrr.hiptypes.kernargs import packed_extra
    hip, log, results = cuda
    monkeypatch.setitem(modules._layouts, 0x55, KernelLayout((ParamSpec(0, 8, POINTER, "p"),
                                                              ParamSpec(8, 4, VALUE, "n"))))
    kernargs = (0xABC0).to_bytes(8, "little") + (9).to_bytes(4, "little")
    seen = []
    real = modules.S.drv

    class Spy:
        def __getattr__(self, fn):
            call = getattr(real, fn)

            def spy(*args):
                if fn == "cuLaunchKernel":   # the bytes the extra array points at, while they live
                    words = (ctypes.c_void_p * 5).from_address(args[-1])
                    size = ctypes.c_size_t.from_address(words[3]).value
                    seen.append((words[0], words[2], words[4], ctypes.string_at(words[1], size)))
                return call(*args)
            return spy
    monkeypatch.setattr(modules.S, "drv", Spy())
    hip_way = hip.hipModuleLaunchKernel(F, 2, 1, 1, 64, 1, 1, 16, S, None, packed_extra(kernargs))
    direct = backend.launch_kernargs(F, (2, 1, 1), (64, 1, 1), 16, S, kernargs)
    assert hip_way == direct == (E.hipSuccess,)
    assert log[-2][1] == log[-1][1] == "cuLaunchKernel" and log[-2][2][:10] == log[-1][2][:10]
    assert log[-1][2][:10] == (0x55, 2, 1, 1, 64, 1, 1, 16, 0x51, None)
    assert seen == [(1, 2, None, kernargs)] * 2   # CUDA's BUFFER_POINTER, BUFFER_SIZE, END (0)
    results["cuLaunchKernel"] = (1,)             # CUDA_ERROR_INVALID_VALUE
    assert backend.launch_kernargs(F, (1, 1, 1), (2048, 1, 1), 0, None, kernargs) == (E.hipErrorInvalidValue,)
    assert hip.hipGetLastError() == (E.hipErrorInvalidValue,)
    assert backend.launch_kernargs(ht.ihipModuleSymbol_t(0x99), (1, 1, 1), (1, 1, 1), 0, None, kernargs) == (
        E.hipErrorInvalidHandle,)
