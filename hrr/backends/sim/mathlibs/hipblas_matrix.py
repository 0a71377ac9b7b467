"""hipBLAS levels 2 and 3 on the sim (gemv, ger, gemm and its batches, trsm), registered
on ``hipblas.body``: matrices are column-major numpy views over device memory, the leading
dimension the column stride; each call is one op on its handle's stream (``hipblas.submit``).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from hrr.backends.mathlib import LibraryError
from hrr.backends.sim.device import current as _dev
from hrr.backends.sim.mathlibs.hipblas_common import (
    DTYPES,
    INVALID,
    BlasHandle,
    body,
    check_sizes,
    scalar,
    submit,
    vector,
)
from hrr.hiptypes.mathlibs.hipblas import hipblasStatus_t

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
        check_sizes(m=m, n=n)
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
        check_sizes(m=m, n=n)
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
    check_sizes(m=m, n=n, k=k)
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
        check_sizes(batchCount=batchCount)
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
        check_sizes(batchCount=batchCount)
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
        check_sizes(m=m, n=n)
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


__all__ = ["matrix", "op"]
