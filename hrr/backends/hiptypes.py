"""hip-python's value types, shared by every backend.

Enums are hip-python's own classes when hip-python is importable (so a member an app
passes is literally hip-python's), otherwise identical IntEnums with the same names and
values. Pointers, handles, ``dim3`` and ``CStr`` mirror hip-python's shapes: ``int(x)``
gives the address or handle value.
"""
from __future__ import annotations

import ctypes
import enum
import importlib
import sys
import types
from typing import Any

import numpy as np

_HIP_ERRORS = {
    "hipSuccess": 0, "hipErrorInvalidValue": 1, "hipErrorOutOfMemory": 2,
    "hipErrorNotInitialized": 3, "hipErrorDeinitialized": 4, "hipErrorProfilerDisabled": 5,
    "hipErrorProfilerNotInitialized": 6, "hipErrorProfilerAlreadyStarted": 7,
    "hipErrorProfilerAlreadyStopped": 8, "hipErrorInvalidConfiguration": 9,
    "hipErrorInvalidPitchValue": 12, "hipErrorInvalidSymbol": 13,
    "hipErrorInvalidDevicePointer": 17, "hipErrorInvalidMemcpyDirection": 21,
    "hipErrorInsufficientDriver": 35, "hipErrorMissingConfiguration": 52,
    "hipErrorPriorLaunchFailure": 53, "hipErrorInvalidDeviceFunction": 98,
    "hipErrorNoDevice": 100, "hipErrorInvalidDevice": 101, "hipErrorInvalidImage": 200,
    "hipErrorInvalidContext": 201, "hipErrorContextAlreadyCurrent": 202,
    "hipErrorMapFailed": 205, "hipErrorUnmapFailed": 206, "hipErrorArrayIsMapped": 207,
    "hipErrorAlreadyMapped": 208, "hipErrorNoBinaryForGpu": 209,
    "hipErrorAlreadyAcquired": 210, "hipErrorNotMapped": 211,
    "hipErrorNotMappedAsArray": 212, "hipErrorNotMappedAsPointer": 213,
    "hipErrorECCNotCorrectable": 214, "hipErrorUnsupportedLimit": 215,
    "hipErrorContextAlreadyInUse": 216, "hipErrorPeerAccessUnsupported": 217,
    "hipErrorInvalidKernelFile": 218, "hipErrorInvalidGraphicsContext": 219,
    "hipErrorInvalidSource": 300, "hipErrorFileNotFound": 301,
    "hipErrorSharedObjectSymbolNotFound": 302, "hipErrorSharedObjectInitFailed": 303,
    "hipErrorOperatingSystem": 304, "hipErrorInvalidHandle": 400,
    "hipErrorIllegalState": 401, "hipErrorNotFound": 500, "hipErrorNotReady": 600,
    "hipErrorIllegalAddress": 700, "hipErrorLaunchOutOfResources": 701,
    "hipErrorLaunchTimeOut": 702, "hipErrorPeerAccessAlreadyEnabled": 704,
    "hipErrorPeerAccessNotEnabled": 705, "hipErrorSetOnActiveProcess": 708,
    "hipErrorContextIsDestroyed": 709, "hipErrorAssert": 710,
    "hipErrorHostMemoryAlreadyRegistered": 712, "hipErrorHostMemoryNotRegistered": 713,
    "hipErrorLaunchFailure": 719, "hipErrorCooperativeLaunchTooLarge": 720,
    "hipErrorNotSupported": 801, "hipErrorStreamCaptureUnsupported": 900,
    "hipErrorStreamCaptureInvalidated": 901, "hipErrorStreamCaptureMerge": 902,
    "hipErrorStreamCaptureUnmatched": 903, "hipErrorStreamCaptureUnjoined": 904,
    "hipErrorStreamCaptureIsolation": 905, "hipErrorStreamCaptureImplicit": 906,
    "hipErrorCapturedEvent": 907, "hipErrorStreamCaptureWrongThread": 908,
    "hipErrorGraphExecUpdateFailure": 910, "hipErrorInvalidChannelDescriptor": 911,
    "hipErrorInvalidTexture": 912, "hipErrorInvalidResourceType": 914,
    "hipErrorInvalidResourceConfiguration": 915, "hipErrorStreamDetached": 916,
    "hipErrorUnknown": 999, "hipErrorRuntimeMemory": 1052, "hipErrorRuntimeOther": 1053,
    "hipErrorInvalidClusterSize": 1054, "hipErrorTbd": 1055,
}
_ENUMS = {
    "hipMemcpyKind": {"hipMemcpyHostToHost": 0, "hipMemcpyHostToDevice": 1,
                      "hipMemcpyDeviceToHost": 2, "hipMemcpyDeviceToDevice": 3,
                      "hipMemcpyDefault": 4, "hipMemcpyDeviceToDeviceNoCU": 1024},
    "hipStreamCaptureStatus": {"hipStreamCaptureStatusNone": 0,
                               "hipStreamCaptureStatusActive": 1,
                               "hipStreamCaptureStatusInvalidated": 2},
    "hipStreamCaptureMode": {"hipStreamCaptureModeGlobal": 0,
                             "hipStreamCaptureModeThreadLocal": 1,
                             "hipStreamCaptureModeRelaxed": 2},
    "hipMemoryType": {"hipMemoryTypeUnregistered": 0, "hipMemoryTypeHost": 1,
                      "hipMemoryTypeDevice": 2, "hipMemoryTypeManaged": 3,
                      "hipMemoryTypeArray": 10, "hipMemoryTypeUnified": 11},
}
_HIPRTC_RESULTS = {
    "HIPRTC_SUCCESS": 0, "HIPRTC_ERROR_OUT_OF_MEMORY": 1,
    "HIPRTC_ERROR_PROGRAM_CREATION_FAILURE": 2, "HIPRTC_ERROR_INVALID_INPUT": 3,
    "HIPRTC_ERROR_INVALID_PROGRAM": 4, "HIPRTC_ERROR_INVALID_OPTION": 5,
    "HIPRTC_ERROR_COMPILATION": 6, "HIPRTC_ERROR_BUILTIN_OPERATION_FAILURE": 7,
    "HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION": 8,
    "HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION": 9,
    "HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID": 10, "HIPRTC_ERROR_INTERNAL_ERROR": 11,
    "HIPRTC_ERROR_LINKING": 100,
}


