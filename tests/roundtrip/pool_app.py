"""An app that calls every stream-ordered allocation and memory-pool row and
hipExtStreamCreateWithCUMask, with results the replay checks byte for byte: allocations
from the default pool, from a pool of its own and from the pool it makes the device's,
copies through them on three streams, a free on another stream than the allocation's
(ordered through an event), pool attributes set and read, a trim and the pool's end.
With ``errors`` it also makes the errors a GPU gives (a double free of an async
allocation, a destroyed pool, the default pool's destruction): the sim only, as a
destroyed pool's handle is a dangling pointer to a GPU driver."""
from __future__ import annotations

import ctypes

import numpy as np

N = 64   # uint32 words per buffer


def ok(result):
    assert int(result[0]) == 0, result
    return None if len(result) == 1 else result[1] if len(result) == 2 else result[1:]


def pool_props(hip):
    """The properties of a pool of pinned device memory on device 0, as a program fills them."""
    props = hip.hipMemPoolProps()
    props.allocType = hip.hipMemAllocationType.hipMemAllocationTypePinned
    props.handleTypes = hip.hipMemAllocationHandleType.hipMemHandleTypeNone
    props.location.type = hip.hipMemLocationType.hipMemLocationTypeDevice
    props.location.id = 0
    props.maxSize = 0
    return props


def exercise_pools(hip, errors: bool = False) -> dict:
    """Every pool row at least once; returns what the app copied back."""
    A = hip.hipMemPoolAttr
    nbytes = N * 4
    out: dict = {}
    default = ok(hip.hipDeviceGetDefaultMemPool(0))
    assert int(ok(hip.hipDeviceGetMemPool(0))) == int(default)
    pool = ok(hip.hipMemPoolCreate(pool_props(hip)))
    ok(hip.hipMemPoolSetAttribute(pool, A.hipMemPoolAttrReleaseThreshold, ctypes.c_uint64(1 << 20)))
    ok(hip.hipMemPoolSetAttribute(pool, A.hipMemPoolReuseAllowOpportunistic, ctypes.c_int32(0)))
    s1 = ok(hip.hipStreamCreate())
    s2 = ok(hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking))
    masked = ok(hip.hipExtStreamCreateWithCUMask(2, [0x0000000F, 0]))
    done = ok(hip.hipEventCreate())
    a = ok(hip.hipMallocFromPoolAsync(nbytes, pool, s1))
    b = ok(hip.hipMallocAsync(nbytes, s1))   # the default pool
    src = np.arange(N, dtype=np.uint32) * 5 + 3
    ok(hip.hipMemcpyHtoDAsync(a, src, nbytes, s1))
    ok(hip.hipMemcpyDtoDAsync(b, a, nbytes, s1))
    used = ctypes.c_uint64(0)
    ok(hip.hipMemPoolGetAttribute(pool, A.hipMemPoolAttrUsedMemCurrent, used))
    out["used_while_live"] = used.value
    # the app's own pool becomes the device's: hipMallocAsync draws from it, on the masked stream
    ok(hip.hipDeviceSetMemPool(0, pool))
    assert int(ok(hip.hipDeviceGetMemPool(0))) == int(pool)
    c = ok(hip.hipMallocAsync(nbytes, masked))
    ok(hip.hipMemsetAsync(c, 0x5A, nbytes, masked))
    ok(hip.hipStreamSynchronize(s1))
    ok(hip.hipMemcpyDtoDAsync(int(c) + 16, b, 64, masked))
    from_c = np.zeros(N, np.uint32)
    ok(hip.hipMemcpyDtoHAsync(from_c, c, nbytes, masked))
    ok(hip.hipStreamSynchronize(masked))
    out["masked"] = from_c.copy()
    # a free on another stream than the allocation's, ordered after the last use through an event
    from_b = np.zeros(N, np.uint32)
    ok(hip.hipMemcpyDtoHAsync(from_b, b, nbytes, s1))
    ok(hip.hipEventRecord(done, s1))
    ok(hip.hipStreamWaitEvent(s2, done, 0))
    ok(hip.hipFreeAsync(b, s2))
    ok(hip.hipFreeAsync(a, s1))
    ok(hip.hipFreeAsync(c, masked))
    ok(hip.hipStreamSynchronize(s1))
    ok(hip.hipStreamSynchronize(s2))
    ok(hip.hipStreamSynchronize(masked))
    out["from_b"] = from_b.copy()
    high = ctypes.c_uint64(0)
    ok(hip.hipMemPoolGetAttribute(pool, A.hipMemPoolAttrUsedMemHigh, high))
    out["used_high"] = high.value
    ok(hip.hipMemPoolTrimTo(pool, 0))
    ok(hip.hipDeviceSetMemPool(0, default))
    ok(hip.hipMemPoolDestroy(pool))
    if errors:
        E = hip.hipError_t
        assert hip.hipFreeAsync(a, s1)[0] == E.hipErrorInvalidValue           # a double free
        assert hip.hipMallocFromPoolAsync(16, pool, s1)[0] == E.hipErrorInvalidValue   # a destroyed pool
        assert hip.hipMemPoolDestroy(pool)[0] == E.hipErrorInvalidValue       # destroyed twice
        assert hip.hipMemPoolDestroy(default)[0] == E.hipErrorInvalidValue    # the default pool
    for s in (s1, s2, masked):
        ok(hip.hipStreamDestroy(s))
    ok(hip.hipEventDestroy(done))
    return out
