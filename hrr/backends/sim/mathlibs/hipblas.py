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


def _check_sizes(**sizes: int) -> None:
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
        _check_sizes(n=n)
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
        _check_sizes(n=n)
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
        _check_sizes(n=n)
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
        _check_sizes(n=n)
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
        _check_sizes(n=n)

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
        _check_sizes(n=n)

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

# -- levels 2 and 3 --------------------------------------------------------------------------
# hipblasOperation_t, hipblasFillMode_t, hipblasDiagType_t, hipblasSideMode_t values
OP_N, OP_T, OP_C = 111, 112, 113
UPPER, LOWER = 121, 122
UNIT = 132
LEFT, RIGHT = 141, 142


def matrix(addr: int, rows: int, cols: int, ld: int, dtype: np.dtype) -> np.ndarray:
    """A column-major ``rows`` x ``cols`` matrix with leading dimension ``ld`` (a view)."""
    if rows <= 0 or cols <= 0:
        return np.zeros((max(rows, 0), max(cols, 0)), dtype)
    raw = _dev().memory.resolve_for_kernel(addr, (ld * (cols - 1) + rows) * dtype.itemsize).view(dtype)
    return np.lib.stride_tricks.as_strided(raw, (rows, cols), (dtype.itemsize, ld * dtype.itemsize))


def op(a: np.ndarray, trans: int) -> np.ndarray:
    """op(A): A, its transpose, or its conjugate transpose."""
    return a if trans == OP_N else (a.T if trans == OP_T else a.conj().T)


def _check_op(*ops: Any) -> None:
    if any(int(o) not in (OP_N, OP_T, OP_C) for o in ops):
        raise LibraryError(hipblasStatus_t.HIPBLAS_STATUS_INVALID_ENUM, f"operation {ops}")


def _gemv(t: str) -> Callable:
    dtype = DTYPES[t]

    def gemv(h: BlasHandle, trans: Any, m: int, n: int, alpha: int, AP: int, lda: int, x: int, incx: int,
             beta: int, y: int, incy: int) -> None:
        trans = int(trans)
        _check_op(trans)
        _check_sizes(m=m, n=n)
        if lda < max(1, m) or incx == 0 or incy == 0:
            raise LibraryError(INVALID, f"lda={lda}, incx={incx}, incy={incy}")
        if m == 0 or n == 0:
            return
        a, b = scalar(h, alpha, dtype, "alpha"), scalar(h, beta, dtype, "beta")
        nx, ny = (n, m) if trans == OP_N else (m, n)

        def run() -> None:
            yv = vector(y, ny, incy, dtype)
            av, bv = a(), b()
            product = op(matrix(AP, m, n, lda, dtype), trans) @ vector(x, nx, incx, dtype) if av else 0
            yv[...] = av * product + (bv * yv if bv else 0)
        submit(h, f"hipblas{t}gemv(m={m}, n={n})", run)
    return gemv


def _ger(name: str, t: str, conjugate: bool) -> Callable:
    dtype = DTYPES[t]

    def ger(h: BlasHandle, m: int, n: int, alpha: int, x: int, incx: int, y: int, incy: int, AP: int,
            lda: int) -> None:
        _check_sizes(m=m, n=n)
        if lda < max(1, m) or incx == 0 or incy == 0:
            raise LibraryError(INVALID, f"lda={lda}, incx={incx}, incy={incy}")
        if m == 0 or n == 0:
            return
        a = scalar(h, alpha, dtype, "alpha")

        def run() -> None:
            yv = vector(y, n, incy, dtype)
            A = matrix(AP, m, n, lda, dtype)
            A[...] = A + a() * np.outer(vector(x, m, incx, dtype), yv.conj() if conjugate else yv)
        submit(h, f"{name}(m={m}, n={n})", run)
    return ger


def _gemm_one(A: np.ndarray, B: np.ndarray, C: np.ndarray, ta: int, tb: int, av: Any, bv: Any) -> None:
    """C = alpha op(A) op(B) + beta C; with beta 0, C is not read (NaNs in it vanish)."""
    product = op(A, ta) @ op(B, tb) if av and A.size and B.size else 0
    C[...] = av * product + (bv * C if bv else 0)


def _gemm_checks(ta: int, tb: int, m: int, n: int, k: int, lda: int, ldb: int, ldc: int) -> None:
    _check_op(ta, tb)
    _check_sizes(m=m, n=n, k=k)
    rows_a, rows_b = (m if ta == OP_N else k), (k if tb == OP_N else n)
    if lda < max(1, rows_a) or ldb < max(1, rows_b) or ldc < max(1, m):
        raise LibraryError(INVALID, f"lda={lda}, ldb={ldb}, ldc={ldc}")


def _gemm(t: str) -> Callable:
    dtype = DTYPES[t]

    def gemm(h: BlasHandle, transA: Any, transB: Any, m: int, n: int, k: int, alpha: int, AP: int, lda: int,
             BP: int, ldb: int, beta: int, CP: int, ldc: int) -> None:
        ta, tb = int(transA), int(transB)
        _gemm_checks(ta, tb, m, n, k, lda, ldb, ldc)
        if m == 0 or n == 0:
            return
        a, b = scalar(h, alpha, dtype, "alpha"), scalar(h, beta, dtype, "beta")

        def run() -> None:
            A = matrix(AP, *((m, k) if ta == OP_N else (k, m)), lda, dtype)
            B = matrix(BP, *((k, n) if tb == OP_N else (n, k)), ldb, dtype)
            _gemm_one(A, B, matrix(CP, m, n, ldc, dtype), ta, tb, a(), b())
        submit(h, f"hipblas{t}gemm(m={m}, n={n}, k={k})", run)
    return gemm


