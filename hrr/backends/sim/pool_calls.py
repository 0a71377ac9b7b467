"""The sim's bodies of stream-ordered allocation from memory pools (hipMemPool*,
hipMallocFromPoolAsync, hipDevice{Get,Set}MemPool, hipDeviceGetDefaultMemPool) and of
hipExtStreamCreateWithCUMask.

An allocation from a pool is a device allocation made at the call (so work enqueued
after it on any stream may use it) and tagged with its pool; hipFreeAsync frees it when
its op runs on the free's stream (``Memory.free_async_op``), which is when the pool counts
it free (``pools.MemPool``). Errors are HIP's: an unknown or destroyed pool, a NULL value
pointer, a device other than 0 and properties HIP refuses are hipErrorInvalidValue (a
device for hipDeviceGetDefaultMemPool is hipErrorInvalidDevice); the default pool cannot
be destroyed; creating or destroying a pool, or setting the device's, while any stream
captures is 900 without invalidating the capture, as HIP answers. A pool allocation on a
capturing stream is 900 and invalidates the capture (no memory-allocation graph nodes).
"""
from __future__ import annotations

import ctypes
import struct
from typing import Any, Callable

from hrr.backends import hiptypes as ht
from hrr.backends.hiptypes import DeviceArray, hipError_t
from hrr.backends.sim import device as _device
from hrr.backends.sim.device import refuse_if_capturing
from hrr.backends.sim.memory import checked_size
from hrr.backends.sim.pools import INT32_ATTRIBUTES, MemPool, PoolAttributeError
from hrr.backends.sim.streams import Stream
from hrr.backends.surface import HipError

SUCCESS = hipError_t.hipSuccess
DEVICE_COUNT = 1
_PINNED, _LOCATION_DEVICE = 1, 1   # hipMemAllocationTypePinned, hipMemLocationTypeDevice
_dev = _device.current


def malloc_from(pool: MemPool, size: Any, stream: Stream, what: str) -> tuple:
    """A stream-ordered allocation of ``size`` bytes from ``pool`` on ``stream``."""
    refuse_if_capturing(stream, what)   # no memory-allocation graph nodes in the sim
    n = checked_size(size)
    if n == 0:
        return (SUCCESS, None)
    if not pool.fits(n):
        raise HipError("hipErrorOutOfMemory", f"{what}: {n} bytes would exceed the pool's maxSize {pool.max_size}")
    alloc = _dev().memory.malloc(n)
    if alloc is None:
        raise HipError("hipErrorOutOfMemory", f"{what}: cannot allocate {n} bytes")
    pool.allocated(n)
    alloc.pool = pool
    return (SUCCESS, DeviceArray(alloc.base, n))


def hipMallocFromPoolAsync(size: Any, mem_pool: MemPool, stream: Stream) -> tuple:
    return malloc_from(mem_pool, size, stream, "hipMallocFromPoolAsync")


def _refuse_during_capture(what: str) -> None:
    """HIP refuses (900) a pool's creation or destruction, or a change of the device's
    pool, while any stream captures; the capture is not invalidated."""
    if any(not c.invalidated_by for c in _dev().captures):
        raise HipError("hipErrorStreamCaptureUnsupported", f"{what} while a stream captures")


def _handle(pool: MemPool) -> ht.ihipMemPoolHandle_t:
    return ht.ihipMemPoolHandle_t(pool.handle)


def hipDeviceGetDefaultMemPool(device: Any) -> tuple:
    if not 0 <= int(device) < DEVICE_COUNT:
        raise HipError("hipErrorInvalidDevice", f"device {device} does not exist (the sim has 1)")
    return (SUCCESS, _handle(_dev().default_pool))


def _device_ordinal(device: Any, what: str) -> None:
    if not 0 <= int(device) < DEVICE_COUNT:   # HIP answers these two with an invalid value
        raise HipError("hipErrorInvalidValue", f"{what}: device {device} does not exist (the sim has 1)")


def hipDeviceGetMemPool(device: Any) -> tuple:
    _device_ordinal(device, "hipDeviceGetMemPool")
    return (SUCCESS, _handle(_dev().current_pool))


