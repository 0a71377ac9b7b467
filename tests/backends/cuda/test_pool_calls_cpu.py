"""The cuda backend's memory-pool and CU-mask bodies, checked without a GPU against
test_table_cpu's fake driver: each makes exactly the CUDA call (name, arguments, order),
converts its outputs, and answers what HIP checks itself without calling the driver."""
from __future__ import annotations

import ctypes

import pytest
from fakecuda import FakeCuda

from hrr import hiptypes as ht
from hrr.backends.cuda import _runtime, pool_calls, stream_calls
from test_table_cpu import cuda  # noqa: F401 - the fake-driver fixture

E = ht.hipError_t
S, POOL = ht.ihipStream_t(0x51), ht.ihipMemPoolHandle_t(0x60)


@pytest.fixture
def loud(cuda, monkeypatch):  # noqa: F811
    """test_table_cpu's fake, with the cuDevice* calls logged too (the pool queries are some)."""
    hip, log, results = cuda
    monkeypatch.setattr(_runtime.STATE, "drv", FakeCuda("drv", log, results))
    return hip, log, results


def _props(alloc_type=1, loc_type=1, device=0, max_size=1 << 20, handle_types=0):
    location = ht.ReplayMemLocation(type=loc_type, id=device)
    return ht.ReplayMemPoolProps(allocType=alloc_type, handleTypes=handle_types, location=location, maxSize=max_size)


def test_every_pool_row_has_a_cuda_body():
    from hrr.api.catalogue import CATALOGUE
    rows = {name for name, row in CATALOGUE.items() if row.family == "mempool"}
    assert rows <= set(pool_calls.body.bodies) and "hipExtStreamCreateWithCUMask" in stream_calls.body.bodies


@pytest.mark.parametrize("name,args,call,out", [
    ("hipDeviceGetDefaultMemPool", (0,), "cuDeviceGetDefaultMemPool", ht.ihipMemPoolHandle_t(0x77)),
    ("hipDeviceGetMemPool", (0,), "cuDeviceGetMemPool", ht.ihipMemPoolHandle_t(0x77)),
])
def test_device_pool_queries(loud, name, args, call, out):
    hip, log, results = loud
    results["cuDeviceGet"] = (0, 0x33)
    assert getattr(hip, name)(*args) == (E.hipSuccess, out)
    assert log == [("drv", "cuDeviceGet", (0,)), ("drv", call, (0x33,))]


def test_device_ordinals_as_hip_answers_them(loud):
    hip, log, results = loud
    results["cuDeviceGet"] = (101, None)
    assert hip.hipDeviceGetDefaultMemPool(5) == (E.hipErrorInvalidDevice, None)
    assert hip.hipDeviceGetMemPool(5) == (E.hipErrorInvalidValue, None)
    assert hip.hipDeviceSetMemPool(5, POOL) == (E.hipErrorInvalidValue,)
    assert [entry[1] for entry in log] == ["cuDeviceGet"] * 3


def test_set_mem_pool(loud):
    hip, log, results = loud
    results.update(cuDeviceGet=(0, 0x33), cuDeviceSetMemPool=(0,))
    assert hip.hipDeviceSetMemPool(0, POOL) == (E.hipSuccess,)
    assert hip.hipDeviceSetMemPool(0, None) == (E.hipErrorInvalidValue,)   # NULL: no driver call
    assert log[1] == ("drv", "cuDeviceSetMemPool", (0x33, 0x60)) and len(log) == 3


def test_pool_create_passes_cuda_the_same_properties(cuda):  # noqa: F811
    hip, log, results = cuda
    err, pool = hip.hipMemPoolCreate(_props())
    assert err == E.hipSuccess and pool == ht.ihipMemPoolHandle_t(0x77)
    ((where, fn, (props,)),) = log
    assert (where, fn) == ("drv", "cuMemPoolCreate")
    assert (int(props.allocType), int(props.handleTypes), int(props.location.type), props.location.id,
            props.maxSize) == (1, 0, 1, 0, 1 << 20)


@pytest.mark.parametrize("bad", [dict(alloc_type=2), dict(loc_type=2), dict(device=-1), dict(handle_types=3)])
def test_pool_properties_hip_refuses_make_no_call(cuda, bad):  # noqa: F811
    hip, log, _ = cuda
    assert hip.hipMemPoolCreate(_props(**bad)) == (E.hipErrorInvalidValue, None)
    assert hip.hipMemPoolCreate(None) == (E.hipErrorInvalidValue, None)
    assert log == []


