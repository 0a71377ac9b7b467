"""Stream-ordered allocation and memory pools on the sim: allocations usable in stream
order, frees that happen when their stream reaches them, pool accounting and attributes,
and the errors a GPU gives for bad input; hipExtStreamCreateWithCUMask's checks."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from hrr.backends import sim
from hrr.backends.sim import hip
from hrr.backends.sim.device import current

E = hip.hipError_t
OK = E.hipSuccess
A = hip.hipMemPoolAttr


def props(alloc_type=None, loc_type=None, device=0, max_size=0):
    p = hip.hipMemPoolProps()
    p.allocType = hip.hipMemAllocationType.hipMemAllocationTypePinned if alloc_type is None else alloc_type
    p.handleTypes = hip.hipMemAllocationHandleType.hipMemHandleTypeNone
    p.location.type = hip.hipMemLocationType.hipMemLocationTypeDevice if loc_type is None else loc_type
    p.location.id = device
    p.maxSize = max_size
    return p


def new_pool(**kw):
    err, pool = hip.hipMemPoolCreate(props(**kw))
    assert err == OK
    return pool


def attr(pool, which) -> int:
    value = ctypes.c_uint64(0)
    assert hip.hipMemPoolGetAttribute(pool, which, value) == (OK,)
    return value.value


def read(d, n) -> np.ndarray:
    out = np.zeros(n, np.uint8)
    assert hip.hipMemcpyDtoH(out, d, n) == (OK,)
    return out


def test_the_default_pool_is_current_until_another_is_set():
    err, default = hip.hipDeviceGetDefaultMemPool(0)
    assert err == OK and hip.hipDeviceGetMemPool(0) == (OK, default)
    pool = new_pool()
    assert hip.hipDeviceSetMemPool(0, pool) == (OK,)
    assert hip.hipDeviceGetMemPool(0) == (OK, pool)
    _, d = hip.hipMallocAsync(100, None)    # from the current pool
    assert attr(pool, A.hipMemPoolAttrUsedMemCurrent) == 100 and attr(default, A.hipMemPoolAttrUsedMemCurrent) == 0
    assert hip.hipMemPoolDestroy(pool) == (OK,)   # the current pool: the default one is current again
    assert hip.hipDeviceGetMemPool(0) == (OK, default)
    assert hip.hipFreeAsync(d, None) == (OK,)     # an allocation outlives its destroyed pool
    assert hip.hipDeviceSynchronize() == (OK,)


def test_device_ordinals_as_hip_answers_them():
    _, default = hip.hipDeviceGetDefaultMemPool(0)
    assert hip.hipDeviceGetDefaultMemPool(1) == (E.hipErrorInvalidDevice, None)
    assert hip.hipDeviceGetDefaultMemPool(-1) == (E.hipErrorInvalidDevice, None)
    assert hip.hipDeviceGetMemPool(1) == (E.hipErrorInvalidValue, None)
    assert hip.hipDeviceSetMemPool(1, default) == (E.hipErrorInvalidValue,)


@pytest.mark.parametrize("bad", [dict(alloc_type=2), dict(alloc_type=0), dict(loc_type=2), dict(device=1)])
def test_pool_properties_hip_refuses(bad):
    kw = dict(bad)
    for key, enum in (("alloc_type", hip.hipMemAllocationType), ("loc_type", hip.hipMemLocationType)):
        if key in kw:
            kw[key] = enum(kw[key])
    assert hip.hipMemPoolCreate(props(**kw)) == (E.hipErrorInvalidValue, None)
    assert hip.hipMemPoolCreate(None) == (E.hipErrorInvalidValue, None)


def test_a_destroyed_pool_is_an_invalid_value_everywhere():
    pool = new_pool()
    assert hip.hipMemPoolDestroy(pool) == (OK,)
    value = ctypes.c_uint64(0)
    assert hip.hipMallocFromPoolAsync(16, pool, None) == (E.hipErrorInvalidValue, None)
    assert hip.hipMemPoolDestroy(pool) == (E.hipErrorInvalidValue,)
    assert hip.hipDeviceSetMemPool(0, pool) == (E.hipErrorInvalidValue,)
    assert hip.hipMemPoolTrimTo(pool, 0) == (E.hipErrorInvalidValue,)
    assert hip.hipMemPoolGetAttribute(pool, A.hipMemPoolAttrUsedMemCurrent, value) == (E.hipErrorInvalidValue,)
    assert hip.hipMemPoolSetAttribute(pool, A.hipMemPoolAttrReleaseThreshold, value) == (E.hipErrorInvalidValue,)
    assert hip.hipMallocFromPoolAsync(16, None, None) == (E.hipErrorInvalidValue, None)   # NULL pool
    assert hip.hipGetLastError() == (E.hipErrorInvalidValue,)


def test_the_default_pool_cannot_be_destroyed():
    _, default = hip.hipDeviceGetDefaultMemPool(0)
    assert hip.hipMemPoolDestroy(default) == (E.hipErrorInvalidValue,)
    assert hip.hipMallocFromPoolAsync(16, default, None)[0] == OK


def test_double_free_of_an_async_allocation():
    _, s = hip.hipStreamCreate()
    _, d = hip.hipMallocFromPoolAsync(64, new_pool(), s)
    assert hip.hipFreeAsync(d, s) == (OK,)
    assert hip.hipFreeAsync(d, s) == (E.hipErrorInvalidValue,)      # its free is already enqueued
    assert hip.hipStreamSynchronize(s) == (OK,)
    assert hip.hipFreeAsync(d, s) == (E.hipErrorInvalidValue,)      # and ran
    assert hip.hipFree(d) == (E.hipErrorInvalidValue,)
    assert hip.hipFreeAsync(None, s) == (OK,)                       # NULL: nothing to free, as HIP answers


def test_an_allocation_is_freed_when_its_stream_reaches_the_free():
    _, s = hip.hipStreamCreate()
    _, d = hip.hipMallocAsync(64, s)
    assert hip.hipMemsetAsync(d, 3, 64, s) == (OK,)    # enqueued before the free: runs first
    out = np.zeros(64, np.uint8)
    assert hip.hipMemcpyDtoHAsync(out, d, 64, s) == (OK,)
    assert hip.hipFreeAsync(d, s) == (OK,)
    assert current().memory.find_device(int(d)) is not None   # nothing has run yet
    assert hip.hipStreamSynchronize(s) == (OK,)
    assert (out == 3).all() and current().memory.find_device(int(d)) is None


def test_work_after_the_free_in_stream_order_faults():
    _, s = hip.hipStreamCreate()
    _, d = hip.hipMallocAsync(64, s)
    assert hip.hipFreeAsync(d, s) == (OK,)
    assert hip.hipMemsetAsync(d, 1, 64, s) == (OK,)   # checked at enqueue, run after the free
    assert hip.hipStreamSynchronize(s)[0] == E.hipErrorIllegalAddress


def test_a_free_on_another_stream_ordered_by_an_event():
    _, s1 = hip.hipStreamCreate()
    _, s2 = hip.hipStreamCreateWithFlags(1)
    _, ev = hip.hipEventCreate()
    _, d = hip.hipMallocAsync(64, s1)
    assert hip.hipMemsetAsync(d, 9, 64, s1) == (OK,)
    out = np.zeros(64, np.uint8)
    assert hip.hipMemcpyDtoHAsync(out, d, 64, s1) == (OK,)
    assert hip.hipEventRecord(ev, s1) == (OK,)
    assert hip.hipStreamWaitEvent(s2, ev, 0) == (OK,)
    assert hip.hipFreeAsync(d, s2) == (OK,)
    assert hip.hipDeviceSynchronize() == (OK,)
    assert (out == 9).all() and current().memory.find_device(int(d)) is None


def test_a_free_on_another_stream_without_ordering_races_as_on_a_gpu(helpers):
    """s2 frees while s1's work on the allocation is still waiting: the free runs first
    (deterministically), and s1's memset then faults."""
    _, s1 = hip.hipStreamCreate()
    _, s2 = hip.hipStreamCreateWithFlags(1)
    flag, view = helpers.pinned_u32(1)
    view[0] = 0
    _, d = hip.hipMallocAsync(64, s1)
    assert hip.hipStreamWaitValue32(s1, int(flag), 1, hip.hipStreamWaitValueEq, 0xFFFFFFFF) == (OK,)
    assert hip.hipMemsetAsync(d, 1, 64, s1) == (OK,)
    assert hip.hipFreeAsync(d, s2) == (OK,)
    assert hip.hipStreamSynchronize(s2) == (OK,)      # the free ran; s1 still waits
    view[0] = 1
    assert hip.hipStreamSynchronize(s1)[0] == E.hipErrorIllegalAddress