def _hip_python_modules() -> tuple[Any, Any, Any] | None:
    """hip-python's real ``hip``, ``hiprtc`` and ``util`` modules, or None when hip-python
    is absent. 10.x is imported by its own names (``rocm.bindings``); 7.x only lives under
    ``hip``, which is taken only while it is not the package hrr installs there."""
    try:
        from rocm.bindings import hip as real_hip, hiprtc as real_hiprtc, util  # hip-python 10.x
        if getattr(real_hip, "SUPPORTED_APIS", None) is None:
            return real_hip, real_hiprtc, util
    except Exception:  # noqa: BLE001 - any import failure means "not available"
        pass
    try:
        pkg = importlib.import_module("hip")
        if not getattr(pkg, "__path__", None):  # hrr's own package (an empty __path__)
            return None
        real_hip = importlib.import_module("hip.hip")
        real_hiprtc = importlib.import_module("hip.hiprtc")
        importlib.import_module("hip._util.types")
        return real_hip, real_hiprtc, sys.modules["hip._util"]
    except Exception:  # noqa: BLE001
        return None


def real_modules() -> tuple[Any, ...]:
    """hip-python's own ``hip`` and ``hiprtc`` modules (empty when it is not installed)."""
    return () if _real is None else (_real[0], _real[1])


def real_util() -> Any:
    """hip-python's ``util`` package (``util.types``: Pointer, DeviceArray, CStr), or None."""
    return None if _real is None else _real[2]


def _int_enum(name: str, members: Any) -> Any:
    # Typed Any like hip-python's own enums in the other branch, so callers see one type.
    return enum.IntEnum(name, members)


_real = _hip_python_modules()


def _enum_type(name: str, module: int, members: Any) -> Any:
    """hip-python's enum ``name`` (from its hip, 0, or hiprtc, 1, module) when it is
    installed, else an IntEnum with the same members and values."""
    return getattr(_real[module], name) if _real is not None else _int_enum(name, members)


hipError_t = _enum_type("hipError_t", 0, _HIP_ERRORS)
hipMemcpyKind = _enum_type("hipMemcpyKind", 0, _ENUMS["hipMemcpyKind"])
hipStreamCaptureStatus = _enum_type("hipStreamCaptureStatus", 0, _ENUMS["hipStreamCaptureStatus"])
hipStreamCaptureMode = _enum_type("hipStreamCaptureMode", 0, _ENUMS["hipStreamCaptureMode"])
hipMemoryType = _enum_type("hipMemoryType", 0, _ENUMS["hipMemoryType"])
hiprtcResult = _enum_type("hiprtcResult", 1, _HIPRTC_RESULTS)
ENUM_SOURCE = "hip-python" if _real is not None else "hrr"

ENUM_TYPES = {e.__name__: e for e in (hipError_t, hipMemcpyKind, hipStreamCaptureStatus,
                                       hipStreamCaptureMode, hipMemoryType, hiprtcResult)}

# ---- hiprtc: programs and the link API (issue 10) --------------------------------------
# hiprtc's link API takes hipJitInputType / hipJitOption (hiprtcJITInputType and
# hiprtcJIT_option are their hiprtc names). HIP's hiprtc.h also spells the input types
# HIPRTC_JIT_INPUT_* (macros over the hipJitInput* values): hip-python does not, and its
# examples use those names (hiprtcJITInputType.HIPRTC_JIT_INPUT_LLVM_BITCODE), so they are
# added as attributes of the enum class (not members: hip-python's own members stay as
# they are).
_ENUMS["hipJitInputType"] = {
    "hipJitInputCubin": 0, "hipJitInputPtx": 1, "hipJitInputFatBinary": 2, "hipJitInputObject": 3,
    "hipJitInputLibrary": 4, "hipJitInputNvvm": 5, "hipJitNumLegacyInputTypes": 6,
    "hipJitInputLLVMBitcode": 100, "hipJitInputLLVMBundledBitcode": 101,
    "hipJitInputLLVMArchivesOfBundledBitcode": 102, "hipJitInputSpirv": 103, "hipJitNumInputTypes": 10}
_ENUMS["hipJitOption"] = {name: i for i, name in enumerate((
    "hipJitOptionMaxRegisters", "hipJitOptionThreadsPerBlock", "hipJitOptionWallTime",
    "hipJitOptionInfoLogBuffer", "hipJitOptionInfoLogBufferSizeBytes", "hipJitOptionErrorLogBuffer",
    "hipJitOptionErrorLogBufferSizeBytes", "hipJitOptionOptimizationLevel",
    "hipJitOptionTargetFromContext", "hipJitOptionTarget", "hipJitOptionFallbackStrategy",
    "hipJitOptionGenerateDebugInfo", "hipJitOptionLogVerbose", "hipJitOptionGenerateLineInfo",
    "hipJitOptionCacheMode", "hipJitOptionSm3xOpt", "hipJitOptionFastCompile",
    "hipJitOptionGlobalSymbolNames", "hipJitOptionGlobalSymbolAddresses", "hipJitOptionGlobalSymbolCount",
    "hipJitOptionLto", "hipJitOptionFtz", "hipJitOptionPrecDiv", "hipJitOptionPrecSqrt", "hipJitOptionFma",
    "hipJitOptionPositionIndependentCode", "hipJitOptionMinCTAPerSM", "hipJitOptionMaxThreadsPerBlock",
    "hipJitOptionOverrideDirectiveValues", "hipJitOptionNumOptions"))}
_ENUMS["hipJitOption"].update(hipJitOptionIRtoISAOptExt=10000, hipJitOptionIRtoISAOptCountExt=10001)
hipJitInputType = _enum_type("hipJitInputType", 1, _ENUMS["hipJitInputType"])
hipJitOption = _enum_type("hipJitOption", 1, _ENUMS["hipJitOption"])
_HIPRTC_INPUT_NAMES = {
    "HIPRTC_JIT_INPUT_CUBIN": "hipJitInputCubin", "HIPRTC_JIT_INPUT_PTX": "hipJitInputPtx",
    "HIPRTC_JIT_INPUT_FATBINARY": "hipJitInputFatBinary", "HIPRTC_JIT_INPUT_OBJECT": "hipJitInputObject",
    "HIPRTC_JIT_INPUT_LIBRARY": "hipJitInputLibrary", "HIPRTC_JIT_INPUT_NVVM": "hipJitInputNvvm",
    "HIPRTC_JIT_NUM_LEGACY_INPUT_TYPES": "hipJitNumLegacyInputTypes",
    "HIPRTC_JIT_INPUT_LLVM_BITCODE": "hipJitInputLLVMBitcode",
    "HIPRTC_JIT_INPUT_LLVM_BUNDLED_BITCODE": "hipJitInputLLVMBundledBitcode",
    "HIPRTC_JIT_INPUT_LLVM_ARCHIVES_OF_BUNDLED_BITCODE": "hipJitInputLLVMArchivesOfBundledBitcode",
    "HIPRTC_JIT_NUM_INPUT_TYPES": "hipJitNumInputTypes"}
for _legacy, _member in _HIPRTC_INPUT_NAMES.items():
    if _legacy not in hipJitInputType.__members__ and _member in hipJitInputType.__members__:
        setattr(hipJitInputType, _legacy, hipJitInputType[_member])
