"""The sim's bodies of the memory-pool calls (catalogue family ``mempool``), over ``pools.py``.

Each body is registered with ``@body`` (``hrr.backends.bodies``); ``api.py`` builds
``hip`` from them.
"""
from __future__ import annotations

import ctypes
import struct
from typing import Any

from hrr import hiptypes as ht
from hrr.backends.bodies import Bodies
from hrr.hiptypes import DeviceArray, hipError_t
from hrr.backends.sim.device import current as _dev
from hrr.backends.sim.device import DEVICE_COUNT, refuse_during_capture, refuse_if_capturing
from hrr.backends.sim.memory import allocate, checked_size
from hrr.backends.sim.pools import INT32_ATTRIBUTES, MemPool, PoolAttributeError
from hrr.backends.sim.streams import Stream
from hrr.backends.surface import HipError

SUCCESS = hipError_t.hipSuccess


body = Bodies("mempool")


_PINNED, _LOCATION_DEVICE = 1, 1   # hipMemAllocationTypePinned, hipMemLocationTypeDevice


def malloc_from(pool: MemPool, size: Any, stream: Stream, what: str) -> tuple:
    """A stream-ordered allocation of ``size`` bytes from ``pool`` on ``stream``."""
    refuse_if_capturing(stream, what)   # no memory-allocation graph nodes in the sim
    n = checked_size(size)
    if not pool.fits(n):
        raise HipError("hipErrorOutOfMemory", f"{what}: {n} bytes would exceed the pool's maxSize {pool.max_size}")
    alloc = allocate(_dev().memory, n, what)
    if alloc is None:
        return (SUCCESS, None)
    pool.allocated(n)
    alloc.pool = pool
    return (SUCCESS, DeviceArray(alloc.base, n))


@body
def hipMallocFromPoolAsync(size: Any, mem_pool: MemPool, stream: Stream) -> tuple:
    return malloc_from(mem_pool, size, stream, "hipMallocFromPoolAsync")


def _handle(pool: MemPool) -> ht.ihipMemPoolHandle_t:
    return ht.ihipMemPoolHandle_t(pool.handle)


@body
def hipDeviceGetDefaultMemPool(device: Any) -> tuple:
    if not 0 <= int(device) < DEVICE_COUNT:
        raise HipError("hipErrorInvalidDevice", f"device {device} does not exist (the sim has 1)")
    return (SUCCESS, _handle(_dev().default_pool))


def _device_ordinal(device: Any, what: str) -> None:
    if not 0 <= int(device) < DEVICE_COUNT:   # HIP answers these two with an invalid value
        raise HipError("hipErrorInvalidValue", f"{what}: device {device} does not exist (the sim has 1)")


@body
def hipDeviceGetMemPool(device: Any) -> tuple:
    _device_ordinal(device, "hipDeviceGetMemPool")
    return (SUCCESS, _handle(_dev().current_pool))


@body
def hipDeviceSetMemPool(device: Any, mem_pool: MemPool) -> None:
    _device_ordinal(device, "hipDeviceSetMemPool")
    refuse_during_capture("hipDeviceSetMemPool")
    _dev().current_pool = mem_pool


def _field(obj: Any, name: str) -> int | None:
    try:
        value = getattr(obj, name)
        return None if value is None else int(value)
    except (AttributeError, TypeError, ValueError):   # hip-python raises for a garbage enum field
        return None


@body
def hipMemPoolCreate(pool_props: Any) -> tuple:
    if pool_props is None:
        raise HipError("hipErrorInvalidValue", "hipMemPoolCreate without properties")
    if _field(pool_props, "allocType") != _PINNED:
        raise HipError("hipErrorInvalidValue", "a pool's allocType must be hipMemAllocationTypePinned")
    location = getattr(pool_props, "location", None)
    device = _field(location, "id")
    if _field(location, "type") != _LOCATION_DEVICE or device is None or not 0 <= device < DEVICE_COUNT:
        raise HipError("hipErrorInvalidValue", "a pool's location must be device 0 (hipMemLocationTypeDevice)")
    max_size = _field(pool_props, "maxSize") or 0
    if max_size < 0:
        raise HipError("hipErrorInvalidValue", f"a pool's maxSize of {max_size}")
    refuse_during_capture("hipMemPoolCreate")
    dev = _dev()
    return (SUCCESS, dev.keep("mem_pool", lambda h: MemPool(h, max_size, _field(pool_props, "handleTypes") or 0)))


@body
def hipMemPoolDestroy(mem_pool: MemPool) -> None:
    """The pool's handle goes; allocations still made from it stay valid until freed."""
    refuse_during_capture("hipMemPoolDestroy")
    dev = _dev()
    if mem_pool.is_default:
        raise HipError("hipErrorInvalidValue", "a device's default memory pool cannot be destroyed")
    del dev.mem_pools[mem_pool.handle]
    if dev.current_pool is mem_pool:
        dev.current_pool = dev.default_pool
    mem_pool.held = 0


@body
def hipMemPoolTrimTo(mem_pool: MemPool, min_bytes_to_hold: Any) -> None:
    mem_pool.trim(checked_size(min_bytes_to_hold))


def _width(attr: Any) -> int:
    return 4 if int(attr) in INT32_ATTRIBUTES else 8


@body
def hipMemPoolSetAttribute(mem_pool: MemPool, attr: Any, value: Any) -> None:
    addr = ht.as_address(value)
    if not addr:
        raise HipError("hipErrorInvalidValue", "hipMemPoolSetAttribute: a NULL value")
    fmt = "<i" if _width(attr) == 4 else "<Q"
    (number,) = struct.unpack(fmt, ctypes.string_at(addr, struct.calcsize(fmt)))
    try:
        mem_pool.set(int(attr), number)
    except PoolAttributeError as exc:
        raise HipError("hipErrorInvalidValue", str(exc)) from None


@body
def hipMemPoolGetAttribute(mem_pool: MemPool, attr: Any, value: Any) -> None:
    addr = ht.as_address(value)
    if not addr:
        raise HipError("hipErrorInvalidValue", "hipMemPoolGetAttribute: a NULL value")
    fmt = "<i" if _width(attr) == 4 else "<Q"
    data = struct.pack(fmt, mem_pool.get(int(attr)))
    ctypes.memmove(addr, data, len(data))


