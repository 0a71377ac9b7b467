"""hipBLAS on the cuda backend: each call is cuBLAS's (the ``_v2`` API, through ctypes),
as hipBLAS itself runs on NVIDIA GPUs: hipBLAS's enums become cuBLAS's, cuBLAS's status
becomes hipBLAS's. cuBLAS does not check a handle, so the live ones are kept here and any
other is "not initialised" before cuBLAS sees it.
"""
from __future__ import annotations

import ctypes
from typing import Any, Callable

from hrr.api.catalogue import Api, Param, rows
from hrr.api.roles import param_role
from hrr.api.roles.scalars import Enum, Value
from hrr.backends.bodies import Bodies
from hrr.backends.cuda.mathlibs import load
from hrr.backends.cuda.mathlibs.live import LiveHandles
from hrr.backends.mathlib import LibraryError
from hrr.hiptypes.mathlibs.hipblas import hipblasStatus_t

body = Bodies("hipblas")

_S = hipblasStatus_t
# cuBLAS's status -> hipBLAS's (cublas_api.h's values)
_STATUS = {0: _S.HIPBLAS_STATUS_SUCCESS, 1: _S.HIPBLAS_STATUS_NOT_INITIALIZED, 3: _S.HIPBLAS_STATUS_ALLOC_FAILED,
           7: _S.HIPBLAS_STATUS_INVALID_VALUE, 8: _S.HIPBLAS_STATUS_ARCH_MISMATCH, 11: _S.HIPBLAS_STATUS_MAPPING_ERROR,
           13: _S.HIPBLAS_STATUS_EXECUTION_FAILED, 14: _S.HIPBLAS_STATUS_INTERNAL_ERROR,
           15: _S.HIPBLAS_STATUS_NOT_SUPPORTED}
# hipblasOperation_t (111..113), hipblasFillMode_t (121, 122), hipblasDiagType_t (131, 132),
# hipblasSideMode_t (141, 142) -> cuBLAS's (0-based)
OPERATION = {111: 0, 112: 1, 113: 2}
FILL = {121: 1, 122: 0}
DIAG = {131: 0, 132: 1}
SIDE = {141: 0, 142: 1}

_live = LiveHandles(_S.HIPBLAS_STATUS_NOT_INITIALIZED, "hipblasHandle_t")
_VP, _I, _I64 = ctypes.c_void_p, ctypes.c_int, ctypes.c_longlong


def cublas() -> ctypes.CDLL:
    """libcublas, loaded at the first hipBLAS call."""
    return load("cublas", "nvidia-cublas")


def call(name: str, *args: Any) -> None:
    """cuBLAS's ``name`` with ``args`` (ctypes values); LibraryError with hipBLAS's status
    when it fails."""
    status = int(getattr(cublas(), name)(*args))
    if status:
        raise LibraryError(_STATUS.get(status, _S.HIPBLAS_STATUS_UNKNOWN), f"{name}: cuBLAS status {status}")


def handle_lookup(kind: str) -> Callable[[Any], Any]:
    """A ``blas_handle`` argument as the cuBLAS handle (a c_void_p), when it is a live one."""
    return lambda obj: _live.lookup(obj)


def enum(table: dict[int, int], value: Any, what: str) -> ctypes.c_int:
    """A hipBLAS enum argument as cuBLAS's value."""
    try:
        return _I(table[int(value)])
    except (KeyError, TypeError, ValueError):
        raise LibraryError(_S.HIPBLAS_STATUS_INVALID_ENUM, f"{what}: {value!r}") from None


# -- handles ------------------------------------------------------------------------------
@body
def hipblasCreate() -> tuple:
    h = ctypes.c_void_p()
    call("cublasCreate_v2", ctypes.byref(h))
    return (_S.HIPBLAS_STATUS_SUCCESS, _live.add(h))


@body
def hipblasDestroy(h: ctypes.c_void_p) -> None:
    _live.discard(h)
    call("cublasDestroy_v2", h)


@body
def hipblasSetStream(h: ctypes.c_void_p, stream: int) -> None:
    call("cublasSetStream_v2", h, _VP(stream))


@body
def hipblasGetStream(h: ctypes.c_void_p, streamId: int) -> None:
    _nonnull(streamId, "streamId")
    call("cublasGetStream_v2", h, _VP(streamId))


@body
def hipblasSetPointerMode(h: ctypes.c_void_p, mode: Any) -> None:
    call("cublasSetPointerMode_v2", h, enum({0: 0, 1: 1}, mode, "mode"))


@body
def hipblasGetPointerMode(h: ctypes.c_void_p, mode: int) -> None:
    _nonnull(mode, "mode")
    call("cublasGetPointerMode_v2", h, _VP(mode))


def _nonnull(addr: int, what: str) -> None:
    if not addr:
        raise LibraryError(_S.HIPBLAS_STATUS_INVALID_VALUE, f"{what} is NULL")


# -- the computing calls: one cuBLAS call each, its arguments converted by role ---------------
_ENUM_TABLES = {"hipblasOperation_t": OPERATION, "hipblasFillMode_t": FILL, "hipblasDiagType_t": DIAG,
                "hipblasSideMode_t": SIDE}


def _converter(p: Param) -> Callable[[Any], Any]:
    """A converted argument (the surface's) as the ctypes value cuBLAS takes."""
    role = param_role(p.role)
    if isinstance(role, Enum):
        table = _ENUM_TABLES[p.kind or ""]
        return lambda v: enum(table, v, p.name)
    if isinstance(role, Value):   # strides are int64 (hipblasStride), everything else int
        return _I64 if p.name.startswith("stride") else _I
    return _VP   # device arrays and scalars: addresses


def cublas_body(row: Api) -> Callable:
    """The body of ``row``: cuBLAS's function of the same name (``cublasSaxpy_v2``: the
    batched calls have no ``_v2``), the handle first, the other arguments by role."""
    suffix = row.name[len("hipblas"):]
    fn = f"cublas{suffix}" if "Batched" in suffix else f"cublas{suffix}_v2"
    converters = [_converter(p) for p in row.params[1:]]

    def run(h: ctypes.c_void_p, *args: Any) -> None:
        call(fn, h, *(convert(a) for convert, a in zip(converters, args, strict=True)))
    run.__name__ = row.name
    return run


body.table({row.name: cublas_body(row) for row in rows()
            if row.family == "hipblas" and row.name not in body.bodies})

__all__ = ["body", "handle_lookup", "cublas", "call", "enum", "cublas_body", "OPERATION", "FILL", "DIAG", "SIDE"]