ENUM_TYPES.update(hipJitInputType=hipJitInputType, hipJitOption=hipJitOption)
# ---- end of hiprtc (issue 10) -----------------------------------------------------------

# Plain int constants, hip-python's values.
CONSTANTS = {
    "HIP_LAUNCH_PARAM_BUFFER_POINTER": 1, "HIP_LAUNCH_PARAM_BUFFER_SIZE": 2,
    "HIP_LAUNCH_PARAM_END": 3,
    "hipHostMallocDefault": 0, "hipHostMallocPortable": 1, "hipHostMallocMapped": 2,
    "hipHostMallocWriteCombined": 4, "hipHostMallocNumaUser": 0x20000000,
    "hipHostMallocCoherent": 0x40000000, "hipHostMallocNonCoherent": -0x80000000,
    "hipHostRegisterDefault": 0, "hipHostRegisterPortable": 1, "hipHostRegisterMapped": 2,
    "hipHostRegisterIoMemory": 4,
    "hipStreamDefault": 0, "hipStreamNonBlocking": 1,
    "hipEventDefault": 0, "hipEventBlockingSync": 1, "hipEventDisableTiming": 2,
    "hipEventInterprocess": 4,
    "hipStreamWaitValueGte": 0, "hipStreamWaitValueEq": 1, "hipStreamWaitValueAnd": 2,
    "hipStreamWaitValueNor": 3,
    "hipGraphInstantiateFlagAutoFreeOnLaunch": 1,
}
HIP_LAUNCH_PARAM_BUFFER_POINTER = 1
HIP_LAUNCH_PARAM_BUFFER_SIZE = 2
HIP_LAUNCH_PARAM_END = 3


class Pointer:
    """An address, as hip-python's ``Pointer``: ``int(p)`` is the address."""

    __slots__ = ("_addr",)

    def __init__(self, addr: int | None = 0) -> None:
        self._addr = int(addr or 0)

    def __int__(self) -> int:
        return self._addr

    __index__ = __int__

    def as_c_void_p(self) -> ctypes.c_void_p:
        return ctypes.c_void_p(self._addr)

    def is_ptr_null(self) -> bool:
        return self._addr == 0

    @classmethod
    def fromObj(cls, obj: Any) -> Any:  # noqa: N802 - hip-python's name
        """hip-python's constructor from anything pointer-like (its conversion rules)."""
        return cls(as_address(obj))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pointer) and other._addr == self._addr

    def __hash__(self) -> int:
        return hash(self._addr)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} 0x{self._addr:x}>"


# hip-python's DeviceArray and the NDBuffer it is (configure, slicing, createRef) live in
# devicearray.py, which builds on Pointer above.
from hrr.backends.devicearray import DeviceArray, NDBuffer  # noqa: E402,F401


class HandleRef(Pointer):
    """``handle.createRef()``: the address of memory holding the handle's value (what a C
    ``hiprtcProgram*`` parameter takes); ``target`` is the handle itself."""

    __slots__ = ("target", "_cell")

    def __init__(self, target: Any) -> None:
        self.target = target
        self._cell = ctypes.c_uint64(int(target))
        super().__init__(ctypes.addressof(self._cell))


class Handle:
    """Base of the opaque handle classes: ``int(h)`` is the handle's value."""

    __slots__ = ("_value",)

    def __init__(self, value: int) -> None:
        self._value = int(value)

    def __int__(self) -> int:
        return self._value

    __index__ = __int__

    @classmethod
    def fromObj(cls, obj: Any) -> Any:  # noqa: N802 - hip-python's name
        """hip-python's constructor from None, an int, ``c_void_p`` or another handle."""
        return cls(as_handle_value(obj))

    def as_c_void_p(self) -> ctypes.c_void_p:
        return ctypes.c_void_p(self._value)

    def is_ptr_null(self) -> bool:
        return self._value == 0

    def createRef(self) -> HandleRef:  # noqa: N802 - hip-python's name
        """A pointer to this handle, as hip-python's ``createRef`` (e.g. for
        ``hiprtcDestroyProgram(prog.createRef())``, whose C parameter is ``hiprtcProgram*``)."""
        return HandleRef(self)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._value == self._value

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._value))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} 0x{self._value:x}>"


class ihipStream_t(Handle):
    __slots__ = ()


class ihipEvent_t(Handle):
    __slots__ = ()


class ihipModule_t(Handle):
    __slots__ = ()


class ihipModuleSymbol_t(Handle):
    __slots__ = ()


class ihipGraph(Handle):
    __slots__ = ()


class hipGraphExec(Handle):
    __slots__ = ()


class hipGraphNode(Handle):
    __slots__ = ()


class hiprtcProgram(Handle):
    __slots__ = ()


class ihiprtcLinkState(Handle):
    __slots__ = ()


HANDLE_TYPES = {c.__name__: c for c in (ihipStream_t, ihipEvent_t, ihipModule_t,
                                        ihipModuleSymbol_t, ihipGraph, hipGraphExec,
                                        hipGraphNode, hiprtcProgram, ihiprtcLinkState)}


class CStr:
    """A C string result, as hip-python's ``CStr``: use ``str(x)`` or ``bytes(x)``."""

    __slots__ = ("_b",)

    def __init__(self, value: bytes | str) -> None:
        self._b = value.encode() if isinstance(value, str) else bytes(value)

    def __bytes__(self) -> bytes:
        return self._b

    def __str__(self) -> str:
        return self._b.decode(errors="replace")

    def __repr__(self) -> str:
        return f"CStr({self._b!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CStr):
            return other._b == self._b
        if isinstance(other, (bytes, str)):
            return self._b == (other.encode() if isinstance(other, str) else other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._b)


class _dim3:
    """hip-python's ``dim3(x=..., y=..., z=...)``, where hip-python is absent: keyword
    construction, ``.x/.y/.z``, indexable and iterable like hip-python's struct."""

    __slots__ = ("x", "y", "z")

    def __init__(self, x: int = 1, y: int = 1, z: int = 1) -> None:
        self.x, self.y, self.z = int(x), int(y), int(z)

    def __getitem__(self, i: int) -> int:
        return (self.x, self.y, self.z)[i]

    def __iter__(self):
        return iter((self.x, self.y, self.z))

    def __repr__(self) -> str:
        return f"dim3(x={self.x}, y={self.y}, z={self.z})"


_dim3.__name__ = _dim3.__qualname__ = "dim3"   # the name the module offers it under
# hip-python's own struct when installed: it needs no HIP runtime.
dim3: Any = _real[0].dim3 if _real is not None else _dim3

# The Python type of hipDeviceProp_t's C strings (``name``, ``gcnArchName``): hip-python
# 10.x gives str, 7.x bytes (its examples do ``b"--offload-arch=" + props.gcnArchName``).
# With no hip-python installed, hrr mirrors 10.x.
HIP_PYTHON_MAJOR = None if _real is None else (10 if _real[0].__name__.startswith("rocm.") else 7)
TEXT_TYPE: type = bytes if HIP_PYTHON_MAJOR == 7 else str
_TEXT_FIELDS = ("name", "gcnArchName")


