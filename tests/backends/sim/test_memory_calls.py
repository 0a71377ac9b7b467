"""The sim's memory and module/launch calls of issue 10: memset widths, 2D regions, pitched,
managed and peer memory, address queries, function attributes, occupancy, launches, and the
errors a GPU gives for each."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from hrr.backends import sim
from hrr.backends.sim import hip
from hrr.backends.sim.memory_calls import PITCH_ALIGN

E = hip.hipError_t
OK = E.hipSuccess
K = hip.hipMemcpyKind


def read(d, n: int) -> bytes:
    out = np.zeros(n, np.uint8)
    assert hip.hipMemcpy(out, d, n, K.hipMemcpyDeviceToHost)[0] == OK
    return out.tobytes()


def test_memset_widths_repeat_their_element_and_need_its_alignment():
    _, d = hip.hipMalloc(32)
    assert hip.hipMemsetD8(d, 0x1AB, 4) == (OK,)                 # the value's low byte
    assert hip.hipMemsetD16(int(d) + 4, 0x1234, 2) == (OK,)
    assert hip.hipMemsetD32(int(d) + 8, -2, 2) == (OK,)
    assert read(d, 16) == b"\xab" * 4 + b"\x34\x12" * 2 + b"\xfe\xff\xff\xff" * 2
    assert hip.hipMemsetD16(int(d) + 1, 1, 2) == (E.hipErrorInvalidValue,)
    assert hip.hipMemsetD32(int(d) + 2, 1, 1) == (E.hipErrorInvalidValue,)
    assert hip.hipMemsetD32(d, 1, 9) == (E.hipErrorInvalidValue,)  # 36 bytes of a 32-byte allocation


def test_async_memsets_run_in_stream_order():
    _, d = hip.hipMalloc(16)
    _, s = hip.hipStreamCreate()
    assert hip.hipMemsetD32Async(d, 7, 4, s) == (OK,)
    assert hip.hipMemsetD16Async(d, 0xFFFF, 1, s) == (OK,)
    assert hip.hipMemsetD8Async(int(d) + 15, 9, 1, s) == (OK,)
    assert hip.hipStreamSynchronize(s) == (OK,)
    assert np.frombuffer(read(d, 16), np.uint32).tolist() == [0x0000FFFF, 7, 7, 0x09000007]


def test_pitched_allocation_rounds_rows_and_2d_memsets_touch_only_rows():
    err, d, pitch = hip.hipMallocPitch(100, 3)
    assert err == OK and pitch == PITCH_ALIGN and pitch >= 100
    assert hip.hipMemset(d, 0, pitch * 3) == (OK,)   # the whole allocation is pitch * height
    assert hip.hipMemset2D(d, pitch, 0x5A, 10, 3) == (OK,)
    rows = np.frombuffer(read(d, pitch * 3), np.uint8).reshape(3, pitch)
    assert (rows[:, :10] == 0x5A).all() and (rows[:, 10:] == 0).all()
    assert hip.hipMemsetD2D32(d, pitch, 0x01020304, 2, 2) == (OK,)
    rows = np.frombuffer(read(d, pitch * 3), np.uint8).reshape(3, pitch)
    assert rows[0, :8].tobytes() == b"\x04\x03\x02\x01" * 2 and rows[2, 0] == 0x5A
    assert hip.hipMemset2D(d, 8, 1, 10, 2) == (E.hipErrorInvalidValue,)          # a row wider than its pitch
    assert hip.hipMemset2D(d, pitch, 1, 10, 4) == (E.hipErrorInvalidValue,)      # past the allocation
    assert hip.hipMemAllocPitch(100, 3, 3)[0] == E.hipErrorInvalidValue         # element size 4, 8 or 16
    assert hip.hipMallocPitch(0, 3) == (OK, None, 0)


def test_2d_copies_move_rows_between_host_and_device_pitches():
    _, d, pitch = hip.hipMallocPitch(6, 4)
    src = np.arange(40, dtype=np.uint8)                        # 4 rows of 6 bytes, 10 apart
    assert hip.hipMemcpy2D(d, pitch, src, 10, 6, 4, K.hipMemcpyHostToDevice) == (OK,)
    dst = np.full(4 * 8, 0xEE, np.uint8)
    _, s = hip.hipStreamCreate()
    assert hip.hipMemcpy2DAsync(dst, 8, d, pitch, 6, 4, K.hipMemcpyDeviceToHost, s) == (OK,)
    assert hip.hipStreamSynchronize(s) == (OK,)
    got = dst.reshape(4, 8)
    assert (got[:, :6] == src.reshape(4, 10)[:, :6]).all() and (got[:, 6:] == 0xEE).all()
    assert hip.hipMemcpy2D(d, pitch, src, 4, 6, 4, K.hipMemcpyHostToDevice) == (E.hipErrorInvalidPitchValue,)
    assert hip.hipMemcpy2D(d, pitch, src, 10, 6, 5, K.hipMemcpyHostToDevice) == (E.hipErrorInvalidValue,)
    assert hip.hipMemcpy2D(dst, 8, src, 10, 6, 4, K.hipMemcpyDeviceToHost) == (E.hipErrorInvalidValue,)


def test_peer_copies_need_device_zero_and_with_stream_copies_wait():
    _, a = hip.hipMalloc(16)
    _, b = hip.hipMalloc(16)
    _, s = hip.hipStreamCreate()
    assert hip.hipMemcpyWithStream(a, np.arange(16, dtype=np.uint8), 16, K.hipMemcpyHostToDevice, s) == (OK,)
    assert hip.hipMemcpyPeer(b, 0, a, 0, 16) == (OK,)
    assert read(b, 16) == bytes(range(16))
    assert hip.hipMemcpyPeer(b, 1, a, 0, 16) == (E.hipErrorInvalidDevice,)
    assert hip.hipMemcpyPeerAsync(b, 0, a, 2, 16, s) == (E.hipErrorInvalidDevice,)
    out = np.zeros(16, np.uint8)
    assert hip.hipMemcpyWithStream(out, b, 16, K.hipMemcpyDeviceToHost, s) == (OK,)
    assert out.tobytes() == bytes(range(16))                   # done when the call returns


def test_managed_memory_is_reached_by_host_and_kernels(kernels):
    err, m = hip.hipMallocManaged(16, hip.hipMemAttachGlobal)
    assert err == OK
    view = np.ctypeslib.as_array((ctypes.c_uint32 * 4).from_address(int(m)))
    view[:] = [1, 2, 3, 4]                                      # the host writes it in place
    _, d = hip.hipMalloc(4)
    kernels.launch("sum_u32", int(d), int(m), ctypes.c_uint32(4))
    assert hip.hipDeviceSynchronize() == (OK,)
    assert np.frombuffer(read(d, 4), np.uint32)[0] == 10
    attrs = hip.hipPointerGetAttributes(m)[1]
    assert attrs.type == hip.hipMemoryType.hipMemoryTypeManaged and attrs.isManaged == 1
    assert hip.hipMemAdvise(m, 16, hip.hipMemoryAdvise.hipMemAdviseSetReadMostly, 0) == (OK,)
    assert hip.hipMemPrefetchAsync(m, 16, hip.hipCpuDeviceId, None) == (OK,)
    assert hip.hipMemPrefetchAsync(d, 4, 0, None) == (E.hipErrorInvalidValue,)   # not managed
    assert hip.hipMemAdvise(m, 16, 77, 0) == (E.hipErrorInvalidValue,)
    assert hip.hipMemPrefetchAsync(m, 16, 3, None) == (E.hipErrorInvalidDevice,)
    assert hip.hipMallocManaged(16, 8)[0] == E.hipErrorInvalidValue
    assert hip.hipFree(m) == (OK,)


def test_address_queries():
    _, d = hip.hipMalloc(100)
    assert hip.hipMemGetAddressRange(int(d) + 40) == (OK, hip.Pointer(int(d)), 100)
    assert hip.hipMemGetAddressRange(int(d) + 300)[0] == E.hipErrorNotFound
    assert hip.hipMemPtrGetInfo(d) == (OK, 100)
    _, p = hip.hipHostMalloc(64, hip.hipHostMallocMapped)
    _, q = hip.hipMemAllocHost(32)
    assert hip.hipHostGetFlags(p) == (OK, hip.hipHostMallocMapped) and hip.hipHostGetFlags(q) == (OK, 0)
    assert hip.hipHostGetFlags(d) == (E.hipErrorInvalidValue, None)
    assert hip.hipExtMallocWithFlags(64, 9)[0] == E.hipErrorInvalidValue
    assert hip.hipExtMallocWithFlags(64, hip.hipDeviceMallocFinegrained)[0] == OK


def test_module_loads_count_and_file(tmp_path):
    code = sim.builtin_code_object()
    err, mod, _options = hip.hipModuleLoadDataEx(code, 0, None)
    from hrr.backends.sim.builtin_kernels import LIBRARY
    assert err == OK and hip.hipModuleGetFunctionCount(mod) == (OK, len(LIBRARY.kernels))
    path = tmp_path / "k.co"
    path.write_bytes(code)
    assert hip.hipModuleLoad(str(path).encode())[0] == OK
    assert hip.hipModuleLoad(str(tmp_path / "missing.co"))[0] == E.hipErrorFileNotFound


def test_function_attributes_and_occupancy(kernels):
    f = kernels.fn("add_u32")
    attrs = hip.hipFuncGetAttributes(f)[1]
    assert attrs.maxThreadsPerBlock == 1024 and attrs.maxDynamicSharedSizeBytes == 65536
    A = hip.hipFuncAttribute
    assert hip.hipFuncSetAttribute(f, A.hipFuncAttributeMaxDynamicSharedMemorySize, 4096) == (OK,)
    max_dyn = hip.hipFunction_attribute.HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    assert hip.hipFuncGetAttribute(max_dyn, f) == (OK, 4096)
    assert hip.hipFuncSetAttribute(f, A.hipFuncAttributeMaxDynamicSharedMemorySize, 1 << 20) == (
        E.hipErrorInvalidValue,)
    assert hip.hipFuncSetCacheConfig(f, hip.hipFuncCache_t.hipFuncCachePreferL1) == (OK,)
    assert hip.hipFuncSetCacheConfig(f, 9) == (E.hipErrorInvalidValue,)
    assert hip.hipFuncSetSharedMemConfig(f, 3) == (E.hipErrorInvalidValue,)
    assert hip.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(f, 256, 0) == (OK, 8)   # 2048 threads
    assert hip.hipOccupancyMaxActiveBlocksPerMultiprocessor(f, 64, 4096) == (OK, 16)      # shared memory
    assert hip.hipOccupancyMaxActiveBlocksPerMultiprocessor(f, 64, 8192) == (OK, 0)       # over the attribute
    assert hip.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(f, 2048, 0)[0] == E.hipErrorInvalidValue
    assert hip.hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(f, 64, 0, 5)[0] == E.hipErrorInvalidValue
    cus = hip.hipGetDeviceProperties(0)[1].multiProcessorCount   # the device model's compute units
    err, grid, block = hip.hipModuleOccupancyMaxPotentialBlockSize(f, 0, 0)
    assert err == OK and block == 1024 and grid == 2 * cus
    assert hip.hipOccupancyMaxPotentialBlockSize(f, 0, 100)[2] <= 100
    assert hip.hipModuleOccupancyMaxPotentialBlockSizeWithFlags(f, 0, 256, 0)[1:] == (8 * cus, 256)


def test_ext_launch_records_its_events_and_cooperative_launches_must_fit(kernels):
    d = int(hip.hipMalloc(16)[1])
    _, s = hip.hipStreamCreate()
    _, start = hip.hipEventCreate()
    _, stop = hip.hipEventCreate()
    fill = kernels.fn("fill_u32")
    args = kernels.params(d, ctypes.c_uint32(3), ctypes.c_uint32(4))
    assert hip.hipExtLaunchKernel(fill, hip.dim3(x=1), hip.dim3(x=32), args, 0, s, start, stop, 0) == (OK,)
    assert hip.hipEventSynchronize(stop) == (OK,)
    assert hip.hipEventElapsedTime(start, stop)[0] == OK       # both were recorded
    assert np.frombuffer(read(d, 16), np.uint32).tolist() == [3] * 4
    assert hip.hipExtLaunchKernel(fill, hip.dim3(x=1), hip.dim3(x=32), args, 0, s, None, None, 0) == (OK,)
    args = kernels.params(d, ctypes.c_uint32(5), ctypes.c_uint32(4))
    assert hip.hipModuleLaunchCooperativeKernel(fill, 2, 1, 1, 64, 1, 1, 0, s, args) == (OK,)
    assert hip.hipLaunchCooperativeKernel(fill, hip.dim3(x=1), hip.dim3(x=64), args, 0, s) == (OK,)
    assert hip.hipStreamSynchronize(s) == (OK,)
    assert np.frombuffer(read(d, 16), np.uint32).tolist() == [5] * 4
    # the model's compute units of 2048 threads hold two blocks of 1024 each at once
    fits = 2 * hip.hipGetDeviceProperties(0)[1].multiProcessorCount
    assert hip.hipModuleLaunchCooperativeKernel(fill, fits, 1, 1, 1024, 1, 1, 0, s, args) == (OK,)
    assert hip.hipModuleLaunchCooperativeKernel(fill, fits + 1, 1, 1, 1024, 1, 1, 0, s, args) == (
        E.hipErrorCooperativeLaunchTooLarge,)
    assert hip.hipLaunchCooperativeKernel(object(), hip.dim3(x=1), hip.dim3(x=1), args, 0, s) == (
        E.hipErrorInvalidDeviceFunction,)


@pytest.mark.parametrize("name", ["hipMemsetD8", "hipMemset2D"])
def test_a_memset_of_host_memory_fails(name):
    buf = np.zeros(16, np.uint8)
    args = (buf, 1, 16) if name == "hipMemsetD8" else (buf, 16, 1, 16, 1)
    assert getattr(hip, name)(*args) == (E.hipErrorInvalidValue,)


def test_module_globals_are_per_module_device_memory_freed_on_unload():
    from hrr.backends.sim.builtin_kernels import LIBRARY
    from hrr.backends.sim.kernels import KernelLibrary
    from hrr.backends.sim.libraries import register_library, unregister_library
    lib = KernelLibrary("hrr_test_globals", "1.0", dict(LIBRARY.kernels), {"table": 64, "flag": 4})
    register_library(lib)
    try:
        _, a = hip.hipModuleLoadData(lib.code_object())
        _, b = hip.hipModuleLoadData(lib.code_object())
        err, ta, size = hip.hipModuleGetGlobal(a, b"table")
        tb = hip.hipModuleGetGlobal(b, "table")[1]
        assert err == OK and size == 64 and int(ta) != int(tb)
        assert hip.hipModuleGetGlobal(a, b"flag")[2] == 4
        assert read(ta, 64) == bytes(64)                          # zeroed
        assert hip.hipModuleGetGlobal(a, b"nope") == (E.hipErrorNotFound, None, None)
        assert hip.hipModuleUnload(a) == (OK,)
        assert hip.hipMemsetD8(ta, 1, 64) == (E.hipErrorInvalidValue,)   # gone with its module
        assert hip.hipMemsetD8(tb, 1, 64) == (OK,)
    finally:
        unregister_library(lib.name)


def test_pointer_attribute_and_managed_range_attributes():
    _, d = hip.hipMalloc(100)
    word, small = ctypes.c_uint64(0), ctypes.c_uint32(0)
    P = hip.hipPointer_attribute
    assert hip.hipPointerGetAttribute(ctypes.addressof(word), P.HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                      int(d) + 8) == (OK,)
    assert word.value == int(d)
    assert hip.hipPointerGetAttribute(ctypes.addressof(word), P.HIP_POINTER_ATTRIBUTE_RANGE_SIZE, d) == (OK,)
    assert word.value == 100
    assert hip.hipPointerGetAttribute(ctypes.addressof(small), P.HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, d) == (OK,)
    assert small.value == int(hip.hipMemoryType.hipMemoryTypeDevice)
    assert hip.hipPointerGetAttribute(ctypes.addressof(small), P.HIP_POINTER_ATTRIBUTE_P2P_TOKENS, d) == (
        E.hipErrorInvalidValue,)
    _, m = hip.hipMallocManaged(64, hip.hipMemAttachGlobal)
    A, R = hip.hipMemoryAdvise, hip.hipMemRangeAttribute
    out = (ctypes.c_int32 * 3)()

    def ask(attribute, size=4):
        assert hip.hipMemRangeGetAttribute(out, size, attribute, m, 64) == (OK,)
        return list(out)[:size // 4]
    assert ask(R.hipMemRangeAttributeReadMostly) == [0]
    assert hip.hipMemAdvise(m, 64, A.hipMemAdviseSetReadMostly, 0) == (OK,)
    assert hip.hipMemAdvise(m, 64, A.hipMemAdviseSetAccessedBy, 0) == (OK,)
    assert hip.hipMemAdvise(m, 64, A.hipMemAdviseSetPreferredLocation, hip.hipCpuDeviceId) == (OK,)
    assert ask(R.hipMemRangeAttributeReadMostly) == [1]
    assert ask(R.hipMemRangeAttributePreferredLocation) == [-1]
    assert ask(R.hipMemRangeAttributeAccessedBy, 12) == [0, -2, -2]
    assert ask(R.hipMemRangeAttributeLastPrefetchLocation) == [-2]
    assert hip.hipMemPrefetchAsync(m, 64, 0, None) == (OK,)
    assert ask(R.hipMemRangeAttributeLastPrefetchLocation) == [0]
    assert hip.hipMemRangeGetAttribute(out, 8, R.hipMemRangeAttributeReadMostly, m, 64) == (E.hipErrorInvalidValue,)
    assert hip.hipMemRangeGetAttribute(out, 4, R.hipMemRangeAttributeReadMostly, d, 64) == (E.hipErrorInvalidValue,)
