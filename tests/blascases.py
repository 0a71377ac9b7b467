"""hipBLAS test cases shared by the sim's tests (tests/backends/sim/test_hipblas.py) and the
GPU's (tests/backends/cuda/test_hipblas_gpu.py): each case runs one call on a backend's
``hip`` and ``hipblas`` and gives the numpy reference of everything the call writes.

Vectors follow BLAS: element i of a vector with increment INC < 0 is at (n - 1 - i)*|INC|;
matrices are column-major with a leading dimension. Buffers are filled with values that are
not the answer, so an element the call must not touch is checked too.
"""
from __future__ import annotations

from typing import Any, Callable

import attrs
import numpy as np

DTYPES = {"S": np.float32, "D": np.float64, "C": np.complex64, "Z": np.complex128}
#: Relative tolerance per precision when a backend's result is compared with numpy's
#: (a GPU fuses multiply-adds and sums in another order).
RTOL = {"S": 1e-5, "D": 1e-12, "C": 1e-5, "Z": 1e-12}


def ok(result: tuple) -> Any:
    assert int(result[0]) == 0, result
    return result[1] if len(result) == 2 else None


def elements(n: int, inc: int) -> np.ndarray:
    """The buffer indices of a vector's n elements, in element order."""
    idx = np.arange(max(n, 0)) * abs(inc)
    return idx[::-1] if inc < 0 else idx


def buffer(t: str, length: int, seed: int) -> np.ndarray:
    """``length`` values of precision ``t`` (complex ones with an imaginary part)."""
    rng = np.random.default_rng(seed)
    values = rng.uniform(-2, 2, max(length, 1))
    if t in "CZ":
        values = values + 1j * rng.uniform(-2, 2, max(length, 1))
    return values.astype(DTYPES[t])


class Session:
    """A handle on a backend, and device buffers of numpy arrays."""

    def __init__(self, hip: Any, hipblas: Any) -> None:
        self.hip, self.blas = hip, hipblas
        self.handle = ok(hipblas.hipblasCreate())
        self.buffers: list[Any] = []
        self.keep: list[Any] = []

    def upload(self, array: np.ndarray) -> Any:
        ptr = ok(self.hip.hipMalloc(max(array.nbytes, 1)))
        self.buffers.append(ptr)
        ok(self.hip.hipMemcpy(ptr, array, array.nbytes, self.hip.hipMemcpyKind.hipMemcpyHostToDevice))
        return ptr

    def download(self, ptr: Any, like: np.ndarray) -> np.ndarray:
        ok(self.hip.hipDeviceSynchronize())
        out = np.zeros_like(like)
        ok(self.hip.hipMemcpy(out, ptr, out.nbytes, self.hip.hipMemcpyKind.hipMemcpyDeviceToHost))
        return out

    def host_scalar(self, t: str, value: complex) -> int:
        cell = np.array([value], DTYPES[t])
        self.keep.append(cell)
        return cell.ctypes.data

    def close(self) -> None:
        ok(self.hip.hipDeviceSynchronize())
        for ptr in self.buffers:
            ok(self.hip.hipFree(ptr))
        ok(self.blas.hipblasDestroy(self.handle))


@attrs.frozen
class Case:
    """One call: ``run(session)`` returns [(result, expected), ...] of what it wrote."""

    name: str
    precision: str
    run: Callable[[Session], list[tuple[np.ndarray, np.ndarray]]]

    def __str__(self) -> str:
        return self.name

    @property
    def call(self) -> str:
        """The hipBLAS function the case calls."""
        return "hipblas" + self.name.split("-")[0]


def axpy(t: str, n: int, incx: int, incy: int, alpha: complex = 1.5 - 0.5j) -> Case:
    alpha = alpha if t in "CZ" else alpha.real

    def run(s: Session) -> list:
        x = buffer(t, 1 + (n - 1) * abs(incx) if n > 0 else 1, 1)
        y = buffer(t, 1 + (n - 1) * abs(incy) if n > 0 else 1, 2)
        dx, dy = s.upload(x), s.upload(y)
        ok(getattr(s.blas, f"hipblas{t}axpy")(s.handle, n, s.host_scalar(t, alpha), dx, incx, dy, incy))
        want = y.copy()
        iy, ix = elements(n, incy), elements(n, incx)
        want[iy] = DTYPES[t](alpha) * x[ix] + y[iy]
        return [(s.download(dy, y), want)]
    return Case(f"{t}axpy-n{n}-incx{incx}-incy{incy}", t, run)