def as_text(value: Any) -> Any:
    """A C string field in the installed hip-python's Python type (``TEXT_TYPE``)."""
    if isinstance(value, (bytes, bytearray)):
        raw = bytes(value).split(b"\0", 1)[0]
        return raw if TEXT_TYPE is bytes else raw.decode(errors="replace")
    return str(value).encode() if TEXT_TYPE is bytes else str(value)


class _PropsLookAlike:
    """hipDeviceProp_t where hip-python is absent: the fields backends fill in, every other
    field reads as 0 (the C strings as empty strings)."""

    def __init__(self, **fields: Any) -> None:
        for key, value in fields.items():
            self.__dict__[key] = as_text(value) if key in _TEXT_FIELDS else value

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return TEXT_TYPE() if name in _TEXT_FIELDS else 0


def _props_on_real(real_struct: Any) -> type:
    """A subclass of hip-python's own ``hipDeviceProp_t`` (so ``isinstance``, ``PROPERTIES()``
    and every field's default are hip-python's) whose fields a backend sets from Python,
    the C strings and arrays too (hip-python fills those only from C). A field reads what
    was set, else hip-python's default; nothing is written to the C struct."""

    def field_property(field: str) -> property:
        base = getattr(real_struct, field)

        def get(self: Any) -> Any:
            return self.__dict__[field] if field in self.__dict__ else base.__get__(self)

        def put(self: Any, value: Any) -> None:
            if field in _TEXT_FIELDS:
                value = as_text(value)
            elif isinstance(value, tuple):
                value = list(value)     # hip-python's arrays read as lists
            self.__dict__[field] = value
        return property(get, put)

    def __init__(self: Any, **fields: Any) -> None:
        real_struct.__init__(self)
        for key, value in fields.items():
            setattr(self, key, value)

    body: dict[str, Any] = {name: field_property(name) for name in real_struct.PROPERTIES()}
    body.update(__init__=__init__, __doc__="hip-python's hipDeviceProp_t, filled in by an hrr backend.")
    return type("hipDeviceProp_t", (real_struct,), body)


def _device_props_type() -> type:
    if _real is not None:
        try:
            return _props_on_real(_real[0].hipDeviceProp_t)
        except Exception:  # noqa: BLE001 - a release whose struct differs: the look-alike
            pass
    return type("hipDeviceProp_t", (_PropsLookAlike,), {})


hipDeviceProp_t: Any = _device_props_type()


class hipPointerAttribute_t:
    """hipPointerGetAttributes' result."""

    def __init__(self, type: Any = None, device: int = 0, devicePointer: int = 0,
                 hostPointer: int = 0, isManaged: int = 0, allocationFlags: int = 0) -> None:
        # hip-python 7.x programs make an empty one and pass it in to be filled
        type = hipMemoryType.hipMemoryTypeUnregistered if type is None else type
        self.type = type
        self.device = device
        self.devicePointer = Pointer(devicePointer)
        self.hostPointer = Pointer(hostPointer)
        self.isManaged = isManaged
        self.allocationFlags = allocationFlags


# memory and modules (issue 10, cat-memory): managed-memory constants and hipFuncAttributes.
CONSTANTS_MANAGED = {"hipMemAttachGlobal": 1, "hipMemAttachHost": 2, "hipMemAttachSingle": 4,
                     "hipCpuDeviceId": -1, "hipInvalidDeviceId": -2, "hipDeviceMallocDefault": 0,
                     "hipDeviceMallocFinegrained": 1, "hipMallocSignalMemory": 2, "hipOccupancyDefault": 0,
                     "hipCooperativeLaunchMultiDeviceNoPreSync": 1,
                     "hipCooperativeLaunchMultiDeviceNoPostSync": 2}
CONSTANTS.update(CONSTANTS_MANAGED)


class _FuncAttributesLookAlike:
    """hipFuncGetAttributes' result where hip-python is absent (its field names)."""

    def __init__(self) -> None:
        for field in ("binaryVersion", "cacheModeCA", "constSizeBytes", "localSizeBytes",
                      "maxDynamicSharedSizeBytes", "maxThreadsPerBlock", "numRegs",
                      "preferredShmemCarveout", "ptxVersion", "sharedSizeBytes"):
            setattr(self, field, 0)


hipFuncAttributes: Any = (_real[0].hipFuncAttributes if _real is not None and hasattr(_real[0], "hipFuncAttributes")
                          else type("hipFuncAttributes", (_FuncAttributesLookAlike,), {}))


# hip-python's type aliases, exposed on the module beside the classes.
TYPE_ALIASES = {"hipFunction_t": ihipModuleSymbol_t, "hipStream_t": ihipStream_t,
                "hipEvent_t": ihipEvent_t, "hipModule_t": ihipModule_t, "hipGraph_t": ihipGraph,
                "hipGraphExec_t": hipGraphExec, "hiprtcLinkState": ihiprtcLinkState,
                "hiprtcJITInputType": hipJitInputType, "hiprtcJIT_option": hipJitOption}
VALUE_TYPES = (dim3, CStr, Pointer, DeviceArray, hipDeviceProp_t, hipPointerAttribute_t)


