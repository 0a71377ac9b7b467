"""One table from CUDA's error numbers (driver ``CUresult`` and runtime ``cudaError_t``,
which share their numbering for everything this backend can return) to hip-python's
``hipError_t``, and NVRTC's results to ``hiprtcResult``.

HIP took most of its numbers from CUDA, so most rows map a value to the HIP member of the
same value; the rows that differ say so. A CUDA value not in the table maps to
``hipErrorUnknown``.
"""
from __future__ import annotations

from typing import Any

from hrr import hiptypes as ht

# CUDA value -> hipError_t member name. Comments give the CUDA name where it differs.
CUDA_TO_HIP_NAME: dict[int, str] = {
    0: "hipSuccess",
    1: "hipErrorInvalidValue",
    2: "hipErrorOutOfMemory",                 # CUDA_ERROR_OUT_OF_MEMORY / cudaErrorMemoryAllocation
    3: "hipErrorNotInitialized",
    4: "hipErrorDeinitialized",               # cudaErrorCudartUnloading
    5: "hipErrorProfilerDisabled",
    6: "hipErrorProfilerNotInitialized",
    7: "hipErrorProfilerAlreadyStarted",
    8: "hipErrorProfilerAlreadyStopped",
    9: "hipErrorInvalidConfiguration",
    12: "hipErrorInvalidPitchValue",
    13: "hipErrorInvalidSymbol",
    16: "hipErrorInvalidValue",               # cudaErrorInvalidHostPointer
    17: "hipErrorInvalidDevicePointer",
    21: "hipErrorInvalidMemcpyDirection",
    34: "hipErrorInsufficientDriver",         # CUDA_ERROR_STUB_LIBRARY
    35: "hipErrorInsufficientDriver",
    46: "hipErrorNoDevice",                   # cudaErrorDevicesUnavailable / CUDA_ERROR_DEVICE_UNAVAILABLE
    52: "hipErrorMissingConfiguration",
    53: "hipErrorPriorLaunchFailure",
    98: "hipErrorInvalidDeviceFunction",
    100: "hipErrorNoDevice",
    101: "hipErrorInvalidDevice",
    200: "hipErrorInvalidImage",
    201: "hipErrorInvalidContext",
    202: "hipErrorContextAlreadyCurrent",
    205: "hipErrorMapFailed",
    206: "hipErrorUnmapFailed",
    207: "hipErrorArrayIsMapped",
    208: "hipErrorAlreadyMapped",
    209: "hipErrorNoBinaryForGpu",
    210: "hipErrorAlreadyAcquired",
    211: "hipErrorNotMapped",
    212: "hipErrorNotMappedAsArray",
    213: "hipErrorNotMappedAsPointer",
    214: "hipErrorECCNotCorrectable",
    215: "hipErrorUnsupportedLimit",
    216: "hipErrorContextAlreadyInUse",
    217: "hipErrorPeerAccessUnsupported",
    218: "hipErrorInvalidKernelFile",          # CUDA_ERROR_INVALID_PTX
    219: "hipErrorInvalidGraphicsContext",
    221: "hipErrorInvalidKernelFile",          # CUDA_ERROR_JIT_COMPILER_NOT_FOUND
    222: "hipErrorInvalidKernelFile",          # CUDA_ERROR_UNSUPPORTED_PTX_VERSION
    300: "hipErrorInvalidSource",
    301: "hipErrorFileNotFound",
    302: "hipErrorSharedObjectSymbolNotFound",
    303: "hipErrorSharedObjectInitFailed",
    304: "hipErrorOperatingSystem",
    400: "hipErrorInvalidHandle",             # cudaErrorInvalidResourceHandle
    401: "hipErrorIllegalState",
    500: "hipErrorNotFound",                  # cudaErrorSymbolNotFound
    600: "hipErrorNotReady",
    700: "hipErrorIllegalAddress",
    701: "hipErrorLaunchOutOfResources",
    702: "hipErrorLaunchTimeOut",
    704: "hipErrorPeerAccessAlreadyEnabled",
    705: "hipErrorPeerAccessNotEnabled",
    708: "hipErrorSetOnActiveProcess",        # CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE
    709: "hipErrorContextIsDestroyed",
    710: "hipErrorAssert",
    712: "hipErrorHostMemoryAlreadyRegistered",
    713: "hipErrorHostMemoryNotRegistered",
    714: "hipErrorLaunchFailure",             # HARDWARE_STACK_ERROR
    715: "hipErrorLaunchFailure",             # ILLEGAL_INSTRUCTION
    716: "hipErrorLaunchFailure",             # MISALIGNED_ADDRESS
    717: "hipErrorLaunchFailure",             # INVALID_ADDRESS_SPACE
    718: "hipErrorLaunchFailure",             # INVALID_PC
    719: "hipErrorLaunchFailure",
    720: "hipErrorCooperativeLaunchTooLarge",
    800: "hipErrorNotSupported",              # CUDA_ERROR_NOT_PERMITTED
    801: "hipErrorNotSupported",
    900: "hipErrorStreamCaptureUnsupported",
    901: "hipErrorStreamCaptureInvalidated",
    902: "hipErrorStreamCaptureMerge",
    903: "hipErrorStreamCaptureUnmatched",
    904: "hipErrorStreamCaptureUnjoined",
    905: "hipErrorStreamCaptureIsolation",
    906: "hipErrorStreamCaptureImplicit",
    907: "hipErrorCapturedEvent",
    908: "hipErrorStreamCaptureWrongThread",
    910: "hipErrorGraphExecUpdateFailure",
    999: "hipErrorUnknown",
}