def _vectors(t: str, n: int, *incs: int) -> list[np.ndarray]:
    return [buffer(t, 1 + (n - 1) * abs(inc) if n > 0 else 1, 10 + k) for k, inc in enumerate(incs)]


def scal(t: str, n: int, incx: int, alpha_t: str | None = None) -> Case:
    alpha_t = alpha_t or t
    name = f"hipblas{t}scal" if alpha_t == t else {"C": "hipblasCsscal", "Z": "hipblasZdscal"}[t]
    alpha = DTYPES[alpha_t](0.75 - 0.25j if alpha_t in "CZ" else -1.25)

    def run(s: Session) -> list:
        (x,) = _vectors(t, n, incx)
        dx = s.upload(x)
        ok(getattr(s.blas, name)(s.handle, n, s.host_scalar(alpha_t, alpha), dx, incx))
        want = x.copy()
        if incx > 0:   # BLAS: nothing is scaled for incx <= 0
            ix = elements(n, incx)
            want[ix] = (alpha * x[ix]).astype(x.dtype)
        return [(s.download(dx, x), want)]
    return Case(f"{name[7:]}-n{n}-incx{incx}", t, run)


def copy_or_swap(t: str, op: str, n: int, incx: int, incy: int) -> Case:
    def run(s: Session) -> list:
        x, y = _vectors(t, n, incx, incy)
        dx, dy = s.upload(x), s.upload(y)
        ok(getattr(s.blas, f"hipblas{t}{op}")(s.handle, n, dx, incx, dy, incy))
        want_x, want_y = x.copy(), y.copy()
        ix, iy = elements(n, incx), elements(n, incy)
        want_y[iy] = x[ix]
        if op == "swap":
            want_x[ix] = y[iy]
        return [(s.download(dx, x), want_x), (s.download(dy, y), want_y)]
    return Case(f"{t}{op}-n{n}-incx{incx}-incy{incy}", t, run)


def _host_result(s: Session, dtype: Any) -> np.ndarray:
    cell = np.full(1, 99, dtype)
    s.keep.append(cell)
    return cell


def dot(t: str, op: str, n: int, incx: int, incy: int, device: bool = False) -> Case:
    """dot (dotu: unconjugated, dotc: x conjugated); ``device``: the result in device memory."""
    def run(s: Session) -> list:
        x, y = _vectors(t, n, incx, incy)
        dx, dy = s.upload(x), s.upload(y)
        ix, iy = elements(n, incx), elements(n, incy)
        want = np.array([np.vdot(x[ix], y[iy]) if op == "dotc" else np.dot(x[ix], y[iy])]).astype(x.dtype)
        return [_scalar_call(s, f"hipblas{t}{op}", (n, dx, incx, dy, incy), x.dtype, device), want]
    return Case(f"{t}{op}-n{n}-incx{incx}-incy{incy}{'-device' if device else ''}", t, _pair(run))


def reduction(t: str, op: str, n: int, incx: int, device: bool = False) -> Case:
    """nrm2, asum, iamax, iamin: 0 when n <= 0 or incx <= 0."""
    prefix = {"S": "S", "D": "D", "C": "Sc", "Z": "Dz"}[t]
    name = f"hipblasI{t.lower()}{op}" if op.startswith("am") else f"hipblas{prefix}{op}"
    real = np.float32 if t in "SC" else np.float64
    out_dtype = np.int32 if op.startswith("am") else real

    def run(s: Session) -> list:
        (x,) = _vectors(t, n, max(incx, 1))
        dx = s.upload(x)
        v = x[elements(n, incx)] if n > 0 and incx > 0 else x[:0]
        mag = np.abs(v.real) + np.abs(v.imag) if t in "CZ" else np.abs(v)
        value = 0 if v.size == 0 else {"nrm2": lambda: np.sqrt(np.sum(np.abs(v.astype(np.complex128)) ** 2)),
                                       "asum": lambda: np.sum(mag.astype(np.float64)),
                                       "amax": lambda: np.argmax(mag) + 1,
                                       "amin": lambda: np.argmin(mag) + 1}[op]()
        want = np.array([value]).astype(out_dtype)
        return [_scalar_call(s, name, (n, dx, incx), out_dtype, device), want]
    return Case(f"{name[7:]}-n{n}-incx{incx}{'-device' if device else ''}", t, _pair(run))


