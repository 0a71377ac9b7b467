"""The sim's bodies of the stream calls (catalogue family ``stream``): creation, queries,
synchronisation, host functions and stream memory operations (``streams.py``).

Each body is registered with ``@body`` (``hrr.backends.bodies``); ``api.py`` builds
``hip`` from them.
"""
from __future__ import annotations

import ctypes
import struct
from typing import Any, Callable

from hrr import hiptypes as ht
from hrr.backends.bodies import Bodies
from hrr.hiptypes import hipError_t
from hrr.backends.sim.device import current as _dev
from hrr.backends.sim.device import keep
from hrr.backends.sim.device import raise_device_error, refuse_if_capturing
from hrr.backends.sim.streams import Event, Op, Stream, wait_value_op, write_value_op
from hrr.backends.surface import HipError

SUCCESS = hipError_t.hipSuccess


body = Bodies("stream")


# -- lookups ----------------------------------------------------------------------------
def _stream(obj: Any) -> Stream:
    dev = _dev()
    return dev.lookup(dev.streams, obj, "stream")


# -- streams and events ---------------------------------------------------------------------
def _create_stream(flags: int) -> tuple:
    handle = keep("stream", lambda h: Stream(h, int(flags)))
    _dev().scheduler.add_stream(_dev().streams[int(handle)])
    return (SUCCESS, handle)


@body
def hipStreamDestroy(s: Stream) -> None:
    if s.is_null:
        raise HipError("hipErrorInvalidHandle", "the null stream cannot be destroyed")
    if s.capture is not None:
        s.capture.invalidate("the capturing stream was destroyed")
    s.destroyed = True  # its queued work still runs; the scheduler drops it once drained
    del _dev().streams[s.handle]


@body
def hipStreamSynchronize(s: Stream) -> None:
    refuse_if_capturing(s, "hipStreamSynchronize")
    dev = _dev()
    dev.check_capture_safe("hipStreamSynchronize")
    dev.wait(dev.scheduler.barrier_positions(s))


@body
def hipStreamQuery(s: Stream) -> tuple:
    refuse_if_capturing(s, "hipStreamQuery")
    sched = _dev().scheduler
    done = sched.poll(sched.barrier_positions(s))
    raise_device_error(sched.take_async_error())
    return (SUCCESS,) if done else (hipError_t.hipErrorNotReady,)


@body
def hipStreamWaitEvent(s: Stream, ev: Event, flags: int) -> None:
    _dev().wait_event(s, ev)


_HOST_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


@body
def hipLaunchHostFunc(s: Stream, fn_addr: int, data: int) -> None:
    if not fn_addr:
        raise HipError("hipErrorInvalidValue", "hipLaunchHostFunc: NULL function")
    callback = _HOST_FN(fn_addr)
    _dev().submit(s, lambda: Op(f"host_fn(0x{fn_addr:x})", lambda: callback(data or None), 1.0))


@body
def hipStreamWaitValue32(s: Stream, ptr: int, value: int, flags: int, mask: int) -> None:
    memory = _dev().memory
    _dev().submit(s, wait_value_op(memory.resolve_for_kernel, memory.value_address(ptr), value, flags, mask))


@body
def hipStreamWriteValue32(s: Stream, ptr: int, value: int, flags: int) -> None:
    memory = _dev().memory
    _dev().submit(s, write_value_op(memory.resolve_for_kernel, memory.value_address(ptr), value))


PRIORITY_LEAST, PRIORITY_GREATEST = 0, -1   # the sim's stream priority range (lower is higher)


# -- streams and events -------------------------------------------------------------------
@body
def hipStreamCreateWithPriority(flags: int, priority: int) -> tuple:
    dev = _dev()
    prio = min(max(int(priority), PRIORITY_GREATEST), PRIORITY_LEAST)   # clamped, as HIP does
    handle = dev.keep("stream", lambda h: Stream(h, int(flags), priority=prio))
    dev.scheduler.add_stream(dev.streams[int(handle)])
    return (SUCCESS, handle)


@body
def hipStreamGetId(s: Stream) -> tuple:
    return (SUCCESS, 0 if s.is_null else (s.handle & 0xFFFFFF) >> 4)


_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p)


@body
def hipStreamAddCallback(s: Stream, callback: int, userData: int, flags: int) -> None:
    if not callback:
        raise HipError("hipErrorInvalidValue", "hipStreamAddCallback: NULL callback")
    if int(flags) != 0:
        raise HipError("hipErrorInvalidValue", "hipStreamAddCallback: flags must be 0")
    fn, stream = _CALLBACK(callback), s.handle
    _dev().submit(s, lambda: Op(f"host_fn(0x{callback:x})", lambda: fn(stream or None, 0, userData or None), 1.0))


_WAIT64 = {0: lambda w, v, m: w >= v, 1: lambda w, v, m: w == v, 2: lambda w, v, m: (w & v) != 0,
           3: lambda w, v, m: (~(w | v) & m) != 0}   # as hipStreamWaitValue32's, on 64 bits


_U64 = 0xFFFF_FFFF_FFFF_FFFF


def _value64_address(addr: int) -> int:
    if _dev().memory.device_visible(addr, 8) is None:
        raise HipError("hipErrorInvalidValue", f"0x{addr:x} is not 8 bytes of device-visible memory")
    return addr


@body
def hipStreamWaitValue64(s: Stream, ptr: int, value: int, flags: int, mask: int) -> None:
    cond = _WAIT64.get(int(flags))
    if cond is None:
        raise HipError("hipErrorInvalidValue", f"hipStreamWaitValue64: unknown flags {flags}")
    memory, addr = _dev().memory, _value64_address(ptr)
    m = int(mask) & _U64
    v = int(value) & m

    def make() -> Op:
        def run() -> bool:
            word = int(memory.resolve_for_kernel(addr, 8).view("<u8")[0]) & m
            return bool(cond(word, v, m))
        return Op(f"hipStreamWaitValue64(0x{addr:x}, {v}, flags={int(flags)})", run, 0.5)
    _dev().submit(s, make)


@body
def hipStreamWriteValue64(s: Stream, ptr: int, value: int, flags: int) -> None:
    memory, addr, v = _dev().memory, _value64_address(ptr), int(value) & _U64

    def make() -> Op:
        def run() -> None:
            memory.resolve_for_kernel(addr, 8).view("<u8")[0] = v
        return Op(f"hipStreamWriteValue64(0x{addr:x}, {v})", run, 0.5)
    _dev().submit(s, make)


def _stream_query(what: str) -> Callable[[Stream], tuple]:
    return lambda s: (SUCCESS, getattr(s, what))


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


@body
def hipExtStreamCreateWithCUMask(cuMaskSize: Any, cuMask: Any) -> tuple:
    """A default-flags stream that keeps its CU mask (words beyond the device's CUs are
    ignored, as HIP ignores them); the sim runs its work as any stream's."""
    words = cu_mask_words(cuMask, int(cuMaskSize))
    dev = _dev()
    handle = dev.keep("stream", lambda h: Stream(h, 0, cu_mask=tuple(words)))
    dev.scheduler.add_stream(dev.streams[int(handle)])
    return (SUCCESS, handle)


body.table({
    "hipStreamCreate": lambda: _create_stream(0),
    "hipStreamCreateWithFlags": _create_stream,
    "hipStreamGetPriority": _stream_query("priority"),
    "hipStreamGetFlags": _stream_query("flags"),
    "hipStreamGetDevice": lambda s: (SUCCESS, 0),
})