def test_pool_accounting_threshold_and_trim():
    pool = new_pool()
    _, s = hip.hipStreamCreate()
    _, a = hip.hipMallocFromPoolAsync(1000, pool, s)
    _, b = hip.hipMallocFromPoolAsync(3000, pool, s)
    assert attr(pool, A.hipMemPoolAttrUsedMemCurrent) == 4000
    assert hip.hipFreeAsync(b, s) == (OK,)
    assert attr(pool, A.hipMemPoolAttrUsedMemCurrent) == 4000   # until the free runs
    hip.hipStreamSynchronize(s)
    # threshold 0: the freed bytes went back at once
    assert [attr(pool, x) for x in (A.hipMemPoolAttrUsedMemCurrent, A.hipMemPoolAttrReservedMemCurrent,
                                    A.hipMemPoolAttrUsedMemHigh, A.hipMemPoolAttrReservedMemHigh)] == [
        1000, 1000, 4000, 4000]
    assert hip.hipMemPoolSetAttribute(pool, A.hipMemPoolAttrReleaseThreshold, ctypes.c_uint64(1 << 20)) == (OK,)
    assert attr(pool, A.hipMemPoolAttrReleaseThreshold) == 1 << 20
    hip.hipFreeAsync(a, s)
    hip.hipStreamSynchronize(s)
    assert attr(pool, A.hipMemPoolAttrReservedMemCurrent) == 1000   # held under the threshold
    assert hip.hipMemPoolTrimTo(pool, 0) == (OK,)
    assert attr(pool, A.hipMemPoolAttrReservedMemCurrent) == 0
    assert hip.hipMemPoolSetAttribute(pool, A.hipMemPoolAttrUsedMemHigh, ctypes.c_uint64(0)) == (OK,)
    assert attr(pool, A.hipMemPoolAttrUsedMemHigh) == 0


