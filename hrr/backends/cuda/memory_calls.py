"""The cuda backend's bodies of the memory calls (catalogue families ``memory``,
``copy`` and ``pinned``): device, pitched, managed and pinned allocations, copies, memsets
of 8/16/32-bit elements and 2D regions, peer copies, address and range queries, over
cuda-bindings.

Device allocations come back as ``DeviceArray``, pinned host memory as ``Pointer``; what
the backend keeps beside the driver (pinned allocations) lives in ``memory``. HIP's enum
values for these calls equal CUDA's (hipMemoryAdvise 1-6 and cudaMemoryAdvise), so they
pass as ints. A call that is one CUDA call (``onecall.one_call``) or one call into
``memory`` is a table entry; each body is registered with ``@body`` or ``body.table``.
"""
from __future__ import annotations

import ctypes
from typing import Any

from hrr import hiptypes as ht
from hrr.backends.bodies import Bodies
from hrr.backends.cuda import memory
from hrr.backends.cuda._errors import SUCCESS, hip_error
from hrr.backends.cuda._runtime import STATE as S
from hrr.backends.cuda._runtime import driver
from hrr.backends.cuda.memory import CU_PINNED
from hrr.backends.cuda.onecall import as_int as _int
from hrr.backends.cuda.onecall import cuda_kind as _kind
from hrr.backends.cuda.onecall import new as _new
from hrr.backends.cuda.onecall import one_call as C

E = ht.hipError_t

body = Bodies("memory", "copy", "pinned")


def _pitched(res: tuple, height: Any) -> tuple:
    err, ptr, pitch = res
    if int(err) or not ptr:
        return (hip_error(err), None, None)
    return (SUCCESS, ht.DeviceArray(int(ptr), int(pitch) * int(height)), int(pitch))


@body
def hipMallocPitch(width: Any, height: Any) -> tuple:
    return _pitched(S.rt.cudaMallocPitch(int(width), int(height)), height)


@body
def hipMemAllocPitch(widthInBytes: Any, height: Any, elementSizeBytes: Any) -> tuple:
    return _pitched(driver().cuMemAllocPitch(int(widthInBytes), int(height), int(elementSizeBytes)), height)


@body
def hipMallocManaged(size: Any, flags: Any) -> tuple:
    err, ptr = S.rt.cudaMallocManaged(int(size), int(flags))
    if int(err) or not ptr:
        return (hip_error(err), None)
    return (SUCCESS, ht.DeviceArray(int(ptr), int(size)))


@body
def hipMemcpyWithStream(dst: int, src: int, sizeBytes: Any, kind: Any, stream: int) -> tuple:
    """A copy ordered on ``stream`` that returns once the stream has run it."""
    err = S.rt.cudaMemcpyAsync(dst, src, int(sizeBytes), _kind(kind), stream)[0]
    if int(err) == 0:
        err = S.rt.cudaStreamSynchronize(stream)[0]
    return (hip_error(err),)


def _location(device: Any) -> Any:
    """CUDA 13's cudaMemLocation for a device id (hipCpuDeviceId -1: the host)."""
    from cuda.bindings import runtime as rt
    loc = rt.cudaMemLocation()
    if int(device) < 0:
        loc.type = rt.cudaMemLocationType.cudaMemLocationTypeHost
        loc.id = 0
    else:
        loc.type = rt.cudaMemLocationType.cudaMemLocationTypeDevice
        loc.id = int(device)
    return loc


@body
def hipMemPrefetchAsync(dev_ptr: int, count: Any, device: Any, stream: int) -> tuple:
    return (hip_error(S.rt.cudaMemPrefetchAsync(dev_ptr, int(count), _location(device), 0, stream)[0]),)


@body
def hipMemAdvise(dev_ptr: int, count: Any, advice: Any, device: Any) -> tuple:
    if int(advice) not in range(1, 7):  # the coarse-grain advice is AMD's own
        return (E.hipErrorInvalidValue,)
    return (hip_error(S.rt.cudaMemAdvise(dev_ptr, int(count), int(advice), _location(device))[0]),)


