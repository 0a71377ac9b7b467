"""hipBLAS's catalogue rows, in hip-python 7.x's ``hipblas`` names and argument order.

Roles: the handle is a ``blas_handle``; vectors and matrices are ``lib_array`` (device
memory, ``kind`` says the shape it spans: ``hrr.api.roles.mathlibs``); ``alpha``/``beta``
are ``lib_scalar`` (read through the pointer mode: host bytes recorded, or a device address);
a scalar result is ``lib_result`` (host bytes checked at replay, or a device address);
gemmBatched's arrays of device pointers are ``lib_pointers``.
A call whose result may be host memory is ``sync``: in host pointer mode it returns once
the result is written, as hipBLAS does.
"""
from __future__ import annotations

from hrr.api.rowtypes import Api, H, O, P, Param

FAMILY = "hipblas"
HANDLE_KINDS = ("blas_handle",)
_HANDLE = H("handle", "blas_handle")
#: Each precision's letter and element size in bytes (C and Z are complex).
ELEMENT_BYTES = {"S": 4, "D": 8, "C": 8, "Z": 16}


def _row(name: str, *params: Param, **fields: object) -> Api:
    return Api(name, FAMILY, tuple(params), module=FAMILY, **fields)  # type: ignore[arg-type]


def _vector(name: str, n: str, inc: str, elem: int) -> Param:
    return P(name, "lib_array", f"vector {n} {inc}", elem=elem)


def _scalar(name: str, elem: int) -> Param:
    return P(name, "lib_scalar", span=elem)


def _result(name: str, elem: int) -> Param:
    return P(name, "lib_result", span=elem)


def _xy(elem: int) -> tuple[Param, ...]:
    """``n, x, incx, y, incy`` of two vectors."""
    return (P("n"), _vector("x", "n", "incx", elem), P("incx"), _vector("y", "n", "incy", elem), P("incy"))


def _x(elem: int) -> tuple[Param, ...]:
    """``n, x, incx`` of one vector."""
    return (P("n"), _vector("x", "n", "incx", elem), P("incx"))


def _axpy(t: str) -> Api:
    e = ELEMENT_BYTES[t]
    return _row(f"hipblas{t}axpy", _HANDLE, P("n"), _scalar("alpha", e), _vector("x", "n", "incx", e), P("incx"),
                _vector("y", "n", "incy", e), P("incy"))


def _scal(name: str, t: str, alpha_t: str) -> Api:
    """x = alpha * x (Csscal and Zdscal: a real alpha on a complex vector)."""
    return _row(name, _HANDLE, P("n"), _scalar("alpha", ELEMENT_BYTES[alpha_t]),
                _vector("x", "n", "incx", ELEMENT_BYTES[t]), P("incx"))


def _level1() -> tuple[Api, ...]:
    """axpy, scal, copy, swap, dot, nrm2, asum, iamax and iamin in S, D, C and Z, named as
    hip-python names them (Cdotu/Cdotc, Scnrm2, Scasum, Csscal...). A call that writes a
    scalar result is ``sync``: in host pointer mode it returns once the result is written."""
    out: list[Api] = []
    real = {"S": "S", "D": "D", "C": "S", "Z": "D"}
    for t, e in ELEMENT_BYTES.items():
        out.append(_axpy(t))
        out.append(_scal(f"hipblas{t}scal", t, t))
        out += [_row(f"hipblas{t}{op}", _HANDLE, *_xy(e)) for op in ("copy", "swap")]
        dots = ("dot",) if t in "SD" else ("dotu", "dotc")
        out += [_row(f"hipblas{t}{op}", _HANDLE, *_xy(e), _result("result", e), sync=True) for op in dots]
        prefix = t if t in "SD" else {"C": "Sc", "Z": "Dz"}[t]
        out += [_row(f"hipblas{prefix}{op}", _HANDLE, *_x(e), _result("result", ELEMENT_BYTES[real[t]]), sync=True)
                for op in ("nrm2", "asum")]
        out += [_row(f"hipblasI{t.lower()}{op}", _HANDLE, *_x(e), _result("result", 4), sync=True)
                for op in ("amax", "amin")]
    out += [_scal("hipblasCsscal", "C", "S"), _scal("hipblasZdscal", "Z", "D")]
    return tuple(out)



