"""HIP's message for each ``hipError_t`` (hipGetErrorString), one table for both backends:
the sim answers from it for every code it can return; the cuda backend for the codes whose
CUDA message differs from HIP's, asking CUDA for the rest.
"""
from __future__ import annotations

ERROR_STRINGS: dict[str, str] = {
    "hipSuccess": "no error", "hipErrorInvalidValue": "invalid argument",
    "hipErrorOutOfMemory": "out of memory", "hipErrorInvalidHandle": "invalid resource handle",
    "hipErrorInvalidDevice": "invalid device ordinal",
    "hipErrorInvalidDeviceFunction": "invalid device function",
    "hipErrorInvalidConfiguration": "invalid configuration argument",
    "hipErrorInvalidImage": "device kernel image is invalid",
    "hipErrorNoBinaryForGpu": "no kernel image is available for execution on the device",
    "hipErrorNotFound": "named symbol not found", "hipErrorNotReady": "device not ready",
    "hipErrorIllegalAddress": "an illegal memory access was encountered",
    "hipErrorLaunchTimeOut": "the launch timed out and was terminated",
    "hipErrorHostMemoryAlreadyRegistered": "part or all of the requested memory range is already mapped",
    "hipErrorHostMemoryNotRegistered": "pointer does not correspond to a registered memory region",
    "hipErrorStreamCaptureUnsupported": "operation not permitted when stream is capturing",
    "hipErrorStreamCaptureInvalidated": "operation failed due to a previous error during capture",
    "hipErrorStreamCaptureImplicit": "operation would make the legacy stream depend on a capturing blocking stream",
    "hipErrorStreamCaptureIsolation": "dependency created on uncaptured work in another stream",
    "hipErrorStreamCaptureUnmatched": "capture was not initiated in this stream",
    "hipErrorStreamCaptureWrongThread": "attempt to terminate a thread-local capture sequence from another thread",
    "hipErrorCapturedEvent": "operation not permitted on an event last recorded in a capturing stream",
    "hipErrorIllegalState": "operation not permitted in the current state",
}


def error_string(name: str) -> str:
    """HIP's message for the hipError_t member ``name`` (the name itself when the table has none)."""
    return ERROR_STRINGS.get(name, name)
