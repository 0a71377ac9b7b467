"""The cuda backend's host-memory bookkeeping: which pinned allocations it made.

HIP's hipFree also frees hipHostMalloc memory, while CUDA frees pinned memory only with
cuMemFreeHost; so the backend remembers the pinned allocations it handed out and routes
hipFree of one of them to the driver's pinned free.
"""
from __future__ import annotations

import threading
from typing import Any

from hrr import hiptypes as ht
from hrr.backends.cuda._errors import SUCCESS, hip_error
from hrr.backends.cuda._runtime import STATE as S
from hrr.backends.cuda._runtime import driver

# cuMemHostAlloc's and cuMemHostRegister's flags: PORTABLE | DEVICEMAP (HIP's pinned memory
# is both), plus bit 0x4 as HIP has it (WRITECOMBINED for an allocation, IOMEMORY for a
# registration: hipHostMallocWriteCombined and hipHostRegisterIoMemory are 0x4 too)
CU_PINNED = 0x01 | 0x02

_lock = threading.Lock()
# pinned allocations made by hipHostMalloc & co: address -> size (hipFree frees them too)
_pinned: dict[int, int] = {}


def forget_all() -> None:
    """hipDeviceReset freed every pinned allocation: forget them."""
    with _lock:
        _pinned.clear()


def pinned_holds(addr: int, n: int) -> bool:
    """Whether ``n`` bytes from ``addr`` lie inside one pinned allocation this backend made."""
    with _lock:
        return any(base <= addr and addr + n <= base + size for base, size in _pinned.items())


def malloc(size: Any, *stream: int) -> tuple:
    """hipMalloc, and hipMallocAsync (with its stream)."""
    size = int(size)
    err, p = (S.rt.cudaMallocAsync if stream else S.rt.cudaMalloc)(size, *stream)
    if int(err) or not p:
        return (hip_error(err), None)
    return (SUCCESS, ht.DeviceArray(int(p), size))


def free_pinned(addr: int) -> "ht.hipError_t":
    """Free a pinned allocation (cuMemFreeHost) and forget it once the driver has."""
    (res,) = driver().cuMemFreeHost(addr)
    if int(res) == 0:
        with _lock:
            _pinned.pop(addr, None)
    return hip_error(res)


def free(addr: int) -> tuple:
    """hipFree: pinned memory this backend allocated goes to cuMemFreeHost, the rest to cudaFree."""
    if addr and addr in _pinned:
        return (free_pinned(addr),)
    return (hip_error(S.rt.cudaFree(addr)[0]),)


def host_alloc(size: Any, flags: Any) -> tuple:
    """hipHostMalloc and hipHostAlloc: pinned, portable, device-mapped host memory."""
    size = int(size)
    res, p = driver().cuMemHostAlloc(size, CU_PINNED | int(flags) & 0x4)
    if int(res) or not p:
        return (hip_error(res), None)
    with _lock:
        _pinned[int(p)] = size
    return (SUCCESS, ht.Pointer(int(p)))


def host_free(addr: int) -> tuple:
    """hipHostFree: NULL is a no-op."""
    if not addr:
        return (SUCCESS,)
    return (free_pinned(addr),)