def _scalar_call(s: Session, name: str, args: tuple, dtype: Any, device: bool) -> np.ndarray:
    """Call ``name`` with ``args`` and a result pointer (host memory, or device memory in
    device pointer mode); returns what it wrote."""
    mode = s.blas.hipblasPointerMode_t
    if not device:
        cell = _host_result(s, dtype)
        ok(getattr(s.blas, name)(s.handle, *args, cell.ctypes.data))
        return cell.copy()   # host mode: written when the call returns
    cell = np.full(1, 99, dtype)
    dcell = s.upload(cell)
    ok(s.blas.hipblasSetPointerMode(s.handle, mode.HIPBLAS_POINTER_MODE_DEVICE))
    try:
        ok(getattr(s.blas, name)(s.handle, *args, dcell))
    finally:
        ok(s.blas.hipblasSetPointerMode(s.handle, mode.HIPBLAS_POINTER_MODE_HOST))
    return s.download(dcell, cell)


def _pair(run: Callable[[Session], list]) -> Callable[[Session], list]:
    return lambda s: [tuple(run(s))]


OPS = {"N": 111, "T": 112, "C": 113}


def op(a: np.ndarray, trans: str) -> np.ndarray:
    return a if trans == "N" else (a.T if trans == "T" else a.conj().T)


def colmajor(buf: np.ndarray, rows: int, cols: int, ld: int) -> np.ndarray:
    """The rows x cols matrix a column-major buffer of leading dimension ld holds (a view)."""
    return buf[:ld * cols].reshape(cols, ld).T[:rows, :cols]


def _scalars(t: str, alpha: complex, beta: complex) -> tuple[Any, Any]:
    cast = DTYPES[t]
    return (cast(alpha), cast(beta)) if t in "CZ" else (cast(alpha.real), cast(beta.real))


def gemv(t: str, trans: str, m: int, n: int, incx: int = 1, incy: int = 1, pad: int = 2,
         alpha: complex = 1.5 + 0.5j, beta: complex = -0.5 + 1j) -> Case:
    def run(s: Session) -> list:
        lda = max(1, m) + pad
        a = buffer(t, lda * max(n, 1), 20)
        nx, ny = (n, m) if trans == "N" else (m, n)
        x, y = _vectors(t, max(nx, 1), incx)[0], buffer(t, 1 + (max(ny, 1) - 1) * abs(incy), 21)
        al, be = _scalars(t, alpha, beta)
        da, dx, dy = s.upload(a), s.upload(x), s.upload(y)
        ok(getattr(s.blas, f"hipblas{t}gemv")(s.handle, s.blas.hipblasOperation_t(OPS[trans]), m, n,
                                               s.host_scalar(t, al), da, lda, dx, incx, s.host_scalar(t, be),
                                               dy, incy))
        want = y.copy()
        if m and n:
            iy = elements(ny, incy)
            want[iy] = al * (op(colmajor(a, m, n, lda), trans) @ x[elements(nx, incx)]) + be * y[iy]
        return [(s.download(dy, y), want)]
    return Case(f"{t}gemv-{trans}-m{m}-n{n}-incx{incx}-incy{incy}", t, run)


def ger(t: str, name: str, m: int, n: int, incx: int = 1, incy: int = 1, alpha: complex = 0.5 - 1j) -> Case:
    def run(s: Session) -> list:
        lda = max(1, m) + 1
        a = buffer(t, lda * max(n, 1), 30)
        x, y = _vectors(t, m, incx)[0], _vectors(t, n, incy)[0]
        al, _ = _scalars(t, alpha, 0)
        da, dx, dy = s.upload(a), s.upload(x), s.upload(y)
        ok(getattr(s.blas, f"hipblas{t}{name}")(s.handle, m, n, s.host_scalar(t, al), dx, incx, dy, incy, da, lda))
        want = a.copy()
        if m and n:
            yv = y[elements(n, incy)]
            colmajor(want, m, n, lda)[...] += al * np.outer(x[elements(m, incx)], yv.conj() if name == "gerc" else yv)
        return [(s.download(da, a), want)]
    return Case(f"{t}{name}-m{m}-n{n}-incx{incx}-incy{incy}", t, run)


def _gemm_operands(t: str, ta: str, tb: str, m: int, n: int, k: int, seed: int) -> tuple:
    ar, ac = (m, k) if ta == "N" else (k, m)
    br, bc = (k, n) if tb == "N" else (n, k)
    lda, ldb, ldc = max(1, ar) + 1, max(1, br) + 2, max(1, m) + 1
    return (buffer(t, lda * max(ac, 1), seed), lda, ar, ac, buffer(t, ldb * max(bc, 1), seed + 1), ldb, br, bc,
            buffer(t, ldc * max(n, 1), seed + 2), ldc)


