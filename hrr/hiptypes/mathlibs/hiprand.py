"""hipRAND's types as hip-python's ``hiprand`` module has them: its status, generator
types and orderings (hip-python's own classes when installed, else IntEnums of the same
values). A generator is a ``hiprandGenerator_t`` (a ``Pointer``) to the app."""
from __future__ import annotations

from hrr.hiptypes.mathlibs import LibraryTypes, library_enum, real_library

REAL = real_library("hiprand")

hiprandStatus = library_enum(REAL, "hiprandStatus", {
    "HIPRAND_STATUS_SUCCESS": 0, "HIPRAND_STATUS_VERSION_MISMATCH": 100, "HIPRAND_STATUS_NOT_INITIALIZED": 101,
    "HIPRAND_STATUS_ALLOCATION_FAILED": 102, "HIPRAND_STATUS_TYPE_ERROR": 103, "HIPRAND_STATUS_OUT_OF_RANGE": 104,
    "HIPRAND_STATUS_LENGTH_NOT_MULTIPLE": 105, "HIPRAND_STATUS_DOUBLE_PRECISION_REQUIRED": 106,
    "HIPRAND_STATUS_LAUNCH_FAILURE": 201, "HIPRAND_STATUS_PREEXISTING_FAILURE": 202,
    "HIPRAND_STATUS_INITIALIZATION_FAILED": 203, "HIPRAND_STATUS_ARCH_MISMATCH": 204,
    "HIPRAND_STATUS_INTERNAL_ERROR": 999, "HIPRAND_STATUS_NOT_IMPLEMENTED": 1000})
hiprandRngType = library_enum(REAL, "hiprandRngType", {
    "HIPRAND_RNG_TEST": 0, "HIPRAND_RNG_PSEUDO_DEFAULT": 400, "HIPRAND_RNG_PSEUDO_XORWOW": 401,
    "HIPRAND_RNG_PSEUDO_MRG32K3A": 402, "HIPRAND_RNG_PSEUDO_MTGP32": 403, "HIPRAND_RNG_PSEUDO_MT19937": 404,
    "HIPRAND_RNG_PSEUDO_PHILOX4_32_10": 405, "HIPRAND_RNG_QUASI_DEFAULT": 500, "HIPRAND_RNG_QUASI_SOBOL32": 501,
    "HIPRAND_RNG_QUASI_SCRAMBLED_SOBOL32": 502, "HIPRAND_RNG_QUASI_SOBOL64": 503,
    "HIPRAND_RNG_QUASI_SCRAMBLED_SOBOL64": 504})
hiprandOrdering = library_enum(REAL, "hiprandOrdering", {
    "HIPRAND_ORDERING_PSEUDO_BEST": 100, "HIPRAND_ORDERING_PSEUDO_DEFAULT": 101,
    "HIPRAND_ORDERING_PSEUDO_SEEDED": 102, "HIPRAND_ORDERING_PSEUDO_LEGACY": 103,
    "HIPRAND_ORDERING_PSEUDO_DYNAMIC": 104, "HIPRAND_ORDERING_QUASI_DEFAULT": 201})

_S = hiprandStatus
TYPES = LibraryTypes(
    module="hiprand", status=_S, success=_S.HIPRAND_STATUS_SUCCESS,
    # a generator that is no live one is "not initialised", as hipRAND says
    statuses={"hipErrorInvalidHandle": _S.HIPRAND_STATUS_NOT_INITIALIZED,
              "hipErrorInvalidValue": _S.HIPRAND_STATUS_OUT_OF_RANGE},
    fallback=_S.HIPRAND_STATUS_INTERNAL_ERROR,
    enums=(hiprandStatus, hiprandRngType, hiprandOrdering), real=REAL,
    aliases={"hiprandStatus_t": hiprandStatus, "hiprandRngType_t": hiprandRngType,
             "hiprandOrdering_t": hiprandOrdering})

__all__ = ["TYPES", "REAL", "hiprandStatus", "hiprandRngType", "hiprandOrdering"]