def _gemm_strided(t: str) -> Callable:
    dtype = DTYPES[t]

    def gemm(h: BlasHandle, transA: Any, transB: Any, m: int, n: int, k: int, alpha: int, AP: int, lda: int,
             strideA: int, BP: int, ldb: int, strideB: int, beta: int, CP: int, ldc: int, strideC: int,
             batchCount: int) -> None:
        ta, tb = int(transA), int(transB)
        _gemm_checks(ta, tb, m, n, k, lda, ldb, ldc)
        _check_sizes(batchCount=batchCount)
        if m == 0 or n == 0 or batchCount == 0:
            return
        a, b = scalar(h, alpha, dtype, "alpha"), scalar(h, beta, dtype, "beta")
        size = dtype.itemsize

        def run() -> None:
            av, bv = a(), b()
            for i in range(batchCount):
                A = matrix(AP + i * strideA * size, *((m, k) if ta == OP_N else (k, m)), lda, dtype)
                B = matrix(BP + i * strideB * size, *((k, n) if tb == OP_N else (n, k)), ldb, dtype)
                _gemm_one(A, B, matrix(CP + i * strideC * size, m, n, ldc, dtype), ta, tb, av, bv)
        submit(h, f"hipblas{t}gemmStridedBatched(m={m}, n={n}, k={k}, batch={batchCount})", run)
    return gemm


def _gemm_batched(t: str) -> Callable:
    dtype = DTYPES[t]

    def gemm(h: BlasHandle, transA: Any, transB: Any, m: int, n: int, k: int, alpha: int, AP: int, lda: int,
             BP: int, ldb: int, beta: int, CP: int, ldc: int, batchCount: int) -> None:
        ta, tb = int(transA), int(transB)
        _gemm_checks(ta, tb, m, n, k, lda, ldb, ldc)
        _check_sizes(batchCount=batchCount)
        if m == 0 or n == 0 or batchCount == 0:
            return
        a, b = scalar(h, alpha, dtype, "alpha"), scalar(h, beta, dtype, "beta")
        memory = _dev().memory

        def run() -> None:
            av, bv = a(), b()
            pointers = [memory.resolve_for_kernel(p, batchCount * 8).view("<u8").copy() for p in (AP, BP, CP)]
            for pa, pb, pc in zip(*pointers, strict=True):
                A = matrix(int(pa), *((m, k) if ta == OP_N else (k, m)), lda, dtype)
                B = matrix(int(pb), *((k, n) if tb == OP_N else (n, k)), ldb, dtype)
                _gemm_one(A, B, matrix(int(pc), m, n, ldc, dtype), ta, tb, av, bv)
        submit(h, f"hipblas{t}gemmBatched(m={m}, n={n}, k={k}, batch={batchCount})", run)
    return gemm


def _substitute(T: np.ndarray, B: np.ndarray, lower: bool) -> np.ndarray:
    """X with T X = B for a triangular T (forward or back substitution, as BLAS computes it:
    a zero on the diagonal gives inf/nan, no error)."""
    k = T.shape[0]
    X = np.zeros_like(B)
    order = range(k) if lower else range(k - 1, -1, -1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for i in order:
            done = slice(0, i) if lower else slice(i + 1, k)
            X[i] = (B[i] - T[i, done] @ X[done]) / T[i, i]
    return X


def _trsm(t: str) -> Callable:
    dtype = DTYPES[t]

    def trsm(h: BlasHandle, side: Any, uplo: Any, transA: Any, diag: Any, m: int, n: int, alpha: int, AP: int,
             lda: int, BP: int, ldb: int) -> None:
        side, uplo, ta, diag = int(side), int(uplo), int(transA), int(diag)
        _check_op(ta)
        if side not in (LEFT, RIGHT) or uplo not in (UPPER, LOWER):
            raise LibraryError(hipblasStatus_t.HIPBLAS_STATUS_INVALID_ENUM, f"side={side}, uplo={uplo}")
        _check_sizes(m=m, n=n)
        k = m if side == LEFT else n
        if lda < max(1, k) or ldb < max(1, m):
            raise LibraryError(INVALID, f"lda={lda}, ldb={ldb}")
        if m == 0 or n == 0:
            return
        a = scalar(h, alpha, dtype, "alpha")

        def run() -> None:
            B = matrix(BP, m, n, ldb, dtype)
            av = a()
            if not av:   # A is not read
                B[...] = 0
                return
            full = matrix(AP, k, k, lda, dtype)
            T = np.triu(full) if uplo == UPPER else np.tril(full)
            if diag == UNIT:
                np.fill_diagonal(T, 1)
            M = op(T, ta)
            lower = (uplo == LOWER) == (ta == OP_N)
            if side == LEFT:     # op(A) X = alpha B
                B[...] = _substitute(M, av * B, lower)
            else:                # X op(A) = alpha B  <=>  op(A)^T X^T = alpha B^T
                B[...] = _substitute(M.T, (av * B).T, not lower).T
        submit(h, f"hipblas{t}trsm(m={m}, n={n})", run)
    return trsm


for _t in DTYPES:
    _L23 = {f"hipblas{_t}gemv": _gemv(_t), f"hipblas{_t}gemm": _gemm(_t),
            f"hipblas{_t}gemmStridedBatched": _gemm_strided(_t), f"hipblas{_t}gemmBatched": _gemm_batched(_t),
            f"hipblas{_t}trsm": _trsm(_t)}
    for _op, _conj in ((("ger", False),) if _t in "SD" else (("geru", False), ("gerc", True))):
        _L23[f"hipblas{_t}{_op}"] = _ger(f"hipblas{_t}{_op}", _t, _conj)
    body.table(_L23)


__all__ = ["body", "BlasHandle", "vector", "matrix", "scalar", "submit", "result", "DTYPES"]
