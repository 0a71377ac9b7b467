"""The cuda backend's hipBLAS without a GPU: each call becomes the cuBLAS call hipBLAS makes
on NVIDIA (name, argument order, C types, hipBLAS's enums as cuBLAS's), cuBLAS's status
becomes hipBLAS's, a handle cuBLAS never made never reaches it, and a missing cuBLAS is a
BackendError naming the wheel."""
from __future__ import annotations

import ctypes

import pytest

from hrr.backends.cuda import _runtime
from hrr.backends.cuda import mathlibs
from hrr.backends.cuda.mathlibs import hipblas as cuda_hipblas
from hrr.errors import BackendError

H = 0xB1A5


class FakeCublas:
    """Records ``(function, args)`` and returns ``status`` (cublasCreate_v2 makes handle H)."""

    def __init__(self, log: list, status: int = 0) -> None:
        self.log, self.status = log, status

    def __getattr__(self, fn: str):
        def call(*args):
            if fn == "cublasCreate_v2":
                args[0]._obj.value = H
            self.log.append((fn, args))
            return self.status
        return call


@pytest.fixture
def blas(monkeypatch):
    log: list = []
    fake = FakeCublas(log)
    monkeypatch.setattr(_runtime.STATE, "ready", True)
    monkeypatch.setattr(cuda_hipblas, "load", lambda libname, wheel: fake)
    module = mathlibs.library("hipblas")
    err, handle = module.hipblasCreate()
    assert err == 0 and int(handle) == H
    log.clear()
    yield module, handle, log, fake
    cuda_hipblas._live.discard(ctypes.c_void_p(H))


def _values(args: tuple) -> list:
    return [(type(a).__name__, a.value) for a in args[1:]]


def test_a_call_is_cublas_with_cublas_enums_and_c_types(blas):
    module, h, log, _ = blas
    op = module.hipblasOperation_t
    assert module.hipblasSgemm(h, op.HIPBLAS_OP_T, op.HIPBLAS_OP_C, 2, 3, 4, 0x10, 0x20, 5, 0x30, 6, 0x40, 0x50, 7) \
        == (module.hipblasStatus_t.HIPBLAS_STATUS_SUCCESS,)
    (fn, args), = log
    assert fn == "cublasSgemm_v2" and args[0].value == H
    assert _values(args) == [("c_int", 1), ("c_int", 2), ("c_int", 2), ("c_int", 3), ("c_int", 4),
                             ("c_void_p", 0x10), ("c_void_p", 0x20), ("c_int", 5), ("c_void_p", 0x30),
                             ("c_int", 6), ("c_void_p", 0x40), ("c_void_p", 0x50), ("c_int", 7)]


def test_strided_batches_take_64_bit_strides_and_batched_calls_have_no_v2(blas):
    module, h, log, _ = blas
    op = module.hipblasOperation_t.HIPBLAS_OP_N
    module.hipblasZgemmStridedBatched(h, op, op, 1, 1, 1, 8, 9, 1, 1 << 40, 10, 1, 2, 11, 12, 1, 3, 4)
    module.hipblasDgemmBatched(h, op, op, 1, 1, 1, 8, 9, 1, 10, 1, 11, 12, 1, 4)
    (fn1, args1), (fn2, _) = log
    assert (fn1, fn2) == ("cublasZgemmStridedBatched", "cublasDgemmBatched")
    stride = args1[9]
    assert ctypes.sizeof(stride) == 8 and stride.value == 1 << 40   # strideA: int64


def test_trsm_maps_side_fill_and_diagonal(blas):
    module, h, log, _ = blas
    m = module
    m.hipblasCtrsm(h, m.hipblasSideMode_t.HIPBLAS_SIDE_RIGHT, m.hipblasFillMode_t.HIPBLAS_FILL_MODE_LOWER,
                   m.hipblasOperation_t.HIPBLAS_OP_N, m.hipblasDiagType_t.HIPBLAS_DIAG_UNIT, 3, 4, 8, 9, 3, 10, 3)
    (fn, args), = log
    assert fn == "cublasCtrsm_v2" and [v for _, v in _values(args)[:4]] == [1, 0, 0, 1]


def test_level_1_names_follow_hip_pythons(blas):
    module, h, log, _ = blas
    module.hipblasScnrm2(h, 4, 0x10, 1, 0x20)
    module.hipblasIzamin(h, 4, 0x10, -1, 0x20)
    module.hipblasZdscal(h, 4, 0x10, 0x20, 2)
    module.hipblasCdotc(h, 4, 0x10, 1, 0x20, 1, 0x30)
    assert [fn for fn, _ in log] == ["cublasScnrm2_v2", "cublasIzamin_v2", "cublasZdscal_v2", "cublasCdotc_v2"]


def test_cublas_status_becomes_hipblas_status(blas):
    module, h, log, fake = blas
    fake.status = 7   # CUBLAS_STATUS_INVALID_VALUE
    assert module.hipblasSaxpy(h, -1, 0x10, 0x20, 1, 0x30, 1) == (module.hipblasStatus_t.HIPBLAS_STATUS_INVALID_VALUE,)
    fake.status = 13  # CUBLAS_STATUS_EXECUTION_FAILED
    assert module.hipblasSaxpy(h, 1, 0x10, 0x20, 1, 0x30, 1) == \
        (module.hipblasStatus_t.HIPBLAS_STATUS_EXECUTION_FAILED,)


def test_a_handle_cublas_never_made_never_reaches_it(blas):
    module, h, log, _ = blas
    assert module.hipblasSaxpy(0xDEAD, 1, 0x10, 0x20, 1, 0x30, 1) == \
        (module.hipblasStatus_t.HIPBLAS_STATUS_NOT_INITIALIZED,)
    assert module.hipblasDestroy(h) == (module.hipblasStatus_t.HIPBLAS_STATUS_SUCCESS,)
    assert module.hipblasDestroy(h) == (module.hipblasStatus_t.HIPBLAS_STATUS_NOT_INITIALIZED,)
    assert [fn for fn, _ in log] == ["cublasDestroy_v2"]


def test_a_missing_cublas_is_a_backend_error_naming_the_wheel(monkeypatch):
    import cuda.pathfinder

    def missing(libname):
        raise cuda.pathfinder.DynamicLibNotFoundError(f"no lib{libname}.so")
    monkeypatch.setattr(cuda.pathfinder, "load_nvidia_dynamic_lib", missing)
    monkeypatch.setattr(_runtime.STATE, "ready", True)
    monkeypatch.setattr(mathlibs, "_loaded", {})
    with pytest.raises(BackendError) as info:
        mathlibs.library("hipblas").hipblasCreate()
    assert "cublas" in str(info.value) and "pip install nvidia-cublas" in info.value.hint


def test_without_a_driver_a_call_is_not_initialised(monkeypatch):
    monkeypatch.setattr(_runtime.STATE, "ready", False)

    def no_driver():
        raise _runtime.DriverUnavailable("no driver")
    monkeypatch.setattr(_runtime, "require_driver", no_driver)
    # a module built earlier holds the real check: build it again (on a GPU machine it passes)
    monkeypatch.setattr(mathlibs, "_built", {})
    module = mathlibs.library("hipblas")
    assert module.hipblasCreate() == (module.hipblasStatus_t.HIPBLAS_STATUS_NOT_INITIALIZED, None)
