"""hipFFT's types as hip-python's ``hipfft`` module has them: its result enum, the
transform types and library properties (hip-python's own classes when installed, else
IntEnums of the same values), and the two direction constants. A plan is a
``hipfftHandle_t`` (a ``Pointer``) to the app, as in hip-python."""
from __future__ import annotations

from hrr.hiptypes.mathlibs import LibraryTypes, library_enum, real_library

REAL = real_library("hipfft")

hipfftResult_t = library_enum(REAL, "hipfftResult_t", {
    "HIPFFT_SUCCESS": 0, "HIPFFT_INVALID_PLAN": 1, "HIPFFT_ALLOC_FAILED": 2, "HIPFFT_INVALID_TYPE": 3,
    "HIPFFT_INVALID_VALUE": 4, "HIPFFT_INTERNAL_ERROR": 5, "HIPFFT_EXEC_FAILED": 6, "HIPFFT_SETUP_FAILED": 7,
    "HIPFFT_INVALID_SIZE": 8, "HIPFFT_UNALIGNED_DATA": 9, "HIPFFT_INCOMPLETE_PARAMETER_LIST": 10,
    "HIPFFT_INVALID_DEVICE": 11, "HIPFFT_PARSE_ERROR": 12, "HIPFFT_NO_WORKSPACE": 13,
    "HIPFFT_NOT_IMPLEMENTED": 14, "HIPFFT_NOT_SUPPORTED": 16})
hipfftType_t = library_enum(REAL, "hipfftType_t", {
    "HIPFFT_R2C": 42, "HIPFFT_C2R": 44, "HIPFFT_C2C": 41, "HIPFFT_D2Z": 106, "HIPFFT_Z2D": 108, "HIPFFT_Z2Z": 105})
hipfftLibraryPropertyType_t = library_enum(REAL, "hipfftLibraryPropertyType_t", {
    "HIPFFT_MAJOR_VERSION": 0, "HIPFFT_MINOR_VERSION": 1, "HIPFFT_PATCH_LEVEL": 2})
HIPFFT_FORWARD, HIPFFT_BACKWARD = -1, 1

_R = hipfftResult_t
TYPES = LibraryTypes(
    module="hipfft", status=_R, success=_R.HIPFFT_SUCCESS,
    # a plan that is no live one is an invalid plan; any other bad argument an invalid value
    statuses={"hipErrorInvalidHandle": _R.HIPFFT_INVALID_PLAN, "hipErrorInvalidValue": _R.HIPFFT_INVALID_VALUE},
    fallback=_R.HIPFFT_INTERNAL_ERROR,
    enums=(hipfftResult_t, hipfftType_t, hipfftLibraryPropertyType_t), real=REAL,
    constants={"HIPFFT_FORWARD": HIPFFT_FORWARD, "HIPFFT_BACKWARD": HIPFFT_BACKWARD},
    aliases={"hipfftResult": hipfftResult_t, "hipfftType": hipfftType_t,
             "hipfftLibraryPropertyType": hipfftLibraryPropertyType_t})

__all__ = ["TYPES", "REAL", "hipfftResult_t", "hipfftType_t", "hipfftLibraryPropertyType_t", "HIPFFT_FORWARD",
           "HIPFFT_BACKWARD"]