def test_attributes_hip_refuses_to_set_and_null_values():
    pool = new_pool()
    for which, value in ((A.hipMemPoolAttrUsedMemCurrent, 0), (A.hipMemPoolAttrReservedMemCurrent, 0),
                         (A.hipMemPoolAttrUsedMemHigh, 5), (A.hipMemPoolAttrReservedMemHigh, 5)):
        assert hip.hipMemPoolSetAttribute(pool, which, ctypes.c_uint64(value)) == (E.hipErrorInvalidValue,)
    assert hip.hipMemPoolSetAttribute(pool, A.hipMemPoolAttrReleaseThreshold, None) == (E.hipErrorInvalidValue,)
    assert hip.hipMemPoolGetAttribute(pool, A.hipMemPoolAttrUsedMemCurrent, None) == (E.hipErrorInvalidValue,)
    assert hip.hipMemPoolGetAttribute(pool, 99, ctypes.c_uint64()) == (E.hipErrorInvalidValue,)
    flag = ctypes.c_int32(7)   # the reuse flags are 32-bit, on by default
    assert hip.hipMemPoolGetAttribute(pool, A.hipMemPoolReuseAllowInternalDependencies, flag) == (OK,)
    assert flag.value == 1
    assert hip.hipMemPoolSetAttribute(pool, A.hipMemPoolReuseAllowInternalDependencies, ctypes.c_int32(0)) == (OK,)
    assert hip.hipMemPoolGetAttribute(pool, A.hipMemPoolReuseAllowInternalDependencies, flag) == (OK,)
    assert flag.value == 0