# -- device: attributes, versions, limits, peers, contexts (issue 10) -------------------------
# hipDeviceAttribute_t's members in value order, from each run's first value (hip-python 10.x;
# the look-alike where hip-python is absent). Aliases follow.
_ATTRIBUTE_RUNS = {
    0: "CudaCompatibleBegin AccessPolicyMaxWindowSize AsyncEngineCount CanMapHostMemory "
       "CanUseHostPointerForRegisteredMem ClockRate ComputeMode ComputePreemptionSupported ConcurrentKernels "
       "ConcurrentManagedAccess CooperativeLaunch CooperativeMultiDeviceLaunch DeviceOverlap "
       "DirectManagedMemAccessFromHost GlobalL1CacheSupported HostNativeAtomicSupported Integrated "
       "IsMultiGpuBoard KernelExecTimeout L2CacheSize LocalL1CacheSupported Luid LuidDeviceNodeMask "
       "ComputeCapabilityMajor ManagedMemory MaxBlocksPerMultiProcessor MaxBlockDimX MaxBlockDimY MaxBlockDimZ "
       "MaxGridDimX MaxGridDimY MaxGridDimZ MaxSurface1D MaxSurface1DLayered MaxSurface2D MaxSurface2DLayered "
       "MaxSurface3D MaxSurfaceCubemap MaxSurfaceCubemapLayered MaxTexture1DWidth MaxTexture1DLayered "
       "MaxTexture1DLinear MaxTexture1DMipmap MaxTexture2DWidth MaxTexture2DHeight MaxTexture2DGather "
       "MaxTexture2DLayered MaxTexture2DLinear MaxTexture2DMipmap MaxTexture3DWidth MaxTexture3DHeight "
       "MaxTexture3DDepth MaxTexture3DAlt MaxTextureCubemap MaxTextureCubemapLayered MaxThreadsDim "
       "MaxThreadsPerBlock MaxThreadsPerMultiProcessor MaxPitch MemoryBusWidth MemoryClockRate "
       "ComputeCapabilityMinor MultiGpuBoardGroupID MultiprocessorCount Unused1 PageableMemoryAccess "
       "PageableMemoryAccessUsesHostPageTables PciBusId PciDeviceId PciDomainId PersistingL2CacheMaxSize "
       "MaxRegistersPerBlock MaxRegistersPerMultiprocessor ReservedSharedMemPerBlock MaxSharedMemoryPerBlock "
       "SharedMemPerBlockOptin SharedMemPerMultiprocessor SingleToDoublePrecisionPerfRatio "
       "StreamPrioritiesSupported SurfaceAlignment TccDriver TextureAlignment TexturePitchAlignment "
       "TotalConstantMemory TotalGlobalMem UnifiedAddressing Unused2 WarpSize MemoryPoolsSupported "
       "VirtualMemoryManagementSupported HostRegisterSupported MemoryPoolSupportedHandleTypes HostNumaId "
       "DmaBufSupported GPUDirectRDMAWithHipVMMSupported HandleTypeFabricSupported",
    9999: "CudaCompatibleEnd",
    10000: "AmdSpecificBegin Unused3 MaxSharedMemoryPerMultiprocessor Unused4 Unused5 HdpMemFlushCntl "
           "HdpRegFlushCntl CooperativeMultiDeviceUnmatchedFunc CooperativeMultiDeviceUnmatchedGridDim "
           "CooperativeMultiDeviceUnmatchedBlockDim CooperativeMultiDeviceUnmatchedSharedMem IsLargeBar "
           "AsicRevision CanUseStreamWaitValue ImageSupport PhysicalMultiProcessorCount FineGrainSupport "
           "WallClockRate NumberOfXccs MaxAvailableVgprsPerThread PciChipId ExpertSchedMode "
           "MaxDynDataPrefetchRegions",
    19999: "AmdSpecificEnd",
    20000: "VendorSpecificBegin",
}
_ATTRIBUTE_ALIASES = {"EccEnabled": 0, "PciDomainID": 69, "ClockInstructionRate": 10000}
_ENUMS["hipDeviceAttribute_t"] = {
    **{f"hipDeviceAttribute{name}": start + i for start, run in _ATTRIBUTE_RUNS.items()
       for i, name in enumerate(run.split())},
    **{f"hipDeviceAttribute{name}": value for name, value in _ATTRIBUTE_ALIASES.items()}}
_ENUMS["hipLimit_t"] = {"hipLimitStackSize": 0, "hipLimitPrintfFifoSize": 1, "hipLimitMallocHeapSize": 2,
                        "hipExtLimitScratchMin": 4096, "hipExtLimitScratchMax": 4097,
                        "hipExtLimitScratchCurrent": 4098, "hipLimitRange": 4099}
_ENUMS["hipFuncCache_t"] = {"hipFuncCachePreferNone": 0, "hipFuncCachePreferShared": 1,
                            "hipFuncCachePreferL1": 2, "hipFuncCachePreferEqual": 3}
_ENUMS["hipSharedMemConfig"] = {"hipSharedMemBankSizeDefault": 0, "hipSharedMemBankSizeFourByte": 1,
                                "hipSharedMemBankSizeEightByte": 2}
_ENUMS["hipDeviceP2PAttr"] = {"hipDevP2PAttrPerformanceRank": 0, "hipDevP2PAttrAccessSupported": 1,
                              "hipDevP2PAttrNativeAtomicSupported": 2, "hipDevP2PAttrHipArrayAccessSupported": 3}
_DEVICE_ENUMS = ("hipDeviceAttribute_t", "hipLimit_t", "hipFuncCache_t", "hipSharedMemConfig", "hipDeviceP2PAttr")
for _name in _DEVICE_ENUMS:
    ENUM_TYPES[_name] = _enum_type(_name, 0, _ENUMS[_name])
hipDeviceAttribute_t: Any = ENUM_TYPES["hipDeviceAttribute_t"]
hipLimit_t: Any = ENUM_TYPES["hipLimit_t"]
hipFuncCache_t: Any = ENUM_TYPES["hipFuncCache_t"]
hipSharedMemConfig: Any = ENUM_TYPES["hipSharedMemConfig"]
hipDeviceP2PAttr: Any = ENUM_TYPES["hipDeviceP2PAttr"]
CONSTANTS.update({"hipDeviceScheduleAuto": 0, "hipDeviceScheduleSpin": 1, "hipDeviceScheduleYield": 2,
                  "hipDeviceScheduleBlockingSync": 4, "hipDeviceScheduleMask": 7, "hipDeviceMapHost": 8,
                  "hipDeviceLmemResizeToMax": 16})


class ihipCtx_t(Handle):
    """A context handle (hipCtxGetCurrent, hipDevicePrimaryCtxRetain)."""

    __slots__ = ()


HANDLE_TYPES["ihipCtx_t"] = ihipCtx_t  # type: ignore[assignment]  # a dict of handle classes
TYPE_ALIASES["hipCtx_t"] = ihipCtx_t


class _UUIDLookAlike:
    """hipUUID_t where hip-python is absent: ``bytes`` holds the 16 bytes."""

    __slots__ = ("bytes",)

    def __init__(self, raw: bytes) -> None:
        self.bytes = raw

    def __repr__(self) -> str:
        return f"hipUUID_t({self.bytes.hex()})"


_UUID_BUFFERS: dict[bytes, Any] = {}   # one C buffer per distinct UUID (a device's), kept alive


def device_uuid(raw: bytes) -> Any:
    """hipDeviceGetUuid's result: hip-python's own ``hipUUID_t`` over a buffer that holds
    ``raw`` (its ``bytes`` field cannot be set from Python), or a look-alike."""
    raw = bytes(raw)[:16].ljust(16, b"\0")
    if _real is None:
        return _UUIDLookAlike(raw)
    buf = _UUID_BUFFERS.get(raw)
    if buf is None:
        buf = _UUID_BUFFERS[raw] = ctypes.create_string_buffer(raw, 16)
    return _real[0].hipUUID_t.fromObj(ctypes.addressof(buf))


def device_arch(**flags: int) -> Any:
    """hipDeviceProp_t's ``arch`` (hipDeviceArch_t) with ``flags`` set (0 where absent)."""
    if _real is None:
        return types.SimpleNamespace(**flags)
    arch = _real[0].hipDeviceArch_t()
    for name, value in flags.items():
        setattr(arch, name, value)
    return arch