def hipDeviceSetMemPool(device: Any, mem_pool: MemPool) -> None:
    _device_ordinal(device, "hipDeviceSetMemPool")
    _refuse_during_capture("hipDeviceSetMemPool")
    _dev().current_pool = mem_pool


def _field(obj: Any, name: str) -> int | None:
    try:
        value = getattr(obj, name)
        return None if value is None else int(value)
    except (AttributeError, TypeError, ValueError):   # hip-python raises for a garbage enum field
        return None


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
    _refuse_during_capture("hipMemPoolCreate")
    dev = _dev()
    return (SUCCESS, dev.keep("mem_pool", lambda h: MemPool(h, max_size, _field(pool_props, "handleTypes") or 0)))


def hipMemPoolDestroy(mem_pool: MemPool) -> None:
    """The pool's handle goes; allocations still made from it stay valid until freed."""
    _refuse_during_capture("hipMemPoolDestroy")
    dev = _dev()
    if mem_pool.is_default:
        raise HipError("hipErrorInvalidValue", "a device's default memory pool cannot be destroyed")
    del dev.mem_pools[mem_pool.handle]
    if dev.current_pool is mem_pool:
        dev.current_pool = dev.default_pool
    mem_pool.held = 0


def hipMemPoolTrimTo(mem_pool: MemPool, min_bytes_to_hold: Any) -> None:
    mem_pool.trim(checked_size(min_bytes_to_hold))


def _width(attr: Any) -> int:
    return 4 if int(attr) in INT32_ATTRIBUTES else 8


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


def hipMemPoolGetAttribute(mem_pool: MemPool, attr: Any, value: Any) -> None:
    addr = ht.as_address(value)
    if not addr:
        raise HipError("hipErrorInvalidValue", "hipMemPoolGetAttribute: a NULL value")
    fmt = "<i" if _width(attr) == 4 else "<Q"
    data = struct.pack(fmt, mem_pool.get(int(attr)))
    ctypes.memmove(addr, data, len(data))


def cu_mask_words(mask: Any, n: int) -> list[int]:
    """The ``n`` 32-bit words of a CU mask given as a list, a buffer or an address
    (hipErrorInvalidValue for a NULL or empty mask, or a list shorter than ``n``)."""
    if n <= 0 or mask is None:
        raise HipError("hipErrorInvalidValue", "hipExtStreamCreateWithCUMask needs a non-empty CU mask")
    if isinstance(mask, (list, tuple)):
        if len(mask) < n:
            raise HipError("hipErrorInvalidValue", f"the CU mask holds {len(mask)} words, cuMaskSize is {n}")
        return [int(x) & 0xFFFFFFFF for x in mask[:n]]
    try:
        addr = ht.as_address(mask)
    except ht.PointerConversionError:
        raise HipError("hipErrorInvalidValue", f"{type(mask).__name__} is not a CU mask") from None
    if not addr:
        raise HipError("hipErrorInvalidValue", "hipExtStreamCreateWithCUMask: a NULL CU mask")
    have = ht.buffer_nbytes(mask)
    if have is not None and have < 4 * n:
        raise HipError("hipErrorInvalidValue", f"the CU mask holds {have} bytes, cuMaskSize is {n} words")
    return list(struct.unpack(f"<{n}I", ctypes.string_at(addr, 4 * n)))


def hipExtStreamCreateWithCUMask(cuMaskSize: Any, cuMask: Any) -> tuple:
    """A default-flags stream that keeps its CU mask (words beyond the device's CUs are
    ignored, as HIP ignores them); the sim runs its work as any stream's."""
    words = cu_mask_words(cuMask, int(cuMaskSize))
    dev = _dev()
    handle = dev.keep("stream", lambda h: Stream(h, 0, cu_mask=tuple(words)))
    dev.scheduler.add_stream(dev.streams[int(handle)])
    return (SUCCESS, handle)


BODIES: dict[str, Callable] = {name: fn for name, fn in globals().items() if name.startswith("hip") and callable(fn)
                               and getattr(fn, "__module__", None) == __name__}
