"""What hipBLAS's sim bodies share: the family's ``body`` registry, the handle and its
calls (create, destroy, stream, pointer mode), and the helpers that read vectors and
scalars, check sizes, submit an op and deliver a result. Level 1 (``hipblas_vector``) and
levels 2 and 3 (``hipblas_matrix``) build on it; ``hipblas`` gathers them."""
from __future__ import annotations

import ctypes
from typing import Any, Callable

import attrs
import numpy as np

from hrr.backends.bodies import Bodies
from hrr.backends.mathlib import LibraryError
from hrr.backends.sim.device import current as _dev
from hrr.backends.sim.mathlibs import handles
from hrr.backends.sim.streams import Op, Stream
from hrr.hiptypes.mathlibs.hipblas import hipblasPointerMode_t, hipblasStatus_t

body = Bodies("hipblas")

HOST = int(hipblasPointerMode_t.HIPBLAS_POINTER_MODE_HOST)
INVALID = hipblasStatus_t.HIPBLAS_STATUS_INVALID_VALUE
DTYPES: dict[str, np.dtype] = {"S": np.dtype("<f4"), "D": np.dtype("<f8"), "C": np.dtype("<c8"), "Z": np.dtype("<c16")}


@attrs.define(eq=False)
class BlasHandle:
    """A hipblasHandle_t: the stream its work goes to and its pointer mode."""

    value: int
    stream: Stream
    pointer_mode: int = HOST


# -- handles ----------------------------------------------------------------------------
@body
def hipblasCreate() -> tuple:
    return (hipblasStatus_t.HIPBLAS_STATUS_SUCCESS,
            handles.create("blas_handle", lambda v: BlasHandle(v, _dev().scheduler.null)))


@body
def hipblasDestroy(h: BlasHandle) -> None:
    handles.destroy("blas_handle", h.value)


@body
def hipblasSetStream(h: BlasHandle, s: Stream) -> None:
    h.stream = s


@body
def hipblasGetStream(h: BlasHandle, streamId: int) -> None:
    _host_write(streamId, np.uint64(h.stream.handle).tobytes(), "streamId")


@body
def hipblasSetPointerMode(h: BlasHandle, mode: Any) -> None:
    h.pointer_mode = int(mode)


@body
def hipblasGetPointerMode(h: BlasHandle, mode: int) -> None:
    _host_write(mode, np.int32(h.pointer_mode).tobytes(), "mode")


def _host_write(addr: int, data: bytes, what: str) -> None:
    if not addr:
        raise LibraryError(INVALID, f"{what} is NULL")
    ctypes.memmove(addr, data, len(data))


# -- device memory as numpy ----------------------------------------------------------------
def vector(addr: int, n: int, inc: int, dtype: np.dtype) -> np.ndarray:
    """The ``n`` elements of a BLAS vector at ``addr`` (a view: writes reach device memory)."""
    if n <= 0:
        return np.zeros(0, dtype)
    step = abs(inc) or 1
    span = (1 + (n - 1) * abs(inc)) * dtype.itemsize
    raw = _dev().memory.resolve_for_kernel(addr, span).view(dtype)
    if inc == 0:
        return np.broadcast_to(raw[:1], (n,))
    view = raw[::step]
    return view[::-1] if inc < 0 else view


def scalar(h: BlasHandle, addr: int, dtype: np.dtype, what: str) -> Callable[[], Any]:
    """A scalar the call reads: in host mode its value now, in device mode when the op runs."""
    if not addr:
        raise LibraryError(INVALID, f"{what} is NULL")
    if h.pointer_mode == HOST:
        value = np.frombuffer(ctypes.string_at(addr, dtype.itemsize), dtype)[0]
        return lambda: value
    memory = _dev().memory
    return lambda: memory.resolve_for_kernel(addr, dtype.itemsize).view(dtype)[0]


def submit(h: BlasHandle, label: str, run: Callable[[], None], cost_us: float = 5.0) -> None:
    """The call's work as one op on its handle's stream."""
    _dev().submit(h.stream, lambda: Op(label, run, cost_us))


def check_sizes(**sizes: int) -> None:
    bad = [f"{k}={v}" for k, v in sizes.items() if v < 0]
    if bad:
        raise LibraryError(INVALID, ", ".join(bad))


def check_written(**increments: int) -> None:
    """A vector the call writes cannot have increment 0 (every element would be one place:
    the result would depend on the order a GPU happens to write them in)."""
    zero = [k for k, v in increments.items() if v == 0]
    if zero:
        raise LibraryError(INVALID, f"{', '.join(zero)} is 0 for a vector the call writes")


def result(h: BlasHandle, addr: int, dtype: np.dtype, label: str, compute: Callable[[], Any]) -> None:
    """A call that writes one scalar: its op computes it and stores it through the pointer
    mode; in host mode the call returns once it is written (it waits for its stream)."""
    if not addr:
        raise LibraryError(INVALID, "result is NULL")
    host = h.pointer_mode == HOST
    if host and h.stream.capture is not None:
        raise LibraryError(hipblasStatus_t.HIPBLAS_STATUS_NOT_SUPPORTED,
                           f"{label}: a host result cannot be written by a captured graph")
    memory = _dev().memory

    def run() -> None:
        data = np.asarray(compute(), dtype).tobytes()
        if host:
            ctypes.memmove(addr, data, len(data))
        else:
            memory.resolve_for_kernel(addr, len(data))[:] = np.frombuffer(data, np.uint8)
    submit(h, label, run)
    if host:
        stream = h.stream
        _dev().wait([(stream, stream.enqueued)])


__all__ = ["body", "BlasHandle", "vector", "scalar", "submit", "result", "check_sizes", "check_written",
           "DTYPES", "INVALID"]