# ---- streams, events and graphs (issue 10): graph node structs and enums -------------
class _NodeParams:
    """A graph-node parameter struct where hip-python is absent: keyword construction
    with hip-python's field names, every field readable and writable."""

    FIELDS: tuple[str, ...] = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        for name, value in zip(self.FIELDS, args, strict=False):
            kwargs.setdefault(name, value)
        for name in self.FIELDS:
            setattr(self, name, kwargs.pop(name, self._default(name)))
        if kwargs:
            raise TypeError(f"{type(self).__name__} has no field {sorted(kwargs)[0]!r}")

    def _default(self, name: str) -> Any:
        return None

    @classmethod
    def PROPERTIES(cls) -> list[str]:  # noqa: N802 - hip-python's name
        return list(cls.FIELDS)


class _hipKernelNodeParams(_NodeParams):
    FIELDS = ("blockDim", "extra", "func", "gridDim", "kernelParams", "sharedMemBytes")

    def _default(self, name: str) -> Any:
        return dim3() if name in ("blockDim", "gridDim") else 0 if name == "sharedMemBytes" else None


class _hipMemsetParams(_NodeParams):
    FIELDS = ("dst", "elementSize", "height", "pitch", "value", "width")

    def _default(self, name: str) -> Any:
        return None if name == "dst" else 0


class _hipHostNodeParams(_NodeParams):
    FIELDS = ("fn", "userData")


class _hipGraphInstantiateParams(_NodeParams):
    FIELDS = ("errNode_out", "flags", "result_out", "uploadStream")

    def _default(self, name: str) -> Any:
        return 0 if name in ("flags", "result_out") else None


for _cls, _name in ((_hipKernelNodeParams, "hipKernelNodeParams"), (_hipMemsetParams, "hipMemsetParams"),
                    (_hipHostNodeParams, "hipHostNodeParams"),
                    (_hipGraphInstantiateParams, "hipGraphInstantiateParams")):
    _cls.__name__ = _cls.__qualname__ = _name
# hip-python's own structs when installed (they need no HIP runtime and take hrr's handles).
hipKernelNodeParams: Any = _real[0].hipKernelNodeParams if _real is not None else _hipKernelNodeParams
hipMemsetParams: Any = _real[0].hipMemsetParams if _real is not None else _hipMemsetParams
hipHostNodeParams: Any = _real[0].hipHostNodeParams if _real is not None else _hipHostNodeParams
hipGraphInstantiateParams: Any = (_real[0].hipGraphInstantiateParams if _real is not None
                                  else _hipGraphInstantiateParams)
ReplayInstantiateParams = _hipGraphInstantiateParams
# What replay hands a backend for a kernel node: always the look-alike (its fields take
# Python objects: a kernarg ``extra`` array, a replay function handle).
ReplayKernelNodeParams = _hipKernelNodeParams
ReplayMemsetParams = _hipMemsetParams
GRAPH_STRUCTS = (hipKernelNodeParams, hipMemsetParams, hipHostNodeParams, hipGraphInstantiateParams)
_ENUMS["hipGraphNodeType"] = {f"hipGraphNodeType{k}": v for v, k in enumerate((
    "Kernel", "Memcpy", "Memset", "Host", "Graph", "Empty", "WaitEvent", "EventRecord", "ExtSemaphoreSignal",
    "ExtSemaphoreWait", "MemAlloc", "MemFree", "MemcpyFromSymbol", "MemcpyToSymbol", "BatchMemOp", "Count"))}
_ENUMS["hipGraphExecUpdateResult"] = {f"hipGraphExecUpdate{k}": v for v, k in enumerate((
    "Success", "Error", "ErrorTopologyChanged", "ErrorNodeTypeChanged", "ErrorFunctionChanged",
    "ErrorParametersChanged", "ErrorNotSupported", "ErrorUnsupportedFunctionChange"))}
hipGraphNodeType = _enum_type("hipGraphNodeType", 0, _ENUMS["hipGraphNodeType"])
hipGraphExecUpdateResult = _enum_type("hipGraphExecUpdateResult", 0, _ENUMS["hipGraphExecUpdateResult"])
ENUM_TYPES.update({e.__name__: e for e in (hipGraphNodeType, hipGraphExecUpdateResult)})


def _release7_fewer_params(mod: types.ModuleType, done: dict[str, Any]) -> dict[str, Any]:
    """hip-python 7.x's forms of calls whose 7.x binding lacks some of 10.x's parameters
    (e.g. ``hipGraphAddEmptyNode(graph, numDependencies)``: no dependency array): 7.x's
    parameters, the missing ones passed as None."""
    import inspect
    forms: dict[str, Any] = {}
    real = _real[0] if _real is not None else None
    for name, fn in vars(mod).items():
        real_fn = getattr(real, name, None)
        if name in done or not name.startswith("hip") or not callable(fn) or real_fn is None:
            continue
        try:
            ours, theirs = list(inspect.signature(fn).parameters), inspect.signature(real_fn)
        except (TypeError, ValueError):
            continue
        kept = list(theirs.parameters)
        if kept == ours or not set(kept) < set(ours) or [p for p in ours if p in kept] != kept:
            continue

        def form(*args: Any, _fn: Any = fn, _kept: list = kept, **kwargs: Any) -> Any:
            kwargs.update(zip(_kept, args, strict=False))
            return _fn(**kwargs)
        form.__name__ = form.__qualname__ = name
        form.__signature__ = theirs  # type: ignore[attr-defined]
        forms[name] = form
    get_params = getattr(mod, "hipGraphKernelNodeGetParams", None)
    if get_params is not None and "hipGraphKernelNodeGetParams" not in done:
        def hipGraphKernelNodeGetParams(node: Any, pNodeParams: Any) -> tuple:  # noqa: N802,N803
            err, params = get_params(node)
            if params is not None and pNodeParams is not None:
                for field in ("gridDim", "blockDim"):
                    dst, src = getattr(pNodeParams, field), getattr(params, field)
                    dst.x, dst.y, dst.z = src.x, src.y, src.z
                for field in ("func", "sharedMemBytes", "kernelParams", "extra"):
                    setattr(pNodeParams, field, getattr(params, field))
            return (err,)
        forms["hipGraphKernelNodeGetParams"] = hipGraphKernelNodeGetParams
    return forms
TYPE_ALIASES["hipGraphNode_t"] = hipGraphNode
CONSTANTS.update({"hipGraphInstantiateFlagUpload": 2, "hipGraphInstantiateFlagDeviceLaunch": 4,
                  "hipGraphInstantiateFlagUseNodePriority": 8})
# ---- end of streams, events and graphs (issue 10) ----------------------------------------