def test_a_pools_maximum_size():
    pool = new_pool(max_size=4096)
    _, s = hip.hipStreamCreate()
    _, a = hip.hipMallocFromPoolAsync(4000, pool, s)
    assert hip.hipMallocFromPoolAsync(200, pool, s) == (E.hipErrorOutOfMemory, None)
    hip.hipFreeAsync(a, s)
    hip.hipStreamSynchronize(s)
    assert hip.hipMallocFromPoolAsync(200, pool, s)[0] == OK
    assert hip.hipMallocFromPoolAsync(0, pool, s) == (OK, None)   # nothing to allocate, as HIP answers


def test_pool_calls_and_capture():
    _, s = hip.hipStreamCreate()
    pool = new_pool()
    assert hip.hipStreamBeginCapture(s, hip.hipStreamCaptureMode.hipStreamCaptureModeGlobal) == (OK,)
    # a pool's creation or destruction, or the device's pool: 900, the capture goes on
    assert hip.hipMemPoolCreate(props()) == (E.hipErrorStreamCaptureUnsupported, None)
    assert hip.hipMemPoolDestroy(pool) == (E.hipErrorStreamCaptureUnsupported,)
    assert hip.hipDeviceSetMemPool(0, pool) == (E.hipErrorStreamCaptureUnsupported,)
    assert hip.hipStreamIsCapturing(s)[1] == hip.hipStreamCaptureStatus.hipStreamCaptureStatusActive
    # an allocation on the capturing stream: no allocation nodes in the sim, 900 and invalidated
    assert hip.hipMallocFromPoolAsync(16, pool, s) == (E.hipErrorStreamCaptureUnsupported, None)
    assert hip.hipStreamEndCapture(s) == (E.hipErrorStreamCaptureInvalidated, None)


def test_a_device_reset_brings_back_only_the_default_pool():
    _, default = hip.hipDeviceGetDefaultMemPool(0)
    pool = new_pool()
    assert hip.hipDeviceSetMemPool(0, pool) == (OK,)
    assert hip.hipDeviceReset() == (OK,)
    assert hip.hipDeviceGetMemPool(0) == (OK, default) and hip.hipDeviceGetDefaultMemPool(0) == (OK, default)
    assert hip.hipMemPoolTrimTo(pool, 0) == (E.hipErrorInvalidValue,)


def test_a_cu_masked_stream_keeps_its_mask_and_runs_work():
    err, s = hip.hipExtStreamCreateWithCUMask(3, np.array([0xF0, 0x1, 0x2, 0x3], np.uint32))
    assert err == OK and current().streams[int(s)].cu_mask == (0xF0, 0x1, 0x2)
    _, s2 = hip.hipExtStreamCreateWithCUMask(1, [0xFF])
    assert current().streams[int(s2)].cu_mask == (0xFF,) and current().streams[int(s2)].flags == 0
    _, d = hip.hipMallocAsync(16, s)
    assert hip.hipMemsetAsync(d, 4, 16, s) == (OK,)
    assert hip.hipStreamSynchronize(s) == (OK,)
    assert (read(d, 16) == 4).all()
    assert hip.hipStreamDestroy(s) == (OK,)


@pytest.mark.parametrize("size,mask", [(0, [1]), (1, None), (2, [1]), (2, np.zeros(1, np.uint32)), (1, object())])
def test_a_cu_mask_hip_refuses(size, mask):
    assert hip.hipExtStreamCreateWithCUMask(size, mask) == (E.hipErrorInvalidValue, None)


def test_the_backend_module_offers_the_pool_types():
    for name in ("hipMemPoolProps", "hipMemLocation", "ihipMemPoolHandle_t", "hipMemPool_t", "hipMemPoolAttr",
                 "hipMemAllocationType", "hipMemLocationType", "hipMemAllocationHandleType"):
        assert getattr(sim.hip, name) is not None, name
