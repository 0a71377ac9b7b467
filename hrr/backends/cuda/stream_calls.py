"""The cuda backend's bodies of the stream calls (catalogue family ``stream``):
creation (with flags, a priority or a CU mask), queries, synchronisation, host functions
and callbacks, 32- and 64-bit stream memory operations, over cuda-bindings' runtime and,
for host functions, libcuda's own calls through ctypes.

A call that is one CUDA call is a table entry (``onecall.one_call``); each body is
registered with ``@body`` or ``body.table``.
"""
from __future__ import annotations

import ctypes
from typing import Any

from hrr import hiptypes as ht
from hrr.backends.bodies import Bodies
from hrr.backends.cuda import _runtime, modules
from hrr.backends.cuda._errors import hip_error
from hrr.backends.cuda._errors import hip_error as _err
from hrr.backends.cuda._runtime import STATE as S
from hrr.backends.cuda._runtime import handle_value as _h
from hrr.backends.cuda.onecall import as_int as _int
from hrr.backends.cuda.onecall import new as _new
from hrr.backends.cuda.onecall import one_call as C
from hrr.backends.surface import HipError, irregular

E = ht.hipError_t
_U64 = 0xFFFF_FFFF_FFFF_FFFF

body = Bodies("stream")


@body
def hipExtStreamCreateWithCUMask(cuMaskSize: Any, cuMask: Any) -> tuple:
    """A plain stream (cudaStreamCreate): CUDA cannot restrict a stream to some SMs, so
    the mask is checked as HIP checks it (non-empty, not NULL) and then ignored."""
    n = int(cuMaskSize)
    listed = isinstance(cuMask, (list, tuple))
    if n <= 0 or cuMask is None or (len(cuMask) < n if listed else not ht.address_or_zero(cuMask)):
        return (E.hipErrorInvalidValue, None)
    err, stream = S.rt.cudaStreamCreate()
    return (hip_error(err), ht.ihipStream_t(int(stream)) if int(err) == 0 else None)


@body
@irregular(raw=True)  # a ctypes function object gives its code address, not its own
def hipLaunchHostFunc(stream: Any, fn: Any, userData: Any) -> tuple:
    """Enqueued through libcuda's own cuLaunchHostFunc (ctypes): cuda-bindings 13.3.1
    wraps the function in a one-shot trampoline that crashes a graph's second launch."""
    addr = modules.host_fn_address(fn)
    if not addr:
        return (E.hipErrorInvalidValue,)
    _runtime.ensure_context()
    res = S.libcuda.cuLaunchHostFunc(ctypes.c_void_p(_h(stream) or None), ctypes.c_void_p(addr),
                                     ctypes.c_void_p(ht.as_address(userData) or None))
    return (_err(res),)


@body
def hipStreamAddCallback(stream: int, callback: Any, userData: Any, flags: Any) -> tuple:
    """Through libcuda's own cuStreamAddCallback (ctypes), as hipLaunchHostFunc is: a
    CUstreamCallback has hipStreamCallback_t's shape (stream, status, userData)."""
    addr = modules.host_fn_address(callback)
    if not addr:
        return (E.hipErrorInvalidValue,)
    _runtime.ensure_context()
    res = S.libcuda.cuStreamAddCallback(ctypes.c_void_p(int(stream) or None), ctypes.c_void_p(addr),
                                        ctypes.c_void_p(ht.as_address(userData) or None), ctypes.c_uint(int(flags)))
    return (_err(res),)


def _wait_value_args(stream: int, ptr: int, value: Any, flags: Any, mask: Any) -> tuple:
    if (int(mask) & 0xFFFFFFFF) != 0xFFFFFFFF:
        raise HipError(E.hipErrorNotSupported)  # CUDA has no mask operand
    # hipStreamWaitValueGte/Eq/And/Nor have CU_STREAM_WAIT_VALUE_GEQ/EQ/AND/NOR's values
    return (stream, ptr, int(value) & 0xFFFFFFFF, flags)


def _wait64_args(stream: int, ptr: int, value: Any, flags: Any, mask: Any) -> tuple:
    if (int(mask) & _U64) != _U64:
        raise HipError(E.hipErrorNotSupported)  # CUDA has no mask operand
    return (stream, ptr, int(value) & _U64, flags)


# Calls that are one CUDA call (see onecall.one_call): its name, how each output converts and,
# where they differ from the row's, the CUDA call's arguments.
body.table({
    "hipStreamCreate": C("rt.cudaStreamCreate", _new(ht.ihipStream_t)),
    "hipStreamCreateWithFlags": C("rt.cudaStreamCreateWithFlags", _new(ht.ihipStream_t)),
    "hipStreamCreateWithPriority": C("rt.cudaStreamCreateWithPriority", _new(ht.ihipStream_t)),
    "hipStreamDestroy": C("rt.cudaStreamDestroy"),
    "hipStreamSynchronize": C("rt.cudaStreamSynchronize"),
    "hipStreamQuery": C("rt.cudaStreamQuery"),
    "hipStreamWaitEvent": C("rt.cudaStreamWaitEvent"),
    "hipStreamGetPriority": C("rt.cudaStreamGetPriority", _int),
    "hipStreamGetFlags": C("rt.cudaStreamGetFlags", _int),
    "hipStreamGetDevice": C("rt.cudaStreamGetDevice", _int),
    "hipStreamGetId": C("rt.cudaStreamGetId", _int),
    "hipStreamWaitValue32": C("drv.cuStreamWaitValue32", args=_wait_value_args),
    "hipStreamWriteValue32": C("drv.cuStreamWriteValue32", args=lambda st, p, v, f: (st, p, int(v) & 0xFFFFFFFF, f)),
    "hipStreamWaitValue64": C("drv.cuStreamWaitValue64", args=_wait64_args),
    "hipStreamWriteValue64": C("drv.cuStreamWriteValue64",
                               args=lambda st, p, v, f: (st, p, int(v) & _U64, f)),
})
