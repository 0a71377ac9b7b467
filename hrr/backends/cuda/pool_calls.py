"""The cuda backend's bodies of the memory-pool calls (catalogue family ``mempool``):
stream-ordered allocation from memory pools, over cuda-bindings' driver API.

HIP's pool calls are CUDA's (cuMemPool*, cuMemAllocFromPoolAsync, cuDevice*MemPool) with
the same numbering of hipMemPoolAttr, hipMemAllocationType, hipMemLocationType and
hipMemAllocationHandleType. What HIP checks before the driver is checked here the same
way (a NULL pool or value, properties other than pinned memory on a device, destroying a
device's default pool: hipErrorInvalidValue), so a program gets HIP's answer and the
driver never sees a NULL handle. hipMemPoolSetAttribute/GetAttribute go to libcuda's own
functions through ctypes: HIP's ``void* value`` is passed through as the C API takes it,
whatever the attribute's width. Each body is registered with ``@body``.
"""
from __future__ import annotations

import ctypes
from typing import Any

from hrr import hiptypes as ht
from hrr.backends.bodies import Bodies
from hrr.backends.cuda._errors import SUCCESS, hip_error
from hrr.backends.cuda._runtime import STATE as S
from hrr.backends.cuda._runtime import driver, ensure_context

E = ht.hipError_t
_PINNED, _LOCATION_DEVICE = 1, 1   # hipMemAllocationTypePinned, hipMemLocationTypeDevice

body = Bodies("mempool")


def _pool(v: Any) -> Any:
    return ht.ihipMemPoolHandle_t(int(v)) if v is not None and int(v) else None


def _cu_device(device: Any) -> Any:
    """The driver's CUdevice for an ordinal, or None when there is no such device."""
    err, cudev = S.drv.cuDeviceGet(int(device))
    return None if int(err) else cudev


@body
def hipDeviceGetDefaultMemPool(device: Any) -> tuple:
    cudev = _cu_device(device)
    if cudev is None:
        return (E.hipErrorInvalidDevice, None)
    err, pool = driver().cuDeviceGetDefaultMemPool(cudev)
    return (hip_error(err), _pool(pool) if int(err) == 0 else None)


@body
def hipDeviceGetMemPool(device: Any) -> tuple:
    cudev = _cu_device(device)
    if cudev is None:   # HIP answers an unknown device here with an invalid value
        return (E.hipErrorInvalidValue, None)
    err, pool = driver().cuDeviceGetMemPool(cudev)
    return (hip_error(err), _pool(pool) if int(err) == 0 else None)


@body
def hipDeviceSetMemPool(device: Any, mem_pool: int) -> tuple:
    cudev = _cu_device(device)
    if cudev is None or not mem_pool:
        return (E.hipErrorInvalidValue,)
    return (hip_error(driver().cuDeviceSetMemPool(cudev, mem_pool)[0]),)


def _field(obj: Any, name: str) -> int | None:
    try:
        value = getattr(obj, name)
        return None if value is None else int(value)
    except (AttributeError, TypeError, ValueError):   # hip-python raises for a garbage enum field
        return None


def cu_pool_props(pool_props: Any) -> Any:
    """CUDA's CUmemPoolProps for HIP's hipMemPoolProps (None: HIP refuses them)."""
    from cuda.bindings import driver as cu   # the struct types: no driver call
    location = getattr(pool_props, "location", None)
    device = _field(location, "id")
    if _field(pool_props, "allocType") != _PINNED or _field(location, "type") != _LOCATION_DEVICE \
            or device is None or device < 0:
        return None
    try:
        props = cu.CUmemPoolProps()
        props.allocType = cu.CUmemAllocationType(_PINNED)
        props.handleTypes = cu.CUmemAllocationHandleType(_field(pool_props, "handleTypes") or 0)
        props.location.type = cu.CUmemLocationType(_LOCATION_DEVICE)
        props.location.id = device
        props.maxSize = _field(pool_props, "maxSize") or 0
    except (ValueError, OverflowError):   # a handle type or size CUDA cannot express
        return None
    return props


@body
def hipMemPoolCreate(pool_props: Any) -> tuple:
    props = None if pool_props is None else cu_pool_props(pool_props)
    if props is None:
        return (E.hipErrorInvalidValue, None)
    err, pool = driver().cuMemPoolCreate(props)
    return (hip_error(err), _pool(pool) if int(err) == 0 else None)


def _is_default_pool(mem_pool: int) -> bool:
    """Whether ``mem_pool`` is some device's default pool (which HIP never destroys)."""
    err, count = S.rt.cudaGetDeviceCount()
    for ordinal in range(int(count or 0) if int(err) == 0 else 0):
        cudev = _cu_device(ordinal)
        if cudev is not None:
            res, pool = driver().cuDeviceGetDefaultMemPool(cudev)
            if int(res) == 0 and pool is not None and int(pool) == mem_pool:
                return True
    return False


@body
def hipMemPoolDestroy(mem_pool: int) -> tuple:
    if not mem_pool or _is_default_pool(mem_pool):
        return (E.hipErrorInvalidValue,)
    return (hip_error(driver().cuMemPoolDestroy(mem_pool)[0]),)


@body
def hipMallocFromPoolAsync(size: Any, mem_pool: int, stream: int) -> tuple:
    n = int(size)
    if not mem_pool:
        return (E.hipErrorInvalidValue, None)
    if n == 0:   # HIP's answer: no allocation, no error
        return (SUCCESS, None)
    err, ptr = driver().cuMemAllocFromPoolAsync(n, mem_pool, stream)
    if int(err) or not ptr or not int(ptr):
        return (hip_error(err), None)
    return (SUCCESS, ht.DeviceArray(int(ptr), n))


@body
def hipMemPoolTrimTo(mem_pool: int, min_bytes_to_hold: Any) -> tuple:
    if not mem_pool:
        return (E.hipErrorInvalidValue,)
    return (hip_error(driver().cuMemPoolTrimTo(mem_pool, int(min_bytes_to_hold))[0]),)


def _attribute(name: str, mem_pool: int, attr: Any, value: Any) -> tuple:
    """libcuda's ``name`` (cuMemPoolSetAttribute/GetAttribute) with the value's address."""
    addr = ht.address_or_zero(value)
    if not mem_pool or not addr:
        return (E.hipErrorInvalidValue,)
    ensure_context()
    res = getattr(S.libcuda, name)(ctypes.c_void_p(mem_pool), ctypes.c_int(int(attr)), ctypes.c_void_p(addr))
    return (hip_error(res),)


@body
def hipMemPoolSetAttribute(mem_pool: int, attr: Any, value: Any) -> tuple:
    return _attribute("cuMemPoolSetAttribute", mem_pool, attr, value)


@body
def hipMemPoolGetAttribute(mem_pool: int, attr: Any, value: Any) -> tuple:
    return _attribute("cuMemPoolGetAttribute", mem_pool, attr, value)