def test_pool_destroy_refuses_a_default_pool(loud):
    hip, log, results = loud
    results.update(cudaGetDeviceCount=(0, 2), cuDeviceGet=(0, 0x33), cuDeviceGetDefaultMemPool=(0, 0x61),
                   cuMemPoolDestroy=(0,))
    assert hip.hipMemPoolDestroy(POOL) == (E.hipSuccess,)
    assert log[-1] == ("drv", "cuMemPoolDestroy", (0x60,))
    log.clear()
    assert hip.hipMemPoolDestroy(ht.ihipMemPoolHandle_t(0x61)) == (E.hipErrorInvalidValue,)
    assert hip.hipMemPoolDestroy(None) == (E.hipErrorInvalidValue,)
    assert "cuMemPoolDestroy" not in [entry[1] for entry in log]


def test_malloc_from_pool_and_trim(cuda):  # noqa: F811
    hip, log, results = cuda
    results.update(cuMemAllocFromPoolAsync=(0, 0x4000), cuMemPoolTrimTo=(0,))
    err, d = hip.hipMallocFromPoolAsync(256, POOL, S)
    assert err == E.hipSuccess and type(d) is ht.DeviceArray and (int(d), d.size) == (0x4000, 256)
    assert hip.hipMallocFromPoolAsync(0, POOL, S) == (E.hipSuccess, None)       # nothing to allocate
    assert hip.hipMallocFromPoolAsync(16, None, S) == (E.hipErrorInvalidValue, None)
    assert hip.hipMemPoolTrimTo(POOL, 64) == (E.hipSuccess,)
    assert log == [("drv", "cuMemAllocFromPoolAsync", (256, 0x60, 0x51)), ("drv", "cuMemPoolTrimTo", (0x60, 64))]
    results["cuMemAllocFromPoolAsync"] = (2, None)
    assert hip.hipMallocFromPoolAsync(16, POOL, None) == (E.hipErrorOutOfMemory, None)


def test_pool_attributes_go_to_libcuda_with_the_values_address(cuda, monkeypatch):  # noqa: F811
    hip, _, results = cuda
    lib_log: list = []
    monkeypatch.setattr(_runtime.STATE, "libcuda", FakeCuda("lib", lib_log, {"cuMemPoolSetAttribute": 0,
                                                                            "cuMemPoolGetAttribute": 1}))
    value = ctypes.c_uint64(1 << 20)
    assert hip.hipMemPoolSetAttribute(POOL, ht.hipMemPoolAttr.hipMemPoolAttrReleaseThreshold, value) == (
        E.hipSuccess,)
    assert hip.hipMemPoolGetAttribute(POOL, ht.hipMemPoolAttr.hipMemPoolAttrUsedMemHigh, value) == (
        E.hipErrorInvalidValue,)   # the driver's answer
    assert [(fn, pool.value, attr.value, addr.value) for _, fn, (pool, attr, addr) in lib_log] == [
        ("cuMemPoolSetAttribute", 0x60, 4, ctypes.addressof(value)),
        ("cuMemPoolGetAttribute", 0x60, 8, ctypes.addressof(value))]
    lib_log.clear()
    assert hip.hipMemPoolSetAttribute(POOL, 4, None) == (E.hipErrorInvalidValue,)
    assert hip.hipMemPoolGetAttribute(None, 4, value) == (E.hipErrorInvalidValue,)
    assert lib_log == []


def test_a_cu_masked_stream_is_a_plain_stream(cuda):  # noqa: F811
    hip, log, _ = cuda
    err, s = hip.hipExtStreamCreateWithCUMask(2, [0xFF, 0])
    assert err == E.hipSuccess and type(s) is ht.ihipStream_t and int(s) == 0x77
    assert log == [("rt", "cudaStreamCreate", ())]
    log.clear()
    for size, mask in ((0, [1]), (1, None), (2, [1]), (1, 0)):
        assert hip.hipExtStreamCreateWithCUMask(size, mask) == (E.hipErrorInvalidValue, None)
    assert log == []