def _gemm_want(t, ta, tb, m, n, k, al, be, a, lda, ar, ac, b, ldb, br, bc, c, ldc) -> np.ndarray:
    want = c.copy()
    if m and n:
        product = op(colmajor(a, ar, ac, lda), ta) @ op(colmajor(b, br, bc, ldb), tb) if k else 0
        colmajor(want, m, n, ldc)[...] = al * product + (be * colmajor(c, m, n, ldc) if be else 0)
    return want


def gemm(t: str, ta: str, tb: str, m: int, n: int, k: int, alpha: complex = 1.25 - 0.5j,
         beta: complex = 0.5 + 0.25j, nan_c: bool = False) -> Case:
    """``nan_c``: C holds NaNs and beta is 0: C must not be read."""
    def run(s: Session) -> list:
        a, lda, ar, ac, b, ldb, br, bc, c, ldc = _gemm_operands(t, ta, tb, m, n, k, 40)
        if nan_c:
            c[:] = np.nan
        al, be = _scalars(t, alpha, 0 if nan_c else beta)
        da, db, dc = s.upload(a), s.upload(b), s.upload(c)
        op_t = s.blas.hipblasOperation_t
        ok(getattr(s.blas, f"hipblas{t}gemm")(s.handle, op_t(OPS[ta]), op_t(OPS[tb]), m, n, k, s.host_scalar(t, al), da,
                                               lda, db, ldb, s.host_scalar(t, be), dc, ldc))
        want = _gemm_want(t, ta, tb, m, n, k, al, be, a, lda, ar, ac, b, ldb, br, bc, c, ldc)
        return [(s.download(dc, c), want)]
    return Case(f"{t}gemm-{ta}{tb}-m{m}-n{n}-k{k}{'-beta0nan' if nan_c else ''}", t, run)


def gemm_batched(t: str, ta: str, tb: str, m: int, n: int, k: int, batch: int, strided: bool) -> Case:
    """gemmStridedBatched (operands ``stride`` elements apart in one buffer each), or
    gemmBatched (arrays of device pointers to separate buffers)."""
    def run(s: Session) -> list:
        al, be = _scalars(t, 0.75 + 0.5j, -1.0 + 0.5j)
        parts = [_gemm_operands(t, ta, tb, m, n, k, 50 + 3 * i) for i in range(max(batch, 1))]
        lda, ldb, ldc = parts[0][1], parts[0][5], parts[0][9]
        op_t = s.blas.hipblasOperation_t
        wants = [_gemm_want(t, ta, tb, m, n, k, al, be, *p) if batch else p[8].copy() for p in parts]
        if strided:
            stacked = [np.concatenate([p[j] for p in parts]) for j in (0, 4, 8)]
            strides = [len(parts[0][j]) for j in (0, 4, 8)]
            da, db, dc = (s.upload(x) for x in stacked)
            ok(getattr(s.blas, f"hipblas{t}gemmStridedBatched")(
                s.handle, op_t(OPS[ta]), op_t(OPS[tb]), m, n, k, s.host_scalar(t, al), da, lda, strides[0], db, ldb,
                strides[1], s.host_scalar(t, be), dc, ldc, strides[2], batch))
            return [(s.download(dc, stacked[2]), np.concatenate(wants))]
        ptrs = [[s.upload(p[j]) for p in parts] for j in (0, 4, 8)]
        arrays = [s.upload(np.array([int(x) for x in group], np.uint64)) for group in ptrs]
        ok(getattr(s.blas, f"hipblas{t}gemmBatched")(
            s.handle, op_t(OPS[ta]), op_t(OPS[tb]), m, n, k, s.host_scalar(t, al), arrays[0], lda, arrays[1], ldb,
            s.host_scalar(t, be), arrays[2], ldc, batch))
        return [(s.download(dc, p[8]), want) for dc, p, want in zip(ptrs[2], parts, wants, strict=True)]
    kind = "gemmStridedBatched" if strided else "gemmBatched"
    return Case(f"{t}{kind}-{ta}{tb}-m{m}-n{n}-k{k}-b{batch}", t, run)