@body
def hipMemGetAddressRange(dptr: int) -> tuple:
    err, base, size = driver().cuMemGetAddressRange(dptr)
    if int(err):
        return (hip_error(err), None, None)
    return (SUCCESS, ht.Pointer(int(base)), int(size))


@body
def hipMemPtrGetInfo(ptr: int) -> tuple:
    err, _base, size = driver().cuMemGetAddressRange(ptr)
    return (hip_error(err), int(size) if int(err) == 0 else None)


@body
def hipExtMallocWithFlags(sizeBytes: Any, flags: Any) -> tuple:
    """Device memory; the AMD-specific flags (fine-grained, uncached...) have no CUDA meaning."""
    return memory.malloc(sizeBytes)


_WORD_ATTRIBUTES = (1, 3, 4, 7, 11, 12, 17)   # context, pointers, buffer id, range, mempool: 8 bytes


def _write(data: int, values: list[int], fmt: str) -> None:
    import struct
    mask = (1 << (8 * struct.calcsize(fmt))) - 1
    out = b"".join(struct.pack(fmt, v if fmt[-1].islower() else v & mask) for v in values)   # signed as is
    ctypes.memmove(data, out, len(out))


@body
def hipPointerGetAttribute(data: int, attribute: Any, ptr: int) -> tuple:
    """cuPointerGetAttribute (HIP's attribute numbers are CUDA's), its answer written to
    ``data`` as an 8-byte word (addresses, sizes, handles) or a 4-byte one."""
    attribute = int(attribute)
    if attribute == 5 or not data:   # P2P tokens: a CUDA struct with no HIP counterpart
        return (E.hipErrorInvalidValue,)
    drv = driver()
    err, value = drv.cuPointerGetAttribute(drv.CUpointer_attribute(attribute), ptr)   # an enum member, not an int
    if int(err):
        return (hip_error(err),)
    _write(data, [int(value or 0)], "<Q" if attribute in _WORD_ATTRIBUTES else "<I")
    return (SUCCESS,)