def _level23() -> tuple[Api, ...]:
    """gemv, ger (geru/gerc for complex), gemm, gemmBatched (arrays of device pointers),
    gemmStridedBatched and trsm in S, D, C and Z."""
    out: list[Api] = []
    op = P("trans", "enum", "hipblasOperation_t")
    for t, e in ELEMENT_BYTES.items():
        out.append(_row(f"hipblas{t}gemv", _HANDLE, op, P("m"), P("n"), _scalar("alpha", e),
                        P("AP", "lib_array", "matrix m n lda", elem=e), P("lda"),
                        P("x", "lib_array", "opvector trans n m incx", elem=e), P("incx"), _scalar("beta", e),
                        P("y", "lib_array", "opvector trans m n incy", elem=e), P("incy")))
        for name in ((f"hipblas{t}ger",) if t in "SD" else (f"hipblas{t}geru", f"hipblas{t}gerc")):
            out.append(_row(name, _HANDLE, P("m"), P("n"), _scalar("alpha", e), _vector("x", "m", "incx", e),
                            P("incx"), _vector("y", "n", "incy", e), P("incy"),
                            P("AP", "lib_array", "matrix m n lda", elem=e), P("lda")))
        ops = (P("transA", "enum", "hipblasOperation_t"), P("transB", "enum", "hipblasOperation_t"), P("m"), P("n"),
               P("k"), _scalar("alpha", e))
        out.append(_row(f"hipblas{t}gemm", _HANDLE, *ops, P("AP", "lib_array", "opmatrix transA m k lda", elem=e),
                        P("lda"), P("BP", "lib_array", "opmatrix transB k n ldb", elem=e), P("ldb"),
                        _scalar("beta", e), P("CP", "lib_array", "matrix m n ldc", elem=e), P("ldc")))
        out.append(_row(f"hipblas{t}gemmBatched", _HANDLE, *ops,
                        P("AP", "lib_pointers", "pointers batchCount opmatrix transA m k lda", elem=e), P("lda"),
                        P("BP", "lib_pointers", "pointers batchCount opmatrix transB k n ldb", elem=e), P("ldb"),
                        _scalar("beta", e),
                        P("CP", "lib_pointers", "pointers batchCount matrix m n ldc", elem=e), P("ldc"),
                        P("batchCount")))
        out.append(_row(f"hipblas{t}gemmStridedBatched", _HANDLE, *ops,
                        P("AP", "lib_array", "batch strideA batchCount opmatrix transA m k lda", elem=e), P("lda"),
                        P("strideA"),
                        P("BP", "lib_array", "batch strideB batchCount opmatrix transB k n ldb", elem=e), P("ldb"),
                        P("strideB"), _scalar("beta", e),
                        P("CP", "lib_array", "batch strideC batchCount matrix m n ldc", elem=e), P("ldc"),
                        P("strideC"), P("batchCount")))
        out.append(_row(f"hipblas{t}trsm", _HANDLE, P("side", "enum", "hipblasSideMode_t"),
                        P("uplo", "enum", "hipblasFillMode_t"), P("transA", "enum", "hipblasOperation_t"),
                        P("diag", "enum", "hipblasDiagType_t"), P("m"), P("n"), _scalar("alpha", e),
                        P("AP", "lib_array", "sidematrix side m n lda", elem=e), P("lda"),
                        P("BP", "lib_array", "matrix m n ldb", elem=e), P("ldb")))
    return tuple(out)


ROWS: tuple[Api, ...] = (
    Api("hipblasCreate", FAMILY, (), (O("handle", "handle", "blas_handle"),), module=FAMILY),
    _row("hipblasDestroy", _HANDLE, destroys="blas_handle"),
    _row("hipblasSetStream", _HANDLE, H("streamId", "stream")),
    _row("hipblasGetStream", _HANDLE, P("streamId", "result_buf", span=8)),
    _row("hipblasSetPointerMode", _HANDLE, P("mode", "enum", "hipblasPointerMode_t")),
    _row("hipblasGetPointerMode", _HANDLE, P("mode", "result_buf", span=4)),
    *_level1(),
    *_level23(),
)

__all__ = ["ROWS", "HANDLE_KINDS", "FAMILY", "ELEMENT_BYTES"]
