"""hipBLAS level 1 on the sim (axpy, scal, copy, swap, dot, nrm2, asum, iamax/iamin in
S/D/C/Z), each a body registered on the family's ``body``."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from hrr.backends.sim.mathlibs.hipblas_common import (
    DTYPES,
    BlasHandle,
    check_written,
    body,
    check_sizes,
    result,
    scalar,
    submit,
    vector,
)

# -- level 1 ---------------------------------------------------------------------------------
def _axpy(t: str) -> Callable:
    dtype = DTYPES[t]

    def axpy(h: BlasHandle, n: int, alpha: int, x: int, incx: int, y: int, incy: int) -> None:
        check_sizes(n=n)
        if n == 0:
            return
        check_written(incy=incy)
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
        check_written(incy=incy)

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
        check_written(incx=incx, incy=incy)

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