_HIP_BY_CUDA = {k: ht.hipError_t[v] for k, v in CUDA_TO_HIP_NAME.items()}
_UNKNOWN = ht.hipError_t.hipErrorUnknown
SUCCESS = ht.hipError_t.hipSuccess

# hip -> cuda, for the error strings (the first CUDA value that maps to each HIP member).
HIP_TO_CUDA: dict[int, int] = {}
for _cu, _hip in _HIP_BY_CUDA.items():
    HIP_TO_CUDA.setdefault(int(_hip), _cu)


def to_hip(code: Any) -> "ht.hipError_t":
    """The hipError_t member for a CUDA error (CUresult, cudaError_t or int)."""
    return _HIP_BY_CUDA.get(int(code), _UNKNOWN)


def hip_error(res: Any) -> "ht.hipError_t":
    """A CUDA call's result as hipError_t (hipSuccess for 0)."""
    return SUCCESS if int(res) == 0 else to_hip(res)


# NVRTC's results have hiprtc's numbers and names (NVRTC_ERROR_X -> HIPRTC_ERROR_X).
_NVRTC_TO_HIPRTC_NAME = {
    0: "HIPRTC_SUCCESS", 1: "HIPRTC_ERROR_OUT_OF_MEMORY",
    2: "HIPRTC_ERROR_PROGRAM_CREATION_FAILURE", 3: "HIPRTC_ERROR_INVALID_INPUT",
    4: "HIPRTC_ERROR_INVALID_PROGRAM", 5: "HIPRTC_ERROR_INVALID_OPTION",
    6: "HIPRTC_ERROR_COMPILATION", 7: "HIPRTC_ERROR_BUILTIN_OPERATION_FAILURE",
    8: "HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
    9: "HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
    10: "HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID", 11: "HIPRTC_ERROR_INTERNAL_ERROR",
}
_HIPRTC_BY_NVRTC = {k: ht.hiprtcResult[v] for k, v in _NVRTC_TO_HIPRTC_NAME.items()}


def to_hiprtc(code: Any) -> "ht.hiprtcResult":
    """The hiprtcResult member for an nvrtcResult (values above 11 are internal errors)."""
    return _HIPRTC_BY_NVRTC.get(int(code), ht.hiprtcResult.HIPRTC_ERROR_INTERNAL_ERROR)
