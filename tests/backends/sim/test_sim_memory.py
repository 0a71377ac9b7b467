"""The memory model: device range, pinned host memory, copies, errors, attributes."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from hrr.hiptypes import as_text
from hrr.backends.sim import hip
from hrr.backends.sim.memory import DEVICE_BASE

E = hip.hipError_t
OK = E.hipSuccess
K = hip.hipMemcpyKind


def test_device_allocations_are_outside_host_range_aligned_and_deterministic():
    err, a = hip.hipMalloc(10)
    err, b = hip.hipMalloc(300)
    assert int(a) >= DEVICE_BASE and int(a) % 256 == 0 and int(b) % 256 == 0
    assert int(b) == int(a) + 256
    assert a.__cuda_array_interface__["data"][0] == int(a)
    assert type(a).__name__ == "DeviceArray"


def test_memcpy_every_kind_roundtrips():
    data = np.arange(64, dtype=np.uint8)
    _, d1 = hip.hipMalloc(64)
    _, d2 = hip.hipMalloc(64)
    _, pinned = hip.hipHostMalloc(64, 0)
    assert hip.hipMemcpy(d1, data, 64, K.hipMemcpyHostToDevice) == (OK,)
    assert hip.hipMemcpy(d2, d1, 64, K.hipMemcpyDeviceToDevice) == (OK,)
    assert hip.hipMemcpy(pinned, d2, 64, K.hipMemcpyDefault) == (OK,)
    host = np.zeros(64, np.uint8)
    assert hip.hipMemcpy(host, pinned, 64, K.hipMemcpyHostToHost) == (OK,)
    assert (host == data).all()
    out = np.zeros(64, np.uint8)
    assert hip.hipMemcpy(out, d1, 64, K.hipMemcpyDeviceToHost) == (OK,)
    assert (out == data).all()
    out[:] = 0
    assert hip.hipMemcpy(out, d2, 64, 2) == (OK,)  # an int kind is accepted leniently
    assert (out == data).all()


def test_directional_copies_and_async_forms():
    data = np.arange(16, dtype=np.uint8)
    _, d = hip.hipMalloc(16)
    _, d2 = hip.hipMalloc(16)
    assert hip.hipMemcpyHtoD(d, data, 16) == (OK,)
    assert hip.hipMemcpyDtoD(d2, d, 16) == (OK,)
    out = np.zeros(16, np.uint8)
    assert hip.hipMemcpyDtoH(out, d2, 16) == (OK,)
    assert (out == data).all()
    _, s = hip.hipStreamCreate()
    assert hip.hipMemsetAsync(d, 7, 16, s) == (OK,)
    assert hip.hipMemcpyDtoDAsync(d2, d, 16, s) == (OK,)
    out2 = np.zeros(16, np.uint8)
    assert hip.hipMemcpyDtoHAsync(out2, d2, 16, s) == (OK,)
    assert not out2.any()  # not yet run
    hip.hipStreamSynchronize(s)
    assert (out2 == 7).all()
    assert hip.hipMemcpyHtoDAsync(d, data, 16, s) == (OK,)
    assert hip.hipMemcpyAsync(out2, d, 16, K.hipMemcpyDeviceToHost, s) == (OK,)
    hip.hipStreamSynchronize(s)
    assert (out2 == data).all()


def test_pageable_source_is_staged_at_enqueue():
    data = np.full(8, 1, np.uint8)
    _, d = hip.hipMalloc(8)
    hip.hipMemcpyAsync(d, data, 8, K.hipMemcpyHostToDevice, None)
    data[:] = 2  # pageable memory: the driver already staged the bytes
    out = np.zeros(8, np.uint8)
    hip.hipMemcpy(out, d, 8, K.hipMemcpyDeviceToHost)
    assert (out == 1).all()


def test_out_of_range_copies_and_wrong_kinds():
    _, d = hip.hipMalloc(16)
    host = np.zeros(64, np.uint8)
    assert hip.hipMemcpy(d, host, 64, K.hipMemcpyHostToDevice) == (E.hipErrorInvalidValue,)
    assert hip.hipMemcpy(host, int(d) + 8, 16, K.hipMemcpyDeviceToHost) == (E.hipErrorInvalidValue,)
    assert hip.hipMemcpy(host, host, 8, K.hipMemcpyDeviceToHost) == (E.hipErrorInvalidValue,)
    assert hip.hipMemcpy(DEVICE_BASE + (1 << 39), host, 8, K.hipMemcpyDefault) == (E.hipErrorInvalidValue,)
    assert hip.hipMemcpy(d, host, 8, 77) == (E.hipErrorInvalidMemcpyDirection,)
    assert hip.hipMemset(int(d) + 8, 0, 16) == (E.hipErrorInvalidValue,)


def test_double_free_is_invalid_value():
    _, d = hip.hipMalloc(16)
    assert hip.hipFree(d) == (OK,)
    assert hip.hipFree(d) == (E.hipErrorInvalidValue,)
    assert hip.hipFree(None) == (OK,)
    _, h = hip.hipHostMalloc(16, 0)
    assert hip.hipHostFree(h) == (OK,)
    assert hip.hipHostFree(h) == (E.hipErrorInvalidValue,)
    _, h2 = hip.hipMallocHost(16)
    assert hip.hipFreeHost(h2) == (OK,)
    _, h3 = hip.hipHostAlloc(16, 0)
    assert hip.hipFree(h3) == (OK,)  # HIP's hipFree frees pinned allocations too
    _, d = hip.hipMalloc(16)
    assert hip.hipFreeAsync(d, None) == (OK,)
    assert hip.hipFreeAsync(d, None) == (E.hipErrorInvalidValue,)
    hip.hipDeviceSynchronize()
    assert hip.hipFree(d) == (E.hipErrorInvalidValue,)


def test_host_frees_do_not_free_device_memory():
    _, d = hip.hipMalloc(16)
    assert hip.hipHostFree(d) == (E.hipErrorInvalidValue,)
    assert hip.hipFreeHost(d) == (E.hipErrorInvalidValue,)
    assert hip.hipMemset(d, 1, 16) == (OK,)  # still live
    assert hip.hipFree(d) == (OK,)


def test_free_waits_for_outstanding_work(kernels):
    _, d = hip.hipMalloc(16)
    _, h = hip.hipHostMalloc(16, 0)
    kernels.launch("copy_u8", int(h), int(d), ctypes.c_uint64(16))
    assert hip.hipFree(d) == (OK,)  # the copy ran first, so no illegal address
    assert hip.hipDeviceSynchronize() == (OK,)


def test_register_and_unregister_errors():
    buf = np.zeros(4096, np.uint8)
    assert hip.hipHostRegister(buf, 4096, hip.hipHostRegisterDefault) == (OK,)
    assert hip.hipHostRegister(buf, 4096, 0) == (E.hipErrorHostMemoryAlreadyRegistered,)
    assert hip.hipHostRegister(buf[100:], 8, 0) == (E.hipErrorHostMemoryAlreadyRegistered,)
    assert hip.hipHostGetDevicePointer(buf, 0) == (OK, hip.Pointer(buf.ctypes.data))
    assert hip.hipHostUnregister(buf) == (OK,)
    assert hip.hipHostUnregister(buf) == (E.hipErrorHostMemoryNotRegistered,)
    assert hip.hipHostGetDevicePointer(buf, 0) == (E.hipErrorInvalidValue, None)


def test_kernels_read_registered_host_memory(kernels):
    buf = np.arange(8, dtype=np.uint32)
    out = np.zeros(1, np.uint32)
    hip.hipHostRegister(buf, buf.nbytes, 0)
    hip.hipHostRegister(out, out.nbytes, 0)
    kernels.launch("sum_u32", out.ctypes.data, buf.ctypes.data, ctypes.c_uint32(8))
    hip.hipDeviceSynchronize()
    assert out[0] == 28


def test_pointer_attributes():
    _, d = hip.hipMalloc(64)
    _, h = hip.hipHostMalloc(64, hip.hipHostMallocMapped)
    err, attr = hip.hipPointerGetAttributes(int(d) + 8)
    assert err == OK and attr.type == hip.hipMemoryType.hipMemoryTypeDevice
    assert int(attr.devicePointer) == int(d) + 8
    err, attr = hip.hipPointerGetAttributes(h)
    assert err == OK and attr.type == hip.hipMemoryType.hipMemoryTypeHost
    assert int(attr.hostPointer) == int(attr.devicePointer) == int(h)
    host = np.zeros(4)
    err, attr = hip.hipPointerGetAttributes(host)
    assert attr.type == hip.hipMemoryType.hipMemoryTypeUnregistered
    assert hip.hipPointerGetAttributes(DEVICE_BASE + (1 << 39)) == (E.hipErrorInvalidValue, None)


def test_pointer_inputs_follow_hip_python_rules():
    _, d = hip.hipMalloc(8)
    src = np.arange(8, dtype=np.uint8)
    for dst in (d, int(d), ctypes.c_void_p(int(d)), hip.Pointer(int(d))):
        assert hip.hipMemcpy(dst, src, 8, K.hipMemcpyHostToDevice) == (OK,)
    with pytest.raises(TypeError):
        hip.hipMemcpy(object(), src, 8, K.hipMemcpyHostToDevice)


def test_device_info_calls():
    assert hip.hipInit(0) == (OK,)
    assert hip.hipGetDeviceCount() == (OK, 1)
    assert hip.hipGetDevice() == (OK, 0)
    assert hip.hipSetDevice(0) == (OK,)
    err, props = hip.hipGetDeviceProperties(0)
    assert err == OK and props.totalGlobalMem > 0 and props.gcnArchName == as_text(b"gfx942:sramecc+:xnack-")
    err, free, total = hip.hipMemGetInfo()
    hip.hipMalloc(1 << 20)
    assert hip.hipMemGetInfo()[1] == free - (1 << 20)
    err, name = hip.hipGetErrorName(E.hipErrorInvalidValue)
    assert (err, str(name)) == (OK, "hipErrorInvalidValue")
    assert str(hip.hipGetErrorString(E.hipErrorInvalidValue)[1]) == "invalid argument"
    assert hip.hipMalloc(0) == (OK, None)


ALLOCATORS = {   # name -> a call allocating n bytes
    "hipMalloc": lambda n: hip.hipMalloc(n),
    "hipExtMallocWithFlags": lambda n: hip.hipExtMallocWithFlags(n, 0),
    "hipMallocAsync": lambda n: hip.hipMallocAsync(n, 0),
    "hipHostMalloc": lambda n: hip.hipHostMalloc(n, 0),
    "hipMallocHost": lambda n: hip.hipMallocHost(n),
    "hipMemAllocHost": lambda n: hip.hipMemAllocHost(n),
}


@pytest.mark.parametrize("name", sorted(ALLOCATORS))
def test_every_allocation_call_keeps_one_rule_for_its_size(name):
    """0 bytes: success and no pointer; a negative size: invalid value; more than the
    device (or the pinned memory) holds: out of memory, the same for every call."""
    call = ALLOCATORS[name]
    assert call(0) == (OK, None)
    assert call(-1)[0] == E.hipErrorInvalidValue
    assert call(1 << 40)[0] == E.hipErrorOutOfMemory
    err, ptr = call(16)
    assert err == OK and int(ptr)
    hip.hipDeviceSynchronize()
    (hip.hipFree if name in ("hipMalloc", "hipExtMallocWithFlags", "hipMallocAsync") else hip.hipHostFree)(ptr)
    assert hip.hipMallocManaged(0, 1)[0] == E.hipErrorInvalidValue
    assert hip.hipMallocPitch(1 << 30, 1 << 12)[0] == E.hipErrorOutOfMemory
