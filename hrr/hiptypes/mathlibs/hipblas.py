"""hipBLAS's types as hip-python's ``hipblas`` module has them: its status and the enums
its calls take (hip-python's own classes when installed, else IntEnums of the same values).
A hipBLAS handle is a ``Pointer`` to the app, as in hip-python."""
from __future__ import annotations

from hrr.hiptypes.mathlibs import LibraryTypes, library_enum, real_library

REAL = real_library("hipblas")

hipblasStatus_t = library_enum(REAL, "hipblasStatus_t", {
    "HIPBLAS_STATUS_SUCCESS": 0, "HIPBLAS_STATUS_NOT_INITIALIZED": 1, "HIPBLAS_STATUS_ALLOC_FAILED": 2,
    "HIPBLAS_STATUS_INVALID_VALUE": 3, "HIPBLAS_STATUS_MAPPING_ERROR": 4, "HIPBLAS_STATUS_EXECUTION_FAILED": 5,
    "HIPBLAS_STATUS_INTERNAL_ERROR": 6, "HIPBLAS_STATUS_NOT_SUPPORTED": 7, "HIPBLAS_STATUS_ARCH_MISMATCH": 8,
    "HIPBLAS_STATUS_HANDLE_IS_NULLPTR": 9, "HIPBLAS_STATUS_INVALID_ENUM": 10, "HIPBLAS_STATUS_UNKNOWN": 11})
hipblasOperation_t = library_enum(REAL, "hipblasOperation_t", {
    "HIPBLAS_OP_N": 111, "HIPBLAS_OP_T": 112, "HIPBLAS_OP_C": 113})
hipblasPointerMode_t = library_enum(REAL, "hipblasPointerMode_t", {
    "HIPBLAS_POINTER_MODE_HOST": 0, "HIPBLAS_POINTER_MODE_DEVICE": 1})
hipblasFillMode_t = library_enum(REAL, "hipblasFillMode_t", {
    "HIPBLAS_FILL_MODE_UPPER": 121, "HIPBLAS_FILL_MODE_LOWER": 122, "HIPBLAS_FILL_MODE_FULL": 123})
hipblasDiagType_t = library_enum(REAL, "hipblasDiagType_t", {
    "HIPBLAS_DIAG_NON_UNIT": 131, "HIPBLAS_DIAG_UNIT": 132})
hipblasSideMode_t = library_enum(REAL, "hipblasSideMode_t", {
    "HIPBLAS_SIDE_LEFT": 141, "HIPBLAS_SIDE_RIGHT": 142, "HIPBLAS_SIDE_BOTH": 143})

_S = hipblasStatus_t
TYPES = LibraryTypes(
    module="hipblas", status=_S, success=_S.HIPBLAS_STATUS_SUCCESS,
    # a handle that is no live one is "not initialised" (as cuBLAS and hipBLAS say); a
    # value outside an enum is an invalid enum; any other bad argument an invalid value
    statuses={"hipErrorInvalidHandle": _S.HIPBLAS_STATUS_NOT_INITIALIZED,
              "hipErrorNotInitialized": _S.HIPBLAS_STATUS_NOT_INITIALIZED,
              "hipErrorIllegalAddress": _S.HIPBLAS_STATUS_EXECUTION_FAILED,
              "hipErrorInvalidValue": _S.HIPBLAS_STATUS_INVALID_VALUE},
    fallback=_S.HIPBLAS_STATUS_INTERNAL_ERROR,
    enums=(hipblasStatus_t, hipblasOperation_t, hipblasPointerMode_t, hipblasFillMode_t, hipblasDiagType_t,
           hipblasSideMode_t), real=REAL)

__all__ = ["TYPES", "REAL", "hipblasStatus_t", "hipblasOperation_t", "hipblasPointerMode_t", "hipblasFillMode_t",
           "hipblasDiagType_t", "hipblasSideMode_t"]