def _fill(dst: Any, src: Any, fields: Any) -> None:
    """Copy ``fields`` of ``src`` into the struct ``dst`` a 7.x program passed in; a field
    hip-python keeps read-only goes into the instance (hrr's subclass reads it from there)."""
    for field in fields:
        value = getattr(src, field)
        try:
            setattr(dst, field, value)
        except (AttributeError, TypeError, ValueError):
            if hasattr(dst, "__dict__"):
                dst.__dict__[field] = value


def _release7_forms(mod: types.ModuleType) -> dict[str, Any]:
    """hip-python 7.x's forms of the calls whose output struct 10.x moved into the result,
    over the module's 10.x functions (so capture records the 10.x row underneath)."""
    forms: dict[str, Any] = {}
    props_of = getattr(mod, "hipGetDeviceProperties", None)
    if props_of is not None:
        def hipGetDeviceProperties(prop: Any, deviceId: Any) -> tuple:  # noqa: N802
            err, props = props_of(deviceId)
            if props is not None and prop is not None:
                names = type(props).PROPERTIES() if hasattr(type(props), "PROPERTIES") else vars(props)
                _fill(prop, props, names)
            return (err,)
        forms["hipGetDeviceProperties"] = hipGetDeviceProperties
    attrs_of = getattr(mod, "hipPointerGetAttributes", None)
    if attrs_of is not None:
        def hipPointerGetAttributes(attributes: Any, ptr: Any) -> tuple:  # noqa: N802
            err, attrs = attrs_of(ptr)
            if attrs is not None and attributes is not None:
                _fill(attributes, attrs, ("type", "device", "devicePointer", "hostPointer",
                                          "isManaged", "allocationFlags"))
            return (err,)
        forms["hipPointerGetAttributes"] = hipPointerGetAttributes
    instantiate = getattr(mod, "hipGraphInstantiate", None)
    if instantiate is not None:
        def hipGraphInstantiate(graph: Any, pLogBuffer: Any, bufferSize: Any) -> tuple:  # noqa: N802,N803
            err, graph_exec, error_node, log = instantiate(graph, bufferSize)
            if pLogBuffer is not None and log is not None and int(bufferSize) > 0:
                text = bytes(log)[:int(bufferSize) - 1] + b"\0"
                ctypes.memmove(as_address(pLogBuffer), text, len(text))
            return (err, graph_exec, error_node)
        forms["hipGraphInstantiate"] = hipGraphInstantiate
    func_attrs_of = getattr(mod, "hipFuncGetAttributes", None)
    if func_attrs_of is not None:
        def hipFuncGetAttributes(attr: Any, func: Any) -> tuple:  # noqa: N802
            err, attrs = func_attrs_of(func)
            if attrs is not None and attr is not None:
                _fill(attr, attrs, ("binaryVersion", "cacheModeCA", "constSizeBytes", "localSizeBytes",
                                    "maxDynamicSharedSizeBytes", "maxThreadsPerBlock", "numRegs",
                                    "preferredShmemCarveout", "ptxVersion", "sharedSizeBytes"))
            return (err,)
        forms["hipFuncGetAttributes"] = hipFuncGetAttributes
    forms.update(_release7_fewer_params(mod, forms))
    for fn in forms.values():
        fn.__doc__ = f"hip-python 7.x's {fn.__name__}, over hrr's 10.x call."
    return forms


def release_module(mod: types.ModuleType) -> types.ModuleType:
    """``mod`` as the installed hip-python release spells it: itself for 10.x (or none),
    a copy with 7.x's forms of the calls that changed when 7.x is installed."""
    if HIP_PYTHON_MAJOR != 7:
        return mod
    out = types.ModuleType(mod.__name__, mod.__doc__)
    out.__dict__.update({k: v for k, v in vars(mod).items() if k not in ("__name__", "__doc__")})
    out.__dict__.update(_release7_forms(mod))
    return out


COVERAGE_DOC = "docs/api-coverage.md"


class UncataloguedCall(AttributeError):
    """A HIP name the backend's module does not offer: hrr records only catalogued calls.
    An AttributeError, so ``hasattr`` and ``getattr(mod, name, default)`` keep working."""

    def __init__(self, module: str, name: str, backend: str) -> None:
        super().__init__(
            f"{module}.{name} is not offered by hrr's {backend} backend: hrr records and replays "
            f"only the HIP calls its catalogue lists ({COVERAGE_DOC} lists them, and the "
            f"hip-python functions not covered yet)", name=name, obj=None)
        self.function, self.backend = name, backend


def _unknown_name(module: str, backend: str, real: Any, full_name: str) -> Any:
    """The module ``__getattr__`` (PEP 562), asked only for names the module lacks: a HIP
    name (hip-python's module has it, or it starts with ``hip``) raises UncataloguedCall,
    anything else the plain AttributeError."""
    def __getattr__(name: str) -> Any:
        if name.startswith("hip") or (real is not None and hasattr(real, name)
                                      and not name.startswith("_")):
            raise UncataloguedCall(module, name, backend)
        raise AttributeError(f"module {full_name!r} has no attribute {name!r}", name=name, obj=None)
    return __getattr__


def surface_module(name: str, doc: str, functions: dict[str, Any], backend: str | None = None) -> types.ModuleType:
    """A module with hip-python's surface: ``functions`` plus every enum (hip-python's whole
    set of enum classes when it is installed; members of the enums hrr uses also at module
    level), constant, value type, handle class and
    alias. Backends build their ``hip`` and ``hiprtc`` with it. Any other HIP name raises
    ``UncataloguedCall`` naming ``backend`` (default: the package above ``name``)."""
    mod = types.ModuleType(name, doc)
    leaf = name.rsplit(".", 1)[-1]
    backend = backend or (name.split(".")[-2] if name.count(".") else name)
    mod.__dict__["__getattr__"] = _unknown_name(
        leaf, backend, None if _real is None else (_real[1] if leaf == "hiprtc" else _real[0]), name)
    if _real is not None:  # every enum class of hip-python's module, hip-python's own object
        real = _real[1] if name.endswith("hiprtc") else _real[0]
        mod.__dict__.update({k: v for k, v in vars(real).items() if not k.startswith("_")
                             and isinstance(v, type) and issubclass(v, enum.Enum)})
    for enum_type in ENUM_TYPES.values():
        setattr(mod, enum_type.__name__, enum_type)
        for member in enum_type:
            setattr(mod, member.name, member)
    mod.__dict__.update(CONSTANTS)
    for cls in (*VALUE_TYPES, *GRAPH_STRUCTS, *POOL_STRUCTS, *HANDLE_TYPES.values()):
        setattr(mod, cls.__name__, cls)
    mod.__dict__.update(TYPE_ALIASES)
    mod.__dict__.update(functions)
    mod.__dict__["SUPPORTED_APIS"] = tuple(functions)
    return mod


