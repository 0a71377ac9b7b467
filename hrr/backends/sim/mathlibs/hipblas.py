"""hipBLAS on the sim: each call's work is one ``Op`` on its handle's stream, computed with
numpy on device memory with BLAS's semantics (column-major matrices, leading dimensions,
increments that may be negative: element i of a vector with INC < 0 is at (n - 1 - i)*|INC|;
a vector the call writes with increment 0 is refused as an invalid value).

Scalars follow the handle's pointer mode: in host mode ``alpha`` is read when the call is
made and a result is written to host memory before the call returns (the call waits for
its stream, as hipBLAS does); in device mode both are device memory, read or written when
the op runs.
"""
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


def _written(**increments: int) -> None:
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


# -- level 1 ---------------------------------------------------------------------------------
def _axpy(t: str) -> Callable:
    dtype = DTYPES[t]

    def axpy(h: BlasHandle, n: int, alpha: int, x: int, incx: int, y: int, incy: int) -> None:
        check_sizes(n=n)
        if n == 0:
            return
        _written(incy=incy)
        a = scalar(h, alpha, dtype, "alpha")

        def run() -> None:
            yv = vector(y, n, incy, dtype)
            yv[...] = a() * vector(x, n, incx, dtype) + yv
        submit(h, f"hipblas{t}axpy(n={n})", run)
    return axpy


def _scal(name: str, t: str, alpha_t: str) -> Callable:
    dtype, alpha_dtype = DTYPES[t], DTYPES[alpha_t]

    def scal(h: BlasHandle, n: int, alpha: int, x: int, incx: int) -> None:
        check_sizes(n=n)
        if n == 0 or incx <= 0:   # BLAS: nothing to scale
            return
        a = scalar(h, alpha, alpha_dtype, "alpha")

        def run() -> None:
            xv = vector(x, n, incx, dtype)
            xv[...] = (a() * xv).astype(dtype)
        submit(h, f"{name}(n={n})", run)
    return scal


def _copy(t: str) -> Callable:
    dtype = DTYPES[t]

    def copy(h: BlasHandle, n: int, x: int, incx: int, y: int, incy: int) -> None:
        check_sizes(n=n)
        if n == 0:
            return
        _written(incy=incy)

        def run() -> None:
            vector(y, n, incy, dtype)[...] = vector(x, n, incx, dtype).copy()
        submit(h, f"hipblas{t}copy(n={n})", run)
    return copy


def _swap(t: str) -> Callable:
    dtype = DTYPES[t]

    def swap(h: BlasHandle, n: int, x: int, incx: int, y: int, incy: int) -> None:
        check_sizes(n=n)
        if n == 0:
            return
        _written(incx=incx, incy=incy)

        def run() -> None:
            xv, yv = vector(x, n, incx, dtype), vector(y, n, incy, dtype)
            saved = xv.copy()
            xv[...] = yv
            yv[...] = saved
        submit(h, f"hipblas{t}swap(n={n})", run)
    return swap


def _dot(name: str, t: str, conjugate: bool) -> Callable:
    dtype = DTYPES[t]

    def dot(h: BlasHandle, n: int, x: int, incx: int, y: int, incy: int, out: int) -> None:
        check_sizes(n=n)

        def compute() -> Any:
            if n <= 0:
                return 0
            xv, yv = vector(x, n, incx, dtype), vector(y, n, incy, dtype)
            return np.vdot(xv, yv) if conjugate else np.dot(xv, yv)
        result(h, out, dtype, f"{name}(n={n})", compute)
    return dot


def _reduce(name: str, t: str, out_t: str, reduce: Callable[[np.ndarray], Any]) -> Callable:
    """nrm2, asum, iamax and iamin: a value of the vector, 0 when n <= 0 or incx <= 0."""
    dtype, out_dtype = DTYPES[t], (np.dtype("<i4") if out_t == "I" else DTYPES[out_t])

    def call(h: BlasHandle, n: int, x: int, incx: int, out: int) -> None:
        check_sizes(n=n)

        def compute() -> Any:
            return 0 if n <= 0 or incx <= 0 else reduce(vector(x, n, incx, dtype))
        result(h, out, out_dtype, f"{name}(n={n})", compute)
    return call


def _magnitudes(v: np.ndarray) -> np.ndarray:
    """BLAS's magnitude of each element for asum and iamax/iamin: |re| + |im|."""
    return np.abs(v.real) + np.abs(v.imag) if np.iscomplexobj(v) else np.abs(v)


def _nrm2(v: np.ndarray) -> Any:
    # scaled, as BLAS does, so that squares of large or tiny values neither overflow nor vanish
    big = np.max(np.abs(v))
    return 0 if big == 0 else big * np.sqrt(np.sum(np.abs(v / big) ** 2))


_REAL = {"S": "S", "D": "D", "C": "S", "Z": "D"}
_PREFIX = {"S": "S", "D": "D", "C": "Sc", "Z": "Dz"}
_TABLE: dict[str, Callable] = {}
for _t in DTYPES:
    _TABLE[f"hipblas{_t}axpy"] = _axpy(_t)
    _TABLE[f"hipblas{_t}scal"] = _scal(f"hipblas{_t}scal", _t, _t)
    _TABLE[f"hipblas{_t}copy"] = _copy(_t)
    _TABLE[f"hipblas{_t}swap"] = _swap(_t)
    for _op, _conj in ((("dot", False),) if _t in "SD" else (("dotu", False), ("dotc", True))):
        _TABLE[f"hipblas{_t}{_op}"] = _dot(f"hipblas{_t}{_op}", _t, _conj)
    _TABLE[f"hipblas{_PREFIX[_t]}nrm2"] = _reduce(f"hipblas{_PREFIX[_t]}nrm2", _t, _REAL[_t], _nrm2)
    _TABLE[f"hipblas{_PREFIX[_t]}asum"] = _reduce(f"hipblas{_PREFIX[_t]}asum", _t, _REAL[_t],
                                                  lambda v: np.sum(_magnitudes(v)))
    # 1-based index of the first element of largest (smallest) magnitude
    _TABLE[f"hipblasI{_t.lower()}amax"] = _reduce(f"hipblasI{_t.lower()}amax", _t, "I",
                                                 lambda v: int(np.argmax(_magnitudes(v))) + 1)
    _TABLE[f"hipblasI{_t.lower()}amin"] = _reduce(f"hipblasI{_t.lower()}amin", _t, "I",
                                                 lambda v: int(np.argmin(_magnitudes(v))) + 1)
_TABLE["hipblasCsscal"] = _scal("hipblasCsscal", "C", "S")
_TABLE["hipblasZdscal"] = _scal("hipblasZdscal", "Z", "D")
body.table(_TABLE)

# levels 2 and 3 register from their own module
from hrr.backends.sim.mathlibs import hipblas_matrix  # noqa: E402,F401

__all__ = ["body", "BlasHandle", "vector", "scalar", "submit", "result", "check_sizes", "DTYPES", "INVALID"]