def trsm(t: str, side: str, uplo: str, trans: str, diag: str, m: int, n: int, alpha: complex = 1.5 + 0.5j) -> Case:
    def run(s: Session) -> list:
        kdim = m if side == "L" else n
        lda, ldb = max(1, kdim) + 1, max(1, m) + 2
        a = buffer(t, lda * max(kdim, 1), 60)
        full = colmajor(a, kdim, kdim, lda)
        full[np.diag_indices(kdim)] += DTYPES[t](kdim + 3)   # well conditioned
        b = buffer(t, ldb * max(n, 1), 61)
        al, _ = _scalars(t, alpha, 0)
        da, db = s.upload(a), s.upload(b)
        B = s.blas
        ok(getattr(B, f"hipblas{t}trsm")(
            s.handle, B.hipblasSideMode_t(141 if side == "L" else 142),
            B.hipblasFillMode_t(121 if uplo == "U" else 122), B.hipblasOperation_t(OPS[trans]),
            B.hipblasDiagType_t(132 if diag == "U" else 131), m, n, s.host_scalar(t, al), da, lda, db, ldb))
        want = b.copy()
        if m and n:
            tri = np.triu(full) if uplo == "U" else np.tril(full)
            if diag == "U":
                np.fill_diagonal(tri, 1)
            opa = op(tri, trans).astype(np.complex128 if t in "CZ" else np.float64)
            rhs = al * colmajor(b, m, n, ldb)
            x = np.linalg.solve(opa, rhs) if side == "L" else np.linalg.solve(opa.T, rhs.T).T
            colmajor(want, m, n, ldb)[...] = x
        return [(s.download(db, b), want)]
    return Case(f"{t}trsm-{side}{uplo}{trans}{diag}-m{m}-n{n}", t, run)


def cases(available: Callable[[str], bool]) -> list[Case]:
    """Every case whose call ``available(name)`` says the backend has."""
    out = [axpy(t, n, incx, incy) for t in "SDCZ" for n, incx, incy in
           [(0, 1, 1), (1, 1, 1), (7, 2, 3), (6, -2, -3), (5, 3, -1)]]
    out += [scal(t, n, incx) for t in "SDCZ" for n, incx in [(0, 1), (1, 1), (7, 2), (5, -1)]]
    out += [scal(t, 6, 2, {"C": "S", "Z": "D"}[t]) for t in "CZ"]
    out += [copy_or_swap(t, op, n, incx, incy) for t in "SDCZ" for op in ("copy", "swap")
            for n, incx, incy in [(0, 1, 1), (1, 1, 1), (7, -2, 3)]]
    out += [dot(t, op, n, incx, incy, device) for t in "SDCZ" for op in (("dot",) if t in "SD" else ("dotu", "dotc"))
            for n, incx, incy, device in [(0, 1, 1, False), (1, 1, 1, False), (9, 2, -1, False), (9, 1, 2, True)]]
    out += [reduction(t, op, n, incx, device) for t in "SDCZ" for op in ("nrm2", "asum", "amax", "amin")
            for n, incx, device in [(0, 1, False), (1, 1, False), (9, 2, False), (4, -1, False), (9, 3, True)]]
    out += [gemv(t, tr, m, n, incx, incy) for t in "SDCZ" for tr in "NTC"
            for m, n, incx, incy in [(0, 3, 1, 1), (1, 1, 1, 1), (5, 3, 2, -1)]]
    out += [ger(t, name, m, n, incx, incy) for t in "SDCZ" for name in (("ger",) if t in "SD" else ("geru", "gerc"))
            for m, n, incx, incy in [(0, 2, 1, 1), (1, 1, 1, 1), (4, 3, -2, 2)]]
    out += [gemm(t, ta, tb, m, n, k) for t in "SDCZ" for ta, tb in ("NN", "TN", "NC", "CT")
            for m, n, k in [(0, 2, 2), (1, 1, 1), (5, 4, 3), (3, 2, 0)]]
    out += [gemm(t, "N", "T", 4, 3, 2, nan_c=True) for t in "SDCZ"]
    out += [gemm_batched(t, ta, tb, 3, 2, 4, batch, strided) for t in "SDCZ" for ta, tb in ("NN", "TC")
            for batch in (0, 1, 3) for strided in (True, False)]
    out += [trsm(t, side, uplo, tr, diag, m, n) for t in "SDCZ" for side in "LR" for uplo in "UL" for tr in "NT"
            for diag in "NU" for m, n in [(4, 3)]]
    out += [trsm(t, "L", "U", "C", "N", m, n) for t in "CZ" for m, n in [(0, 2), (1, 1), (3, 5)]]
    return [c for c in out if available(c.call)]


def check(case: Case, session: Session, rtol: float | None = None) -> None:
    """Run ``case`` and compare each output with numpy's (``rtol``: the precision's own)."""
    for got, want in case.run(session):
        tol = RTOL[case.precision] if rtol is None else rtol
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=case.name)


__all__ = ["Case", "Session", "cases", "check", "ok", "elements", "buffer", "DTYPES", "RTOL"]