@body
def hipMemRangeGetAttribute(data: int, data_size: Any, attribute: Any, dev_ptr: int, count: Any) -> tuple:
    """cudaMemRangeGetAttribute: int32 answers (an array of them for AccessedBy)."""
    if int(attribute) not in (1, 2, 3, 4) or not data:   # AMD's coherency mode has no CUDA counterpart
        return (E.hipErrorInvalidValue,)
    err, value = S.rt.cudaMemRangeGetAttribute(int(data_size), S.rt.cudaMemRangeAttribute(int(attribute)),
                                               dev_ptr, int(count))
    if int(err):
        return (hip_error(err),)
    values = [int(v) for v in value] if isinstance(value, (list, tuple)) else [int(value or 0)]
    _write(data, values[:int(data_size) // 4], "<i")
    return (SUCCESS,)


def _ptr_attrs(a: Any) -> ht.hipPointerAttribute_t | None:
    if a is None:
        return None
    mtype = ht.hipMemoryType(int(a.type))
    return ht.hipPointerAttribute_t(
        type=mtype, device=int(a.device), devicePointer=int(a.devicePointer or 0),
        hostPointer=int(a.hostPointer or 0), isManaged=int(mtype == ht.hipMemoryType.hipMemoryTypeManaged))


# Calls that are one CUDA call (see onecall.one_call): its name, how each output converts and,
# where they differ from the row's, the CUDA call's arguments; the value of a memset as the
# C API's unsigned char / short / int takes it. Then the calls that are one call into memory.
body.table({
    "hipPointerGetAttributes": C("rt.cudaPointerGetAttributes", _ptr_attrs),
    "hipFreeAsync": C("rt.cudaFreeAsync"),
    "hipMemset": C("rt.cudaMemset"),
    "hipMemsetAsync": C("rt.cudaMemsetAsync"),
    "hipMemcpy": C("rt.cudaMemcpy", args=lambda d, s, n, k: (d, s, n, _kind(k))),
    "hipMemcpyAsync": C("rt.cudaMemcpyAsync", args=lambda d, s, n, k, st: (d, s, n, _kind(k), st)),
    "hipMemcpyHtoD": C("rt.cudaMemcpy", args=lambda d, s, n: (d, s, n, 1)),
    "hipMemcpyDtoH": C("rt.cudaMemcpy", args=lambda d, s, n: (d, s, n, 2)),
    "hipMemcpyDtoD": C("rt.cudaMemcpy", args=lambda d, s, n: (d, s, n, 3)),
    "hipMemcpyHtoDAsync": C("rt.cudaMemcpyAsync", args=lambda d, s, n, st: (d, s, n, 1, st)),
    "hipMemcpyDtoHAsync": C("rt.cudaMemcpyAsync", args=lambda d, s, n, st: (d, s, n, 2, st)),
    "hipMemcpyDtoDAsync": C("rt.cudaMemcpyAsync", args=lambda d, s, n, st: (d, s, n, 3, st)),
    "hipHostRegister": C("drv.cuMemHostRegister", args=lambda p, n, flags: (p, n, CU_PINNED | int(flags) & 0x4)),
    "hipHostUnregister": C("drv.cuMemHostUnregister"),
    "hipHostGetDevicePointer": C("drv.cuMemHostGetDevicePointer", _new(ht.Pointer), args=lambda p, flags: (p, 0)),
    "hipMemsetD8": C("drv.cuMemsetD8", args=lambda d, v, n: (d, int(v) & 0xFF, n)),
    "hipMemsetD16": C("drv.cuMemsetD16", args=lambda d, v, n: (d, int(v) & 0xFFFF, n)),
    "hipMemsetD32": C("drv.cuMemsetD32", args=lambda d, v, n: (d, int(v) & 0xFFFFFFFF, n)),
    "hipMemsetD8Async": C("drv.cuMemsetD8Async", args=lambda d, v, n, s: (d, int(v) & 0xFF, n, s)),
    "hipMemsetD16Async": C("drv.cuMemsetD16Async", args=lambda d, v, n, s: (d, int(v) & 0xFFFF, n, s)),
    "hipMemsetD32Async": C("drv.cuMemsetD32Async", args=lambda d, v, n, s: (d, int(v) & 0xFFFFFFFF, n, s)),
    "hipMemset2D": C("rt.cudaMemset2D"),
    "hipMemset2DAsync": C("rt.cudaMemset2DAsync"),
    "hipMemsetD2D8": C("drv.cuMemsetD2D8", args=lambda d, p, v, w, h: (d, p, int(v) & 0xFF, w, h)),
    "hipMemsetD2D16": C("drv.cuMemsetD2D16", args=lambda d, p, v, w, h: (d, p, int(v) & 0xFFFF, w, h)),
    "hipMemsetD2D32": C("drv.cuMemsetD2D32", args=lambda d, p, v, w, h: (d, p, int(v) & 0xFFFFFFFF, w, h)),
    "hipMemcpy2D": C("rt.cudaMemcpy2D", args=lambda d, dp, s, sp, w, h, k: (d, dp, s, sp, w, h, _kind(k))),
    "hipMemcpy2DAsync": C("rt.cudaMemcpy2DAsync",
                          args=lambda d, dp, s, sp, w, h, k, st: (d, dp, s, sp, w, h, _kind(k), st)),
    "hipMemcpyPeer": C("rt.cudaMemcpyPeer"),
    "hipMemcpyPeerAsync": C("rt.cudaMemcpyPeerAsync"),
    "hipHostGetFlags": C("rt.cudaHostGetFlags", _int),
    "hipMalloc": memory.malloc,
    "hipMallocAsync": memory.malloc,
    "hipFree": memory.free,
    "hipHostMalloc": memory.host_alloc,
    "hipHostAlloc": memory.host_alloc,
    "hipMallocHost": lambda size: memory.host_alloc(size, 0),
    "hipHostFree": memory.host_free,
    "hipFreeHost": memory.host_free,
    "hipMemAllocHost": lambda size: memory.host_alloc(size, 0),
})
