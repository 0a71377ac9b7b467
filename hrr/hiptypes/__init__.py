"""hip-python's value types, shared by every backend, capture and replay: the ground floor
hrr's roles, events and backends build on.

Enums are hip-python's own classes when hip-python is importable, otherwise identical
IntEnums (``enums``); ``Pointer``, the handle classes and ``CStr`` mirror hip-python's shapes,
``int(x)`` giving the address or handle value, with hip-python's conversion rules
(``pointers``); ``DeviceArray`` (``devicearray``); hip-python's structs and type aliases
(``structs``); the releases installed (``installed``); ``surface_module``, which gives a
backend's module every name of hip-python's (``mirror``).
"""
from hrr.hiptypes.devicearray import (DeviceArray, NDBuffer)
from hrr.hiptypes.enums import (CONSTANTS, CONSTANTS_MANAGED, ENUM_SOURCE, ENUM_TYPES,
                                HIP_LAUNCH_PARAM_BUFFER_POINTER, HIP_LAUNCH_PARAM_BUFFER_SIZE, HIP_LAUNCH_PARAM_END,
                                hipDeviceAttribute_t, hipDeviceP2PAttr, hipError_t, hipFuncCache_t,
                                hipGraphExecUpdateResult, hipGraphNodeType, hipJitInputType, hipJitOption, hipLimit_t,
                                hipMemcpyKind, hipMemoryType, hipMemPoolAttr, hiprtcResult, hipSharedMemConfig,
                                hipStreamCaptureMode, hipStreamCaptureStatus)
from hrr.hiptypes.installed import (CLASSIC, HIP_PYTHON_MAJOR, PRIMARY, RELEASES, TEXT_TYPE, Release, real_modules,
                                    real_util)
from hrr.hiptypes.mirror import (COVERAGE_COMMAND, UncataloguedCall, is_uncatalogued, mirrored_names, surface_module,
                                 uncatalogued_function)
from hrr.hiptypes.pointers import (HANDLE_TYPES, CStr, Handle, HandleRef, Pointer, PointerConversionError,
                                   address_or_zero, as_address, as_handle_value, buffer_address, buffer_nbytes,
                                   handle_or_zero, hipGraphExec, hipGraphNode, hiprtcProgram, ihipCtx_t, ihipEvent_t,
                                   ihipGraph, ihipMemPoolHandle_t, ihipModule_t, ihipModuleSymbol_t, ihiprtcLinkState,
                                   ihipStream_t, write_into_read_only)
from hrr.hiptypes.structs import (GRAPH_STRUCTS, POOL_STRUCTS, TYPE_ALIASES, VALUE_TYPES, ReplayInstantiateParams,
                                  ReplayKernelNodeParams, ReplayMemLocation, ReplayMemPoolProps, ReplayMemsetParams,
                                  as_text, device_arch, device_uuid, dim3, hipDeviceProp_t, hipFuncAttributes,
                                  hipGraphInstantiateParams, hipHostNodeParams, hipKernelNodeParams, hipMemLocation,
                                  hipMemPoolProps, hipMemsetParams, hipPointerAttribute_t)
# read by the tests that hold hrr's fallbacks against hip-python's own
from hrr.hiptypes.enums import _ENUMS, _HIP_ERRORS, _HIPRTC_RESULTS  # noqa: F401
from hrr.hiptypes.installed import _real  # noqa: F401
from hrr.hiptypes.structs import _dim3  # noqa: F401

__all__ = ["DeviceArray", "NDBuffer", "CONSTANTS", "CONSTANTS_MANAGED", "ENUM_SOURCE", "ENUM_TYPES",
           "HIP_LAUNCH_PARAM_BUFFER_POINTER", "HIP_LAUNCH_PARAM_BUFFER_SIZE", "HIP_LAUNCH_PARAM_END",
           "hipDeviceAttribute_t", "hipDeviceP2PAttr", "hipError_t", "hipFuncCache_t", "hipGraphExecUpdateResult",
           "hipGraphNodeType", "hipJitInputType", "hipJitOption", "hipLimit_t", "hipMemcpyKind", "hipMemoryType",
           "hipMemPoolAttr", "hiprtcResult", "hipSharedMemConfig", "hipStreamCaptureMode", "hipStreamCaptureStatus",
           "CLASSIC", "HIP_PYTHON_MAJOR", "PRIMARY", "RELEASES", "TEXT_TYPE", "Release", "real_modules", "real_util",
           "COVERAGE_COMMAND", "UncataloguedCall", "is_uncatalogued", "mirrored_names", "surface_module",
           "uncatalogued_function", "HANDLE_TYPES", "CStr", "Handle", "HandleRef", "Pointer",
           "PointerConversionError", "address_or_zero", "as_address", "as_handle_value", "buffer_address",
           "buffer_nbytes", "handle_or_zero", "hipGraphExec", "hipGraphNode", "hiprtcProgram", "ihipCtx_t",
           "ihipEvent_t", "ihipGraph", "ihipMemPoolHandle_t", "ihipModule_t", "ihipModuleSymbol_t",
           "ihiprtcLinkState", "ihipStream_t", "write_into_read_only", "GRAPH_STRUCTS", "POOL_STRUCTS",
           "TYPE_ALIASES", "VALUE_TYPES",
           "ReplayInstantiateParams", "ReplayKernelNodeParams", "ReplayMemLocation", "ReplayMemPoolProps",
           "ReplayMemsetParams", "as_text", "device_arch", "device_uuid", "dim3", "hipDeviceProp_t",
           "hipFuncAttributes", "hipGraphInstantiateParams", "hipHostNodeParams", "hipKernelNodeParams",
           "hipMemLocation", "hipMemPoolProps", "hipMemsetParams", "hipPointerAttribute_t"]
# The math libraries' enums join ENUM_TYPES once the HIP ones are there.
from hrr.hiptypes import mathlibs  # noqa: E402,F401