# hip-python's Pointer base class (its handles and DeviceArray derive from it), accepted
# as an argument by its address; a class nothing is an instance of when it is absent.
_REAL_POINTER: Any = _real[2].types.Pointer if _real is not None else type("_NoPointer", (), {})


class PointerConversionError(TypeError):
    """An argument that hip-python's pointer rules do not accept."""


def buffer_address(obj: Any) -> int:
    """The data address of a C-contiguous buffer-protocol object (read-only ones too)."""
    if isinstance(obj, np.ndarray):
        return obj.__array_interface__["data"][0]
    mv = memoryview(obj)
    if mv.nbytes == 0:
        return 0
    if not mv.c_contiguous:
        raise PointerConversionError("a buffer argument must be C-contiguous")
    return np.frombuffer(mv.cast("B") if mv.ndim != 1 or mv.format != "B" else mv,
                         dtype=np.uint8).__array_interface__["data"][0]


def as_address(obj: Any) -> int:
    """Convert a pointer-like argument to an address, with hip-python's rules:
    None, ``c_void_p``, Pointer, buffer, ``__cuda_array_interface__``, int, ``as_c_void_p``."""
    if obj is None:
        return 0
    if type(obj) is int:
        return obj
    if isinstance(obj, Pointer):
        return obj._addr
    if isinstance(obj, ctypes.c_void_p):
        return obj.value or 0
    if isinstance(obj, _REAL_POINTER):  # hip-python's own Pointer/DeviceArray/handles
        return int(obj)
    try:
        memoryview(obj)
    except TypeError:
        pass
    else:
        return buffer_address(obj)
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        return int(cai["data"][0])
    if isinstance(obj, int):
        return int(obj)
    conv = getattr(obj, "as_c_void_p", None)
    if conv is not None:
        return conv().value or 0
    raise PointerConversionError(f"unsupported input type {type(obj).__name__} for a pointer argument")


def as_handle_value(obj: Any) -> int:
    """A stream, event or other handle argument as an int (None and 0 are the null handle)."""
    if obj is None:
        return 0
    if isinstance(obj, (Handle, int)):
        return int(obj)
    if isinstance(obj, ctypes.c_void_p):
        return obj.value or 0
    if isinstance(obj, HandleRef):  # createRef(): names the handle it points to
        return int(obj.target)
    if isinstance(obj, _REAL_POINTER):  # a handle made by hip-python's own classes
        return int(obj)
    raise PointerConversionError(f"unsupported input type {type(obj).__name__} for a handle argument")


def buffer_nbytes(obj: Any) -> int | None:
    """The size in bytes of a buffer-protocol object, or None when it is not one."""
    try:
        return memoryview(obj).nbytes
    except TypeError:
        return None


def address_or_zero(obj: Any) -> int:
    """``as_address``, with 0 for an argument that is not pointer-like (recording must
    never fail where the call itself reports the error)."""
    try:
        return as_address(obj)
    except PointerConversionError:
        return 0


def handle_or_zero(obj: Any) -> int:
    """``as_handle_value``, with 0 for an argument that is not a handle."""
    try:
        return as_handle_value(obj)
    except PointerConversionError:
        return 0


# ---- memory pools and CU-masked streams -------------------------------------------------
# Stream-ordered allocation (hipMemPool*, hipMallocFromPoolAsync): the pool handle, the
# enums a row or a pool's properties name, and hipMemPoolProps / hipMemLocation
# (hip-python's own structs when installed; look-alikes with its field names otherwise).
_ENUMS["hipMemPoolAttr"] = {
    "hipMemPoolReuseFollowEventDependencies": 1, "hipMemPoolReuseAllowOpportunistic": 2,
    "hipMemPoolReuseAllowInternalDependencies": 3, "hipMemPoolAttrReleaseThreshold": 4,
    "hipMemPoolAttrReservedMemCurrent": 5, "hipMemPoolAttrReservedMemHigh": 6,
    "hipMemPoolAttrUsedMemCurrent": 7, "hipMemPoolAttrUsedMemHigh": 8}
_ENUMS["hipMemAllocationType"] = {"hipMemAllocationTypeInvalid": 0, "hipMemAllocationTypePinned": 1,
                                  "hipMemAllocationTypeManaged": 2, "hipMemAllocationTypeUncached": 0x40000000,
                                  "hipMemAllocationTypeMax": 0x7FFFFFFF}
_ENUMS["hipMemLocationType"] = {"hipMemLocationTypeInvalid": 0, "hipMemLocationTypeDevice": 1,
                                "hipMemLocationTypeHost": 2, "hipMemLocationTypeHostNuma": 3,
                                "hipMemLocationTypeHostNumaCurrent": 4}
_ENUMS["hipMemAllocationHandleType"] = {"hipMemHandleTypeNone": 0, "hipMemHandleTypePosixFileDescriptor": 1,
                                        "hipMemHandleTypeWin32": 2, "hipMemHandleTypeWin32Kmt": 4,
                                        "hipMemHandleTypeFabric": 8}
for _name in ("hipMemPoolAttr", "hipMemAllocationType", "hipMemLocationType", "hipMemAllocationHandleType"):
    ENUM_TYPES[_name] = _enum_type(_name, 0, _ENUMS[_name])
hipMemPoolAttr: Any = ENUM_TYPES["hipMemPoolAttr"]


class ihipMemPoolHandle_t(Handle):
    """A memory pool handle (hipDeviceGetDefaultMemPool, hipMemPoolCreate)."""

    __slots__ = ()


HANDLE_TYPES["ihipMemPoolHandle_t"] = ihipMemPoolHandle_t  # type: ignore[assignment]
TYPE_ALIASES["hipMemPool_t"] = ihipMemPoolHandle_t


class _hipMemLocation(_NodeParams):
    FIELDS = ("id", "type")

    def _default(self, name: str) -> Any:
        return 0


class _hipMemPoolProps(_NodeParams):
    FIELDS = ("allocType", "handleTypes", "location", "maxSize", "win32SecurityAttributes")

    def _default(self, name: str) -> Any:
        return _hipMemLocation() if name == "location" else None if name == "win32SecurityAttributes" else 0


_hipMemLocation.__name__ = _hipMemLocation.__qualname__ = "hipMemLocation"
_hipMemPoolProps.__name__ = _hipMemPoolProps.__qualname__ = "hipMemPoolProps"
hipMemLocation: Any = _real[0].hipMemLocation if _real is not None else _hipMemLocation
hipMemPoolProps: Any = _real[0].hipMemPoolProps if _real is not None else _hipMemPoolProps
# What replay hands a backend for hipMemPoolCreate: the look-alike (a keyword-built location).
ReplayMemPoolProps = _hipMemPoolProps
ReplayMemLocation = _hipMemLocation
POOL_STRUCTS = (hipMemLocation, hipMemPoolProps)
# ---- end of memory pools ----------------------------------------------------------------
